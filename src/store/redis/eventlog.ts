/**
 * The durable event log (Redis Streams). Every stream event and every history row is appended by
 * the same Lua script that stores the state change it describes (src/store/redis/hot.ts), so a
 * crash can lose neither side without the other:
 *
 *   ev:<contest>   stream  the contest's client events, every channel, in issue order. An entry's
 *                          id is the event's `event_id`; fields ch (channel), l (league or ''),
 *                          e (the event JSON as clients get it, without event_id) or, for an event
 *                          of PACK_MIN_BYTES or more, z (the same, deflated, base64): the log keeps
 *                          thousands of events per contest, and JSON shrinks about fourfold. Retention: at
 *                          least the last LOG_LIMITS.minEvents events or the last minAgeMs,
 *                          whichever holds more, never more than maxEvents (see trim_contest).
 *   liqe:<contest> string  the id of the contest's last liquidity event (REST meta.event_id).
 *   evfeed         stream  every event again, in append order across contests {c: contest,
 *                          i: its event id, p: the contest's previous event id, ch, l, e}: what
 *                          gateways tail with one blocking XREAD, so a live event costs them a
 *                          single round trip. Capped by feedMax (a live tail is milliseconds
 *                          behind; the contest logs hold the long history). The private channels'
 *                          events (orders, balance) are here too, as {a: account, ch, e}: appended
 *                          by the account-event relay from PostgreSQL's outbox, which is their
 *                          durable record; they have no contest log, no event id and no resume
 *                          (clients fetch that state over REST first).
 *   hist           stream  history rows for ClickHouse {t: table, r: JSON rows, o: outlier
 *                          hashes}; read by the history writer's consumer group, acknowledged
 *                          after the insert landed. Capped by histMax (reached only when no writer
 *                          runs for long: the oldest rows are then lost, and counted).
 *
 * Event ids are Redis stream ids: opaque to clients, increasing within a contest. After Redis
 * loses its data a contest's log starts empty, so an id from before is no longer held and resume
 * answers resume_unavailable rather than replaying from the wrong place.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { AccountChannel, StreamChannel } from '../../domain/stream.js';
import type { Keyspace, Redis } from './client.js';
import { luaScript, type ScriptCall } from './script.js';

/** Retention of the log (documented in docs/stream.md, "Event log"). */
export interface LogLimits {
  /** A contest's log keeps at least its last this many events ... */
  minEvents: number;
  /** ... or every event of the last this many ms, whichever is more ... */
  minAgeMs: number;
  /** ... but never more than this many (memory bound: ~333 events/s sustained on one contest). */
  maxEvents: number;
  /** Events kept in the feed (gateways read within milliseconds; this covers stalls of seconds at full load). */
  feedMax: number;
  /** History entries held for the writer; beyond this the oldest are trimmed (and counted lost). */
  histMax: number;
}

export const LOG_LIMITS: LogLimits = {
  minEvents: 10_000,
  minAgeMs: 300_000,
  maxEvents: 100_000,
  feedMax: 20_000,
  histMax: 200_000,
};

/** The log limits a deployment's configuration sets (the feed and history caps stay fixed). */
export function logLimits(c: { minEvents: number; minAgeSeconds: number; maxEvents: number }): LogLimits {
  return { ...LOG_LIMITS, minEvents: c.minEvents, minAgeMs: c.minAgeSeconds * 1000, maxEvents: c.maxEvents };
}

/** ClickHouse tables a history entry can target. */
export type HistTable = 'ticks' | 'points' | 'trades';

/** One event to append: the client JSON (without event_id) and how the gateway routes it. */
export interface LogAppend {
  channel: StreamChannel;
  league_id: string | null;
  event: string;
}

/** History rows to append, one entry per table; rows as JSON (the writer validates and encodes). */
export interface HistAppend {
  table: HistTable;
  rows: string;
  /** ticks only: liquidity hashes of the rows, so the script can mark those compute last flagged as outliers. */
  hashes?: string[];
}

/** An event read back from the log. */
export interface LogEvent {
  id: string;
  contest_id: string;
  channel: StreamChannel;
  league_id: string | null;
  event: string;
  /**
   * Read from the feed: the id of the contest's event before this one ('' for a contest's first).
   * A reader that delivered some other id last for the contest has missed events (the feed was
   * trimmed past it): the contest's log still holds them.
   */
  prev?: string;
}

/** A history entry read back from the log. */
export interface HistEntry {
  id: string;
  table: HistTable;
  rows: string;
  /** Liquidity hashes compute had flagged as outliers when the rows were appended. */
  outliers: string[];
}

