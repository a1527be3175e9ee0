import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { csvEvents, formatFromExtension, jsonlEvents, type FileEvent } from '../../../cli/record-files.js';

const dir = mkdtempSync(path.join(tmpdir(), 'flow-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};
const all = async (g: AsyncGenerator<FileEvent>) => {
  const out: FileEvent[] = [];
  for await (const e of g) out.push(e);
  return out;
};

describe('csvEvents', () => {
  it('reads quoted commas, doubled quotes and line breaks inside quotes, CRLF, a BOM; names each record by its first line', async () => {
    const p = write('a.csv', '\ufeffa,b,c\r\n1,"x,y",3\r\n"multi\r\nline","say ""hi""",\r\n\r\n4,5,6');
    expect(await all(csvEvents(p))).toEqual([
      { type: 'columns', line: 1, columns: ['a', 'b', 'c'] },
      { type: 'record', line: 2, record: { a: '1', b: 'x,y', c: '3' } },
      { type: 'record', line: 3, record: { a: 'multi\r\nline', b: 'say "hi"' } },
      { type: 'record', line: 6, record: { a: '4', b: '5', c: '6' } },
    ]);
  });
  it('reports a record with the wrong field count and an unclosed quote by line', async () => {
    expect(await all(csvEvents(write('b.csv', 'a,b\n1\n2,3\n"open,4\n')))).toEqual([
      { type: 'columns', line: 1, columns: ['a', 'b'] },
      { type: 'bad', line: 2, problem: '1 fields where the header names 2' },
      { type: 'record', line: 3, record: { a: '2', b: '3' } },
      { type: 'bad', line: 4, problem: 'a quoted field is never closed' },
    ]);
  });
  it('is the same whatever the chunk boundaries (a 3 MB file)', async () => {
    const rows = Array.from({ length: 60_000 }, (_, i) => `${i},"v ""${i}"", end",x${i}`);
    const evs = await all(csvEvents(write('c.csv', ['n,q,z', ...rows].join('\n'))));
    expect(evs).toHaveLength(60_001);
    expect(evs[60_000]).toEqual({ type: 'record', line: 60_001, record: { n: '59999', q: 'v "59999", end', z: 'x59999' } });
  });
});

describe('jsonlEvents', () => {
  it('skips blank lines, reports bad JSON and non-objects by line, takes columns from the first object', async () => {
    const evs = await all(jsonlEvents(write('a.jsonl', '{"a":1,"b":"x"}\n\n{oops\n[1]\r\n{"a":2}')));
    expect(evs.map((e) => [e.type, e.line])).toEqual([
      ['columns', 1],
      ['record', 1],
      ['bad', 3],
      ['bad', 4],
      ['record', 5],
    ]);
    expect(evs[0]).toEqual({ type: 'columns', line: 1, columns: ['a', 'b'] });
  });
});

it('formatFromExtension', () => {
  expect(formatFromExtension('x/T.CSV')).toBe('csv');
  expect(formatFromExtension('t.ndjson')).toBe('jsonl');
  expect(formatFromExtension('t.parquet')).toBe('parquet');
  expect(formatFromExtension('t.json')).toBeNull();
});
