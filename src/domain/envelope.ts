/** The success envelope of every read (spec "Conventions"). */
export const API_VERSION = 'v1';

export interface Pagination {
  next_cursor: string | null;
  has_more: boolean;
  limit: number;
}

export interface Envelope<T> {
  data: T;
  pagination?: Pagination;
  meta: { timestamp: string; api_version: string; [extra: string]: unknown };
}

export function envelope<T>(data: T, nowMs: number, extra?: { pagination?: Pagination; meta?: Record<string, unknown> }): Envelope<T> {
  return {
    data,
    ...(extra?.pagination ? { pagination: extra.pagination } : {}),
    meta: { timestamp: new Date(nowMs).toISOString(), api_version: API_VERSION, ...(extra?.meta ?? {}) },
  };
}
