/**
 * The background venue connector: an unreachable venue is retried with a doubling backoff and one
 * structured warning per failed attempt, never holding up the caller; a connected venue is
 * prepared (its catalog) before it is attached; a failed preparation retries without reconnecting;
 * a fatal error waits the longest backoff; stop() ends the retries at once and closes what was
 * never attached. Sleeps are real but the backoff is a few ms, and every wait is for a condition.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VenueConnector } from '../../../pipelines/ingest/venue-connector.js';
import { VenueError } from '../../../src/venues/errors.js';
import type { VenueAdapter } from '../../../src/venues/types.js';

const until = async (pred: () => boolean, what: string) => {
  const end = Date.now() + 5_000;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};

/** An adapter whose connect() fails while `down` (as a venue host that does not answer). */
function fakeVenue(id: string) {
  const v = {
    down: true as boolean | 'fatal',
    connects: 0,
    closed: 0,
    adapter: {
      id,
      async connect() {
        v.connects++;
        if (v.down === 'fatal') throw new VenueError('fatal', 'auth_failed', `${id}: key refused`, { partner_id: id });
        if (v.down) throw new VenueError('retryable', 'venue_unavailable', `${id}: connect ECONNREFUSED 127.0.0.1:9`, { partner_id: id });
      },
      async close() {
        v.closed++;
      },
    } as unknown as VenueAdapter,
  };
  return v;
}

function logger() {
  const lines: { level: string; fields: Record<string, unknown>; msg: string }[] = [];
  const at = (level: string) => (fields: Record<string, unknown>, msg: string) => void lines.push({ level, fields, msg });
  return { lines, log: { info: at('info'), warn: at('warn'), error: at('error') } as never };
}

let connectors: VenueConnector[] = [];
afterEach(() => {
  for (const c of connectors) c.stop();
  connectors = [];
});

function connector(o: Partial<ConstructorParameters<typeof VenueConnector>[0]> & { log: never }) {
  const events: string[] = [];
  const c = new VenueConnector({
    minBackoffMs: 4,
    maxBackoffMs: 16,
    random: () => 0.5, // no jitter: 0.8 + 0.4 · 0.5 = 1
    prepare: async (a) => void events.push(`prepare ${a.id}`),
    attach: async (a) => void events.push(`attach ${a.id}`),
    ...o,
  });
  connectors.push(c);
  return { c, events };
}

describe('venue connector', () => {
  it('returns at once, retries an unreachable venue with a doubling backoff, then prepares and attaches it', async () => {
    const v = fakeVenue('kalshi');
    const { lines, log } = logger();
    const { c, events } = connector({ log });
    c.start([v.adapter]);
    expect(c.state('kalshi')).toMatchObject({ connected: false });
    await until(() => v.connects >= 4, 'four attempts');
    v.down = false;
    await until(() => c.state('kalshi')!.connected, 'the connection');
    expect(events).toEqual(['prepare kalshi', 'attach kalshi']);
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns.length).toBeGreaterThanOrEqual(4);
    expect(warns.slice(0, 4).map((w) => w.fields.retry_in_ms)).toEqual([4, 8, 16, 16]);
    expect(warns[0]!.fields).toMatchObject({ partner_id: 'kalshi', attempt: 1, error_code: 'venue_unavailable', error: expect.stringContaining('ECONNREFUSED') });
    expect(lines.at(-1)).toMatchObject({ level: 'info', msg: 'venue connected', fields: { partner_id: 'kalshi' } });
    const s = c.state('kalshi')!;
    expect(s.failures).toBe(s.attempts - 1);
    expect(s.last_error).toBeNull();
    expect(v.closed).toBe(0);
  });

  it('one venue down does not hold up another', async () => {
    const down = fakeVenue('kalshi');
    const up = fakeVenue('polymarket');
    up.down = false;
    const { c, events } = connector({ log: logger().log });
    c.start([down.adapter, up.adapter]);
    await until(() => c.state('polymarket')!.connected, 'polymarket');
    expect(c.state('kalshi')!.connected).toBe(false);
    expect(events).toEqual(['prepare polymarket', 'attach polymarket']);
    expect(c.snapshot().map((x) => x.partner_id)).toEqual(['kalshi', 'polymarket']);
  });

  it('a failed preparation (the catalog write) is retried, then the venue is attached', async () => {
    const v = fakeVenue('polymarket');
    v.down = false;
    let refuse = 2;
    const { c, events } = connector({
      log: logger().log,
      prepare: async () => {
        if (refuse-- > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
        events.push('prepared');
      },
    });
    c.start([v.adapter]);
    await until(() => c.state('polymarket')!.connected, 'the connection');
    expect(events).toEqual(['prepared', 'attach polymarket']);
    expect(c.state('polymarket')).toMatchObject({ attempts: 3, failures: 2 });
    expect(v.closed).toBe(0);
  });

  it('a fatal refusal is logged as an error and waits the longest backoff', async () => {
    const v = fakeVenue('kalshi');
    v.down = 'fatal';
    const { lines, log } = logger();
    const { c } = connector({ log });
    c.start([v.adapter]);
    await until(() => lines.length >= 2, 'two attempts');
    expect(lines.slice(0, 2).map((l) => [l.level, l.fields.retry_in_ms, l.fields.error_code])).toEqual([
      ['error', 16, 'auth_failed'],
      ['error', 16, 'auth_failed'],
    ]);
  });

  it('stop() ends the retries at once and closes the adapter that never attached', async () => {
    const v = fakeVenue('kalshi');
    const { c, events } = connector({ log: logger().log, minBackoffMs: 60_000, maxBackoffMs: 60_000 });
    c.start([v.adapter]);
    await until(() => c.state('kalshi')!.failures === 1, 'the first failure');
    c.stop();
    await c.settled(); // a 60 s backoff did not hold it
    expect(v.connects).toBe(1);
    expect(v.closed).toBe(1);
    expect(events).toEqual([]);
    c.start([fakeVenue('other').adapter]);
    expect(c.state('other')).toBeNull();
  });
});
