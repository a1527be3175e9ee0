/**
 * The arbitrage detection cache (spec: an arb is held at most 120 s and rewritten on every liquidity
 * change): written by the liquidity computation with the contest's state (HotState.writeComputed),
 * read here for GET /arbitrages, and swept here: a contest whose arbitrages expired without a newer
 * computation gets an arbitrage.update clearing them through the event log, so a stream subscriber
 * never holds a set the REST read no longer serves.
 */
import type { Arbitrage } from '../../domain/arbitrage.js';
import { arbitrageIndexKey, arbitrageKey, parseContestMember } from './contest-index.js';
import type { Keyspace, Redis } from './client.js';
import { eventArgs, logKeys, logLua, LOG_LIMITS, type LogLimits } from './eventlog.js';
import { luaScript, type ScriptCall } from './script.js';

// KEYS: closed, feed, ev, arbidx, arb; ARGV: member, contest, then one event group. Clears only when
// the index still holds the member with an expiry now passed and the key is gone: a computation
// that rewrote the set in between keeps it (and its own event stands).
const CLEAR_EXPIRED_LUA = (log: string) => `${log}
local score = redis.call('ZSCORE', KEYS[4], ARGV[1])
if not score or tonumber(score) > now_ms() or redis.call('EXISTS', KEYS[5]) == 1 then return 0 end
redis.call('ZREM', KEYS[4], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then return 1 end
append_events(KEYS[3], KEYS[2], ARGV[2], 3, 1)
return 1
`;

/** At most this many contests are read or cleared per call (the rest wait for the next sweep). */
const BATCH = 500;

export class ArbitrageStore {
  private readonly clear: ScriptCall<number>;
  private readonly log: ReturnType<typeof logKeys>;

  constructor(
    private readonly redis: Redis,
    private readonly ks: Keyspace,
    limits: LogLimits = LOG_LIMITS,
  ) {
    this.clear = luaScript(redis, CLEAR_EXPIRED_LUA(logLua(limits)));
    this.log = logKeys(ks);
  }

  /** Every open arbitrage (contests whose set has not expired), contest by contest. */
  async open(): Promise<Arbitrage[]> {
    const idx = arbitrageIndexKey(this.ks);
    const members = await this.redis.zrangebyscore(idx, `(${Date.now()}`, '+inf');
    const out: Arbitrage[] = [];
    for (let i = 0; i < members.length; i += BATCH) {
      const keys = members.slice(i, i + BATCH).map((m) => arbitrageKey(this.ks, parseContestMember(m).contestId));
      for (const json of await this.redis.mget(...keys)) if (json !== null) out.push(...(JSON.parse(json) as Arbitrage[]));
    }
    return out;
  }

  /** Clears contests whose arbitrages expired: an arbitrage.update with an empty set each. Returns how many. */
  async sweepExpired(nowMs: number): Promise<number> {
    const idx = arbitrageIndexKey(this.ks);
    const members = await this.redis.zrangebyscore(idx, '-inf', nowMs, 'LIMIT', 0, BATCH);
    let cleared = 0;
    for (const m of members) {
      const { contestId, leagueId } = parseContestMember(m);
      const event = JSON.stringify({ type: 'arbitrage.update', contest_id: contestId, league_id: leagueId, arbitrages: [], timestamp: new Date(nowMs).toISOString() });
      const keys = [this.ks.k('closed', contestId), this.log.feed, this.log.events(contestId), idx, arbitrageKey(this.ks, contestId)];
      cleared += await this.clear(keys, [m, contestId, ...eventArgs([{ channel: 'arbitrage', league_id: leagueId, event }])]);
    }
    return cleared;
  }
}
