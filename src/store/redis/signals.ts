/**
 * The live signal set of each contest (docs/signals.md "Lifetime"): what GET /signals serves and
 * what the `signal` channel's signal.update snapshots. Two kinds of writer share it: the liquidity
 * computation (arbitrage and price_move signals) and the trade detection (trade-derived types), so
 * each write names the signals it upserts and, optionally, a type whose signals it owns outright
 * (a write of the arbitrage type replaces the contest's arbitrage signals: one vanished is gone).
 *
 * One script per write, atomic: drop what expired, apply the write, and when the contest's set
 * differs from the last one published, append one signal.update (the whole set, sorted by
 * dedupe_key; an empty array clears) to the durable event log. Nothing lives past its expires_at:
 * expired signals leave on the next write or on the scheduler's sweep, which clears them on the
 * stream too; the keys themselves expire a minute after their last signal would have.
 *
 * Keys per contest: `sig` (hash dedupe_key → signal JSON), `sigx` (sorted set dedupe_key → expiry
 * ms), `sigd` (digest of the last published set). One index, `sigidx`, scores each contest (member
 * `contest\nleague`) by its earliest expiry, for the sweep and the reads.
 */
import { isServedType, serializeSignal, type SerializedSignal, type Signal } from '../../domain/signals.js';
import { contestMember, parseContestMember } from './contest-index.js';
import type { Keyspace, Redis } from './client.js';
import { logKeys, logLua, LOG_LIMITS, type LogLimits } from './eventlog.js';
import { luaScript, type ScriptCall } from './script.js';

/** Beyond its last signal's expiry a contest's keys linger this long, then Redis drops them whatever happens. */
const KEY_GRACE_MS = 60_000;

// KEYS: closed, feed, ev, sig, sigx, sigd, sigidx, sigv.
// ARGV: member, contest, league ('' for none), owned type prefix ('' for none), timestamp (ISO), n,
// then n (dedupe_key, expiry ms, signal JSON) triples, then the writer's version ('' for none).
// Returns 1 when a signal.update was appended, else 0.
const WRITE_LUA = (log: string) => `${log}
local now = now_ms()
-- A computation older than one that already wrote (a slower run of the same contest) writes nothing.
local version = ARGV[7 + tonumber(ARGV[6]) * 3]
if version and version ~= '' then
  local seen = tonumber(redis.call('GET', KEYS[8]) or '-1')
  if tonumber(version) < seen then return 0 end
  redis.call('SET', KEYS[8], version, 'PX', 86400000)
end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('DEL', KEYS[4], KEYS[5], KEYS[6])
  redis.call('ZREM', KEYS[7], ARGV[1])
  return 0
end
-- Expired first: a signal past its expires_at is never served or published.
local gone = redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)
for s = 1, #gone, 1000 do
  local e = math.min(s + 999, #gone)
  redis.call('HDEL', KEYS[4], unpack(gone, s, e))
  redis.call('ZREM', KEYS[5], unpack(gone, s, e))
end
local n = tonumber(ARGV[6])
local written = {}
for i = 0, n - 1 do
  local j = 7 + i * 3
  local expiry = tonumber(ARGV[j + 1])
  if expiry > now then
    redis.call('HSET', KEYS[4], ARGV[j], ARGV[j + 2])
    redis.call('ZADD', KEYS[5], expiry, ARGV[j])
    written[ARGV[j]] = true
  end
end
-- The owned type: its signals not in this write are gone.
local prefix = ARGV[4]
if prefix ~= '' then
  for _, k in ipairs(redis.call('HKEYS', KEYS[4])) do
    if not written[k] and string.sub(k, 1, #prefix) == prefix then
      redis.call('HDEL', KEYS[4], k)
      redis.call('ZREM', KEYS[5], k)
    end
  end
end
local all = redis.call('HGETALL', KEYS[4])
local keys, byKey = {}, {}
for i = 1, #all, 2 do keys[#keys + 1] = all[i]; byKey[all[i]] = all[i + 1] end
table.sort(keys)
local vals = {}
for i, k in ipairs(keys) do vals[i] = byKey[k] end
local set = '[' .. table.concat(vals, ',') .. ']'
if #keys == 0 then
  redis.call('DEL', KEYS[4], KEYS[5])
  redis.call('ZREM', KEYS[7], ARGV[1])
else
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  local last = redis.call('ZRANGE', KEYS[5], -1, -1, 'WITHSCORES')
  redis.call('ZADD', KEYS[7], first[2], ARGV[1])
  local keep = tonumber(last[2]) - now + ${KEY_GRACE_MS}
  redis.call('PEXPIRE', KEYS[4], keep)
  redis.call('PEXPIRE', KEYS[5], keep)
end
local digest = redis.sha1hex(set)
local before = redis.call('GET', KEYS[6])
-- Nothing published before and nothing now: no news (a first write of nothing clears nothing).
if digest == before or (not before and #keys == 0) then return 0 end
redis.call('SET', KEYS[6], digest, 'PX', 86400000)
local league = ARGV[3] == '' and 'null' or cjson.encode(ARGV[3])
local event = '{"type":"signal.update","contest_id":' .. cjson.encode(ARGV[2]) .. ',"league_id":' .. league .. ',"signals":' .. set .. ',"timestamp":"' .. ARGV[5] .. '"}'
append_one(KEYS[3], KEYS[2], ARGV[2], 'signal', ARGV[3], event)
return 1
`;

