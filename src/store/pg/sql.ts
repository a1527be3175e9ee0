/** SQL fragments the repositories share. */

/** A timestamptz column as the API's ISO 8601 UTC text with milliseconds (`2026-01-02T03:04:05.678Z`). */
export const isoUtc = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