export const logKeys = (ks: Keyspace) => ({
  events: (contestId: string) => ks.k('ev', contestId),
  lastLiquidityEvent: (contestId: string) => ks.k('liqe', contestId),
  outliers: (contestId: string) => ks.k('outl', contestId),
  feed: ks.k('evfeed'),
  hist: ks.k('hist'),
  /** Pub/sub topic (not a key) telling API processes a contest's liquidity changed: cache invalidation only. */
  liquidityChanged: ks.k('bus', 'liquidity-changed'),
});

/** Redis' clock in ms, for scripts (effects replication makes TIME safe in them). */
export const NOW_MS_LUA = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
`;

/**
 * Lua shared by every script that appends: call append_events(evKey, feedKey, contest, from, n)
 * with ARGV[from ..] holding n (channel, league, event) triples; returns the first id, the last id
 * and the last liquidity event id (or false). append_one(evKey, feedKey, contest, channel, league,
 * event) appends one event the script built itself. append_hist(histKey, outlKey, from, n) takes n
 * (table, rows, hashes-joined-by-space) triples.
 */
export function logLua(l: LogLimits = LOG_LIMITS): string {
  return `${NOW_MS_LUA}
-- Keeps at least ${l.minEvents} events or every event younger than ${l.minAgeMs} ms, whichever is
-- more, capped at ${l.maxEvents}. Old heads go a few per append, so the work per call stays small
-- and the log still shrinks faster than it grows.
local function trim_contest(key, appended)
  local len = redis.call('XLEN', key)
  if len > ${l.maxEvents} then
    -- Exact: removes only what this append pushed over the cap.
    redis.call('XTRIM', key, 'MAXLEN', ${l.maxEvents})
    return
  end
  if len <= ${l.minEvents} then return end
  local budget = math.min(len - ${l.minEvents}, appended + 1)
  local cutoff = now_ms() - ${l.minAgeMs}
  local heads = redis.call('XRANGE', key, '-', '+', 'COUNT', budget)
  local drop = 0
  for _, h in ipairs(heads) do
    local ms = tonumber(string.match(h[1], '^(%d+)'))
    if ms >= cutoff then break end
    drop = drop + 1
  end
  if drop > 0 then redis.call('XTRIM', key, 'MAXLEN', len - drop) end
end

local function append_events(evkey, feedkey, contest, from, n)
  if n == 0 then return false, false, false end
  local first, last, liq = false, false, false
  local before = redis.call('XREVRANGE', evkey, '+', '-', 'COUNT', 1)
  local prev = before[1] and before[1][1] or ''
  for i = 0, n - 1 do
    local j = from + i * 5
    -- The contest log keeps the event as ARGV[j + 3] names it (e: as is, z: packed); the feed as is.
    last = redis.call('XADD', evkey, '*', 'ch', ARGV[j], 'l', ARGV[j + 1], ARGV[j + 3], ARGV[j + 4])
    if not first then first = last end
    if ARGV[j] == 'liquidity' then liq = last end
    redis.call('XADD', feedkey, 'MAXLEN', '~', ${l.feedMax}, '*', 'c', contest, 'i', last, 'p', prev, 'ch', ARGV[j], 'l', ARGV[j + 1], 'e', ARGV[j + 2])
    prev = last
  end
  trim_contest(evkey, n)
  return first, last, liq
end

-- One event built inside a script (kept as is, not packed): the same two entries append_events writes.
local function append_one(evkey, feedkey, contest, ch, league, event)
  local before = redis.call('XREVRANGE', evkey, '+', '-', 'COUNT', 1)
  local prev = before[1] and before[1][1] or ''
  local id = redis.call('XADD', evkey, '*', 'ch', ch, 'l', league, 'e', event)
  redis.call('XADD', feedkey, 'MAXLEN', '~', ${l.feedMax}, '*', 'c', contest, 'i', id, 'p', prev, 'ch', ch, 'l', league, 'e', event)
  trim_contest(evkey, 1)
  return id
end