/** One write to a contest's signal set. */
export interface SignalWrite {
  contestId: string;
  leagueId: string | null;
  /** Signals to add or replace (by dedupe_key). */
  upserts: readonly (Signal | SerializedSignal)[];
  /** The writer's monotone version (the contest's computation version): an older one writes nothing. */
  version?: number;
  /** A type this writer owns outright: its signals absent from `upserts` are removed. */
  owns?: Signal['signal_type'];
  /** The instant stamped on the signal.update (ISO 8601). */
  timestamp: string;
}

/** At most this many contests are read or swept per round trip. */
const BATCH = 500;

export class SignalStore {
  private readonly script: ScriptCall<number>;
  private readonly log: ReturnType<typeof logKeys>;

  constructor(
    private readonly redis: Redis,
    private readonly ks: Keyspace,
    limits: LogLimits = LOG_LIMITS,
  ) {
    this.script = luaScript(redis, WRITE_LUA(logLua(limits)));
    this.log = logKeys(ks);
  }

  private keys(contestId: string): string[] {
    return [
      this.ks.k('closed', contestId),
      this.log.feed,
      this.log.events(contestId),
      this.ks.k('sig', contestId),
      this.ks.k('sigx', contestId),
      this.ks.k('sigd', contestId),
      this.ks.k('sigidx'),
      this.ks.k('sigv', contestId),
    ];
  }

  /** Applies one write; true when it changed the published set (a signal.update was appended). */
  async write(w: SignalWrite): Promise<boolean> {
    const args: (string | number)[] = [contestMember(w.contestId, w.leagueId), w.contestId, w.leagueId ?? '', w.owns ? `${w.owns}:` : '', w.timestamp, w.upserts.length];
    for (const u of w.upserts) {
      const s = 'json' in u ? u : serializeSignal(u);
      // An unpublished (trade_burst) or retired type is never served: storing it would only publish updates every subscriber filters away.
      if (!isServedType(s.signal_type)) throw new Error(`signal type ${s.signal_type} is not published`);
      if (!s.dedupe_key.startsWith(`${s.signal_type}:`)) throw new Error(`dedupe_key ${s.dedupe_key} must start with its type ${s.signal_type}:`);
      args.push(s.dedupe_key, s.expires_ms, s.json);
    }
    args.push(w.version ?? '');
    return (await this.script(this.keys(w.contestId), args)) === 1;
  }

  /** Every live signal (not expired), contest by contest; of the named contests only when `contestIds` is given. */
  async live(nowMs: number, contestIds?: readonly string[]): Promise<{ contestId: string; signals: Signal[] }[]> {
    const ids = contestIds ?? (await this.redis.zrange(this.ks.k('sigidx'), '0', '-1')).map((m) => parseContestMember(m).contestId);
    const out: { contestId: string; signals: Signal[] }[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      const contests = ids.slice(i, i + BATCH);
      const pipe = this.redis.pipeline();
      for (const c of contests) pipe.hvals(this.ks.k('sig', c));
      const res = (await pipe.exec()) ?? [];
      contests.forEach((contestId, k) => {
        const vals = (res[k]?.[1] as string[] | undefined) ?? [];
        const signals = vals.map((v) => JSON.parse(v) as Signal).filter((s) => Date.parse(s.expires_at) > nowMs);
        if (signals.length > 0) out.push({ contestId, signals });
      });
    }
    return out;
  }

  /** Drops expired signals of contests whose earliest expiry passed, publishing each changed set (a clear when none is left). */
  async sweepExpired(nowMs: number): Promise<number> {
    const members = await this.redis.zrangebyscore(this.ks.k('sigidx'), '-inf', nowMs, 'LIMIT', 0, BATCH);
    let published = 0;
    for (const m of members) {
      const { contestId, leagueId } = parseContestMember(m);
      if (await this.write({ contestId, leagueId, upserts: [], timestamp: new Date(nowMs).toISOString() })) published++;
    }
    return published;
  }
}
