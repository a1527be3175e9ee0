/** Store outages are told from bugs, and the answer says only what is known. */
import { describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../../src/errors.js';
import { asStoreUnavailable } from '../../../src/store/unavailable.js';

describe('asStoreUnavailable', () => {
  it('a refused PostgreSQL connection is "unreachable"', () => {
    const e = asStoreUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }), 'the buy');
    expect(e).toBeInstanceOf(StoreUnavailable);
    expect(e!.message).toContain('PostgreSQL is unreachable');
  });

  it('a pool that gave up waiting does not claim PostgreSQL is down: it may only be busy', () => {
    const e = asStoreUnavailable(new Error('timeout exceeded when trying to connect'), 'the buy');
    expect(e!.status).toBe(503);
    expect(e!.message).not.toContain('is unreachable');
    expect(e!.message).toContain('every connection is busy');
  });

  it('Redis outages and plain bugs', () => {
    expect(asStoreUnavailable(new Error('Connection is closed.'))!.message).toContain('Redis is unreachable');
    expect(asStoreUnavailable(new TypeError('x is undefined'))).toBeNull();
  });
});
