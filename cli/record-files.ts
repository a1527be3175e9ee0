/**
 * Streams the records of a CSV or JSONL file with the line each starts on, so a bad record can be
 * named by its line. Memory stays bounded by one record, whatever the file's size.
 *
 * CSV (RFC 4180): a header line names the columns; fields are comma-separated, a field with a
 * comma, quote or line break is quoted ("a ""quoted"" word"), CRLF or LF line ends, an optional
 * UTF-8 byte-order mark. An empty field is an absent value. JSONL: one JSON object per line; blank
 * lines are skipped.
 */
import { createReadStream } from 'node:fs';
import type { ImportRecord } from '../src/domain/history-import.js';

export const FILE_FORMATS = ['csv', 'jsonl', 'parquet'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];

/** The format a file's extension names, or null. */
export function formatFromExtension(file: string): FileFormat | null {
  const m = /\.(csv|jsonl|ndjson|parquet)$/i.exec(file);
  if (!m) return null;
  const ext = m[1]!.toLowerCase();
  return ext === 'ndjson' ? 'jsonl' : (ext as FileFormat);
}

export type FileEvent =
  /** The columns: a CSV header, or the keys of a JSONL file's first object. */
  | { type: 'columns'; line: number; columns: string[] }
  | { type: 'record'; line: number; record: ImportRecord }
  /** A line that is no record at all (bad JSON, wrong field count). */
  | { type: 'bad'; line: number; problem: string };

/** Raw chunks of a file, reporting the bytes read so far. */
async function* chunks(file: string, onBytes: (n: number) => void): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: false });
  let bytes = 0;
  for await (const buf of createReadStream(file, { highWaterMark: 1 << 20 })) {
    bytes += (buf as Buffer).length;
    onBytes(bytes);
    yield decoder.decode(buf as Buffer, { stream: true });
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}

export async function* jsonlEvents(file: string, onBytes: (n: number) => void = () => undefined): AsyncGenerator<FileEvent> {
  let rest = '';
  let line = 0;
  let columnsSent = false;
  const parse = function* (text: string): Generator<FileEvent> {
    line++;
    const t = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (t.trim() === '') return;
    let v: unknown;
    try {
      v = JSON.parse(line === 1 && t.charCodeAt(0) === 0xfeff ? t.slice(1) : t);
    } catch (err) {
      yield { type: 'bad', line, problem: `not JSON (${(err as Error).message})` };
      return;
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v)) {
      yield { type: 'bad', line, problem: 'not a JSON object' };
      return;
    }
    if (!columnsSent) {
      columnsSent = true;
      yield { type: 'columns', line, columns: Object.keys(v) };
    }
    yield { type: 'record', line, record: v as ImportRecord };
  };
  for await (const chunk of chunks(file, onBytes)) {
    rest += chunk;
    let nl: number;
    while ((nl = rest.indexOf('\n')) !== -1) {
      yield* parse(rest.slice(0, nl));
      rest = rest.slice(nl + 1);
    }
  }
  if (rest !== '') yield* parse(rest);
}

export async function* csvEvents(file: string, onBytes: (n: number) => void = () => undefined): AsyncGenerator<FileEvent> {
  let header: string[] | null = null;
  let fields: string[] = [];
  let field = '';
  let quoted = false; // inside a quoted field
  let quoteSeen = false; // a quote inside a quoted field: the end of it, or the first of ""
  let wasQuoted = false;
  let line = 1; // the line being read
  let start = 1; // the line the current record started on
  let first = true;

  const endField = () => {
    fields.push(field);
    field = '';
    wasQuoted = false;
  };
  const endRecord = function* (): Generator<FileEvent> {
    endField();
    const f = fields;
    fields = [];
    const at = start;
    if (f.length === 1 && f[0] === '') return; // a blank line
    if (header === null) {
      header = f.map((h) => h.trim());
      yield { type: 'columns', line: at, columns: header };
      return;
    }
    if (f.length !== header.length) {
      yield { type: 'bad', line: at, problem: `${f.length} fields where the header names ${header.length}` };
      return;
    }
    const record: Record<string, string> = {};
    for (let i = 0; i < header.length; i++) if (f[i] !== '') record[header[i]!] = f[i]!;
    yield { type: 'record', line: at, record };
  };

  for await (let chunk of chunks(file, onBytes)) {
    if (first) {
      first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (quoted) {
        if (quoteSeen) {
          quoteSeen = false;
          if (c === '"') {
            field += '"';
            continue;
          }
          quoted = false; // the closing quote; c is handled below as outside quotes
        } else if (c === '"') {
          quoteSeen = true;
          continue;
        } else {
          if (c === '\n') line++;
          field += c;
          continue;
        }
      }
      if (c === ',') endField();
      else if (c === '\n') {
        if (field.endsWith('\r') && !wasQuoted) field = field.slice(0, -1);
        yield* endRecord();
        line++;
        start = line;
      } else if (c === '"' && field === '' && !wasQuoted) {
        quoted = true;
        wasQuoted = true;
      } else if (c !== '\r' || !wasQuoted) field += c;
    }
  }
  if (quoted && !quoteSeen) {
    yield { type: 'bad', line: start, problem: 'a quoted field is never closed' };
    return;
  }
  if (field !== '' || fields.length > 0) yield* endRecord();
}

/** The events of a CSV or JSONL file. */
export function fileEvents(file: string, format: 'csv' | 'jsonl', onBytes?: (n: number) => void): AsyncGenerator<FileEvent> {
  return format === 'csv' ? csvEvents(file, onBytes) : jsonlEvents(file, onBytes);
}
