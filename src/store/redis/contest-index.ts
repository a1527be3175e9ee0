/**
 * Per-contest caches indexed across contests. Where the arbitrage detection cache lives: one key per contest holding its Arbitrage[] (JSON) for
 * at most ARBITRAGE_TTL_MS after the computation that last wrote it, and one sorted set indexing
 * the contests that have some, scored by that expiry instant, whose members carry the league too
 * (the sweeper's clear event is routed by league after the contest's key is gone).
 */
import type { Keyspace } from './client.js';

export const arbitrageKey = (ks: Keyspace, contestId: string): string => ks.k('arb', contestId);
export const arbitrageIndexKey = (ks: Keyspace): string => ks.k('arbidx');

/**
 * A member of a per-contest index (the arbitrage and signal indexes): the contest with its league,
 * so a sweep can route a clear by league after the contest's own keys are gone. Contest and league
 * ids hold no newline (they are ids), so one joins them unambiguously.
 */
const SEP = '\n';
export const contestMember = (contestId: string, leagueId: string | null): string => `${contestId}${SEP}${leagueId ?? ''}`;
export function parseContestMember(member: string): { contestId: string; leagueId: string | null } {
  const at = member.indexOf(SEP);
  if (at < 0) return { contestId: member, leagueId: null };
  const league = member.slice(at + 1);
  return { contestId: member.slice(0, at), leagueId: league === '' ? null : league };
}
