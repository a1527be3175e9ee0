/**
 * Strict reading of the matcher's operator files (alias tables, the mapping file): every value is
 * checked, unknown keys are refused, and an error names the file, the JSON path and what to write
 * instead. A typo in a mapping file must fail loudly, never silently leave two venues unmerged.
 */

/** A matcher file (aliases, mapping) that cannot be used as written; the message says where and why. */
export class MatchConfigError extends Error {
  override readonly name = 'MatchConfigError';
}

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export class Reader {
  constructor(readonly source: string) {}

  fail(path: string, msg: string): never {
    throw new MatchConfigError(`${this.source}: ${path || '(top level)'}: ${msg}`);
  }

  /** An object with only `allowed` keys (and every `required` one). */
  obj(x: unknown, path: string, allowed: readonly string[], required: readonly string[] = []): Record<string, unknown> {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) this.fail(path, `must be an object, got ${describe(x)}`);
    const o = x as Record<string, unknown>;
    for (const k of Object.keys(o)) {
      if (!allowed.includes(k)) this.fail(join(path, k), `unknown key; allowed here: ${allowed.join(', ')}`);
    }
    for (const k of required) if (!(k in o)) this.fail(join(path, k), 'is required');
    return o;
  }

  /** A map whose keys are free (names, ids); values are checked by the caller. */
  map(x: unknown, path: string): Record<string, unknown> {
    if (typeof x !== 'object' || x === null || Array.isArray(x)) this.fail(path, `must be an object, got ${describe(x)}`);
    return x as Record<string, unknown>;
  }

  str(x: unknown, path: string, opts: { pattern?: RegExp; hint?: string; max?: number } = {}): string {
    if (typeof x !== 'string' || x.trim() === '') this.fail(path, `must be a non-empty string, got ${describe(x)}`);
    if (x.length > (opts.max ?? 500)) this.fail(path, `is longer than ${opts.max ?? 500} characters`);
    if (opts.pattern && !opts.pattern.test(x)) this.fail(path, `${JSON.stringify(x)} is not valid${opts.hint ? `: ${opts.hint}` : ''}`);
    return x;
  }

  arr(x: unknown, path: string, opts: { min?: number; max?: number } = {}): unknown[] {
    if (!Array.isArray(x)) this.fail(path, `must be an array, got ${describe(x)}`);
    if (opts.min !== undefined && x.length < opts.min) this.fail(path, `needs at least ${opts.min} item${opts.min === 1 ? '' : 's'}`);
    if (opts.max !== undefined && x.length > opts.max) this.fail(path, `holds at most ${opts.max} items`);
    return x;
  }

  bool(x: unknown, path: string): boolean {
    if (typeof x !== 'boolean') this.fail(path, `must be true or false, got ${describe(x)}`);
    return x;
  }

  oneOf<T extends string>(x: unknown, path: string, values: readonly T[]): T {
    if (typeof x !== 'string' || !(values as readonly string[]).includes(x)) this.fail(path, `must be one of ${values.map((v) => JSON.stringify(v)).join(', ')}, got ${describe(x)}`);
    return x as T;
  }
}

export function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

function describe(x: unknown): string {
  if (x === undefined) return 'nothing';
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'an array';
  if (typeof x === 'object') return 'an object';
  const s = JSON.stringify(x);
  return `${typeof x} ${s.length > 60 ? `${s.slice(0, 57)}...` : s}`;
}

/** JSON.parse with the file named in the error. */
export function parseJsonText(text: string, source: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new MatchConfigError(`${source}: not valid JSON (${(e as Error).message})`);
  }
}