local function append_hist(histkey, outlkey, from, n)
  for i = 0, n - 1 do
    local j = from + i * 3
    local flagged = ''
    if ARGV[j + 2] ~= '' and outlkey and redis.call('EXISTS', outlkey) == 1 then
      local hashes = {}
      for h in string.gmatch(ARGV[j + 2], '%S+') do hashes[#hashes + 1] = h end
      local out = {}
      -- In slices: unpack is bounded by Lua's C stack (about 8000 values).
      for s = 1, #hashes, 2000 do
        local e = math.min(s + 1999, #hashes)
        local marks = redis.call('HMGET', outlkey, unpack(hashes, s, e))
        for k = s, e do if marks[k - s + 1] then out[#out + 1] = hashes[k] end end
      end
      flagged = table.concat(out, ' ')
    end
    redis.call('XADD', histkey, 'MAXLEN', '~', ${l.histMax}, '*', 't', ARGV[j], 'r', ARGV[j + 1], 'o', flagged)
  end
end
`;
}

/** Events this long or longer are kept deflated in the contest logs (smaller ones gain little). */
export const PACK_MIN_BYTES = 512;

/** An event as its contest log keeps it when packed: raw deflate, base64. */
export function packEvent(text: string): string {
  return deflateRawSync(text, { level: 1 }).toString('base64');
}

/** The event text a contest log's z field holds. */
export function unpackEvent(packed: string): string {
  return inflateRawSync(Buffer.from(packed, 'base64')).toString('utf8');
}

/**
 * Flattens events into the ARGV groups append_events reads: channel, league, the event as is (for
 * the feed), then the contest log's field name and value (e: as is; z: deflated, base64).
 */
export function eventArgs(events: readonly LogAppend[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    out.push(e.channel, e.league_id ?? '', e.event);
    if (e.event.length < PACK_MIN_BYTES) out.push('e', e.event);
    else out.push('z', packEvent(e.event));
  }
  return out;
}

/** The group size eventArgs produces per event (the scripts divide by it). */
export const EVENT_ARGS = 5;

/** Flattens history entries into the (table, rows, hashes) ARGV triples append_hist reads. */
export function histArgs(entries: readonly HistAppend[]): string[] {
  const out: string[] = [];
  for (const h of entries) out.push(h.table, h.rows, h.hashes?.join(' ') ?? '');
  return out;
}

/** Stream ids compare as (ms, seq) pairs; false for anything that is not one. */
const STREAM_ID = /^(\d{1,15})-(\d{1,15})$/;

export function isStreamId(s: string): boolean {
  return STREAM_ID.test(s);
}

/** -1, 0 or 1 as stream id a is before, equal to or after b (both well-formed). */
export function compareStreamIds(a: string, b: string): number {
  const ma = STREAM_ID.exec(a)!;
  const mb = STREAM_ID.exec(b)!;
  const d = Number(ma[1]) - Number(mb[1]) || Number(ma[2]) - Number(mb[2]);
  return d < 0 ? -1 : d > 0 ? 1 : 0;
}

type RawEntry = [id: string, fields: string[]];

function field(fields: string[], name: string): string | undefined {
  for (let i = 0; i < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

/** A contest-log entry as a LogEvent (its event unpacked when it was stored deflated). */
export function toLogEvent(contestId: string, [id, fields]: RawEntry): LogEvent {
  const league = field(fields, 'l');
  const packed = field(fields, 'z');
  const event = packed !== undefined ? unpackEvent(packed) : (field(fields, 'e') ?? '');
  return { id, contest_id: contestId, channel: field(fields, 'ch') as StreamChannel, league_id: league ? league : null, event };
}

/** An event of a private channel: it belongs to an account, not to a contest. */
export interface AccountLogEvent {
  account_id: string;
  channel: AccountChannel;
  /** The event JSON as clients get it. */
  event: string;
}

/** A batch the feed delivered: its position (to read on from) and the events, in log order. */
export interface FeedBatch {
  /** The last feed id consumed: pass it to the next read. */
  feedId: string;
  events: LogEvent[];
  /** The private channels' events of the batch, in log order. */
  accountEvents: AccountLogEvent[];
  /** The read returned as many entries as it asked for: the reader is behind the feed's end. */
  full: boolean;
}

// KEYS: the feed. ARGV: (account, channel, event) triples. Returns the number appended.
const APPEND_ACCOUNT_LUA = (feedMax: number) => `
for i = 1, #ARGV, 3 do
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ${feedMax}, '*', 'a', ARGV[i], 'ch', ARGV[i + 1], 'e', ARGV[i + 2])
end
return #ARGV / 3
`;

/** Appends the private channels' events to the feed, all or none (one script). */
export class AccountEventLog {
  private readonly feed: string;
  private readonly script: ScriptCall<number>;

  constructor(redis: Redis, ks: Keyspace, limits: Pick<LogLimits, 'feedMax'> = LOG_LIMITS) {
    this.feed = logKeys(ks).feed;
    this.script = luaScript<number>(redis, APPEND_ACCOUNT_LUA(limits.feedMax));
  }

  async append(events: readonly AccountLogEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    const args: string[] = [];
    for (const e of events) args.push(e.account_id, e.channel, e.event);
    return this.script([this.feed], args);
  }
}

/** Most events returned by one replay read (a client further behind gets them in pages). */
export const REPLAY_PAGE = 1_000;

/**
 * Reads the log. `blocking` is a connection of its own (a blocked XREAD holds it); the other reads
 * may share any connection.
 */
export class EventLogReader {
  private readonly keys: ReturnType<typeof logKeys>;

  constructor(
    private readonly redis: Redis,
    ks: Keyspace,
  ) {
    this.keys = logKeys(ks);
  }

  /** The feed's current end: reading after it yields only what is appended from now on. */
  async feedHead(): Promise<string> {
    const last = (await this.redis.xrevrange(this.keys.feed, '+', '-', 'COUNT', 1)) as RawEntry[];
    return last[0]?.[0] ?? '0-0';
  }

  /** Waits up to blockMs for events appended after `afterFeedId`, then returns them (at most `count`). */
  async readFeed(afterFeedId: string, blockMs: number, count = 500): Promise<FeedBatch> {
    const res = (await this.redis.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.keys.feed, afterFeedId)) as [string, RawEntry[]][] | null;
    const entries = res?.[0]?.[1] ?? [];
    const events: LogEvent[] = [];
    const accountEvents: AccountLogEvent[] = [];
    if (entries.length === 0) return { feedId: afterFeedId, events, accountEvents, full: false };
    for (const [, f] of entries) {
      const account = field(f, 'a');
      if (account !== undefined) {
        accountEvents.push({ account_id: account, channel: field(f, 'ch') as AccountChannel, event: field(f, 'e') ?? '' });
        continue;
      }
      const league = field(f, 'l');
      events.push({ id: field(f, 'i')!, contest_id: field(f, 'c')!, channel: field(f, 'ch') as StreamChannel, league_id: league ? league : null, event: field(f, 'e') ?? '', prev: field(f, 'p') ?? '' });
    }
    return { feedId: entries[entries.length - 1]![0], events, accountEvents, full: entries.length >= count };
  }

  /**
   * Whether the feed still holds the entry `feedId`. The feed is trimmed from its head only, so a
   * reader whose last position is gone may have lost what followed it (the private channels have
   * no contest log to say).
   */
  async feedHolds(feedId: string): Promise<boolean> {
    const hit = (await this.redis.xrange(this.keys.feed, feedId, feedId)) as RawEntry[];
    return hit.length > 0;
  }

  /**
   * The contest's events after `afterId` (exclusive), oldest first, at most `limit`; 'unavailable'
   * when the log does not hold `afterId` itself (never issued, trimmed, or lost with Redis): then
   * nothing can prove the gap is empty.
   */
  async eventsAfter(contestId: string, afterId: string, limit = REPLAY_PAGE): Promise<LogEvent[] | 'unavailable'> {
    if (!isStreamId(afterId)) return 'unavailable';
    const key = this.keys.events(contestId);
    const res = await this.redis.multi().xrange(key, afterId, afterId).xrange(key, `(${afterId}`, '+', 'COUNT', limit).exec();
    const [[e1, self], [e2, after]] = res as [[Error | null, RawEntry[]], [Error | null, RawEntry[]]];
    if (e1) throw e1;
    if (e2) throw e2;
    if (self.length === 0) return 'unavailable';
    return after.map((e) => toLogEvent(contestId, e));
  }

  /** The id of the contest's newest event, or null when its log is empty. */
  async lastEventId(contestId: string): Promise<string | null> {
    const last = (await this.redis.xrevrange(this.keys.events(contestId), '+', '-', 'COUNT', 1)) as RawEntry[];
    return last[0]?.[0] ?? null;
  }
}

/** Decodes raw XREADGROUP/XRANGE entries of the history stream. */
export function toHistEntries(entries: RawEntry[]): HistEntry[] {
  const out: HistEntry[] = [];
  for (const [id, fields] of entries) {
    // A pending entry trimmed away comes back with no fields: nothing left to insert.
    if (!fields) continue;
    const o = field(fields, 'o') ?? '';
    out.push({ id, table: field(fields, 't') as HistTable, rows: field(fields, 'r') ?? '[]', outliers: o ? o.split(' ') : [] });
  }
  return out;
}
