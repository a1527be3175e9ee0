import { describe, expect, it } from 'vitest';
import {
  VenueError,
  errorKind,
  isSerializedVenueError,
  mapVenueError,
  notSupported,
  serializeVenueError,
  venueErrorFromJSON,
} from '../../../src/venues/errors.js';

describe('VenueError', () => {
  it('carries kind, stable code, partner and details', () => {
    const e = new VenueError('retryable', 'rate_limited', 'slow down', { partner_id: 'sim_exchange', retry_after_ms: 1500, details: { window: 'minute' } });
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('VenueError');
    expect(e.retryable).toBe(true);
    expect(e.partner_id).toBe('sim_exchange');
    expect(e.retry_after_ms).toBe(1500);
  });

  it('refuses unknown kinds and non-snake_case codes', () => {
    expect(() => new VenueError('maybe' as never, 'x', 'm')).toThrow(TypeError);
    expect(() => new VenueError('fatal', 'Not-Snake', 'm')).toThrow(TypeError);
    expect(() => new VenueError('fatal', '', 'm')).toThrow(TypeError);
  });

  it('round-trips through JSON and structuredClone (threads and processes)', () => {
    const e = new VenueError('non_retryable', 'unknown_position', 'no such position', { partner_id: 'p', details: { position_hash: 'a:b' } });
    const viaJson = venueErrorFromJSON(JSON.parse(JSON.stringify(e)));
    const viaClone = venueErrorFromJSON(structuredClone(e.toJSON()));
    for (const back of [viaJson, viaClone]) {
      expect(back).toBeInstanceOf(VenueError);
      expect(back.toJSON()).toEqual(e.toJSON());
    }
  });

  it('serializes foreign errors as fatal internal_error', () => {
    const s = serializeVenueError(new RangeError('boom'));
    expect(s).toMatchObject({ name: 'VenueError', kind: 'fatal', code: 'internal_error', message: 'boom' });
    expect(serializeVenueError('just a string').message).toBe('just a string');
    expect(errorKind(new Error('x'))).toBe('fatal');
    expect(errorKind(new VenueError('retryable', 'timeout', 't'))).toBe('retryable');
    // an already-serialized error stays what it was
    expect(serializeVenueError({ ...new VenueError('retryable', 'timeout', 't').toJSON() }).kind).toBe('retryable');
  });

  it('recognizes only well-formed serialized errors', () => {
    expect(isSerializedVenueError(new VenueError('fatal', 'x', 'm').toJSON())).toBe(true);
    expect(isSerializedVenueError({ name: 'VenueError', kind: 'sometimes', code: 'x', message: 'm' })).toBe(false);
    expect(isSerializedVenueError(null)).toBe(false);
    expect(() => venueErrorFromJSON({ name: 'Nope' } as never)).toThrow(TypeError);
  });

  it('maps venue codes through an error map, with a fallback', () => {
    const map = { RATE: { kind: 'retryable', code: 'rate_limited' }, GONE: { kind: 'fatal', code: 'auth_failed' } } as const;
    expect(mapVenueError(map, 'v', 'RATE', 'm').kind).toBe('retryable');
    expect(mapVenueError(map, 'v', 'GONE', 'm').code).toBe('auth_failed');
    const unknown = mapVenueError(map, 'v', 'WHAT', 'm');
    expect(unknown).toMatchObject({ kind: 'fatal', code: 'internal_error', partner_id: 'v', details: { venue_code: 'WHAT' } });
    // prototype keys are not codes
    expect(mapVenueError(map, 'v', 'toString', 'm').code).toBe('internal_error');
  });

  it('notSupported names the capability', () => {
    const e = notSupported('sim_quotes', 'balances');
    expect(e).toMatchObject({ kind: 'non_retryable', code: 'capability_not_supported', partner_id: 'sim_quotes', details: { capability: 'balances' } });
  });
});
