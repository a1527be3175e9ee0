/**
 * Several venues' catalogs → one merged catalog, the position map and the report.
 *
 *   const { catalog, report, position_map } = mergeVenueCatalogs({ kalshi: k.catalog()!, polymarket: p.catalog()! }, { aliases, mapping });
 *
 * 1. Each catalog is read into EventViews (describe.ts).
 * 2. The mapping file's `merge` entries become clusters as written; its `separate` contests are kept
 *    out of everything.
 * 3. Every other pair of contests of two different venues with the same league and shape is scored
 *    (score.ts). Pairs at or above the threshold are taken best first (ties by id); a pair joins two
 *    clusters only if no venue would then have two contests in one cluster, so each venue brings at
 *    most one contest to a merged contest.
 * 4. A cluster becomes one merged contest (`mx_<fnv64 of its member ids>` unless the mapping file
 *    names it). Positions are aligned by what they pay on (kind, line, pick: never by the venue's
 *    side key, so a team listed home on one venue and away on the other is still one outcome, and
 *    two lines or two market types are never one position). A Kalshi-style No complement is
 *    unlinked; a position nothing can place stays in its venue's own contest, which is kept for it.
 * 5. Everything not clustered stays exactly as its venue listed it: a low-confidence or unmatched
 *    contest is its own contest and is never merged.
 *
 * Pure and deterministic: the result depends on the catalogs' contents, not on the order of the
 * venues or of anything inside them (every output list is sorted by id).
 */
import type { Contest, League, Market, Participant, Partner, PositionDefinition } from '../../domain/catalog.js';
import { fnv64Hex, formatVariable, positionHash } from '../../domain/hashes.js';
import { aliasTable, type AliasTable } from './aliases.js';
import { DRAW, cmp, describeCatalog } from './describe.js';
import { EMPTY_MAPPING, type MappingFile } from './overrides.js';
import { LOW_CONFIDENCE_FLOOR, MATCH_THRESHOLD, scorePair } from './score.js';
import { MatchConfigError } from './strict.js';
import type {
  EventView,
  MatchCandidate,
  MatchDecision,
  MatchReport,
  MergeResult,
  MergedCatalog,
  Outcome,
  PositionMap,
  ScoreDetail,
  VenueCatalog,
} from './types.js';

export interface MergeOptions {
  /** The alias table (default: the built-in one). */
  aliases?: AliasTable;
  /** The operator's mapping file (default: none). */
  mapping?: MappingFile;
  /** Merge at or above this score (default MATCH_THRESHOLD). */
  threshold?: number;
}

/** The canonical markets a merged contest uses. `total` is the simulator's own definition. */
export const MERGED_MARKETS: Readonly<Record<'winner' | 'tournament_winner' | 'handicap' | 'total', Market>> = {
  winner: { id: 'winner', key: 'winner', name: 'Winner', variable_required: false, allow_multiple_participants: true, side_keys: ['yes'] },
  tournament_winner: { id: 'tournament_winner', key: 'tournament_winner', name: 'Tournament Winner', variable_required: false, allow_multiple_participants: true, side_keys: ['yes'] },
  handicap: { id: 'handicap', key: 'handicap', name: 'Handicap', variable_required: true, allow_multiple_participants: false, side_keys: ['yes'] },
  total: { id: 'total', key: 'total', name: 'Total', variable_required: true, allow_multiple_participants: false, side_keys: ['over', 'under'] },
};

export const MERGED_TIMEFRAME = 'ft';

interface Member {
  source: string;
  view: EventView;
  contest: Contest;
}

interface Cluster {
  members: Member[];
  by: 'score' | 'override';
  /** Best score that joined each member (1 for an override). */
  confidence: Map<string, number>;
  id?: string;
  title?: string;
  positions?: string[][];
}

const memberKey = (m: { source: string; view: EventView }) => `${m.source}\u0000${m.view.contest_id}`;
const byMember = (a: Member, b: Member) => cmp(a.source, b.source) || cmp(a.view.contest_id, b.view.contest_id);

export function mergeVenueCatalogs(catalogs: Readonly<Record<string, VenueCatalog>>, opts: MergeOptions = {}): MergeResult {
  const aliases = opts.aliases ?? aliasTable();
  const mapping = opts.mapping ?? EMPTY_MAPPING;
  const threshold = opts.threshold ?? MATCH_THRESHOLD;
  const sources = Object.keys(catalogs).sort(cmp);
  const warnings: string[] = [];

  // ---- read every contest -------------------------------------------------------------------
  const members = new Map<string, Member>();
  const byContest = new Map<string, Member>();
  for (const source of sources) {
    const cat = catalogs[source]!;
    const contests = new Map(cat.contests.map((c) => [c.id, c]));
    for (const view of describeCatalog(source, cat, aliases)) {
      const prev = byContest.get(view.contest_id);
      if (prev) throw new Error(`contest ${view.contest_id} is in two catalogs (${prev.source}, ${source}); contest ids are global`);
      const m: Member = { source, view, contest: contests.get(view.contest_id)! };
      members.set(memberKey(m), m);
      byContest.set(view.contest_id, m);
    }
  }

  // ---- the mapping file ---------------------------------------------------------------------
  const clusters: Cluster[] = [];
  const clusterOf = new Map<Member, Cluster>();
  const separate = new Set<Member>();
  mapping.merge.forEach((entry, i) => {
    const found: Member[] = [];
    for (const id of entry.contests) {
      const m = byContest.get(id);
      if (m) found.push(m);
      else warnings.push(`mapping merge[${i}]: no catalog lists contest ${id}`);
    }
    const seen = new Map<string, string>();
    for (const m of found) {
      const prev = seen.get(m.source);
      if (prev !== undefined) throw new MatchConfigError(`mapping merge[${i}]: contests ${prev} and ${m.view.contest_id} are both on ${m.source}; a merged contest takes one contest per venue`);
      seen.set(m.source, m.view.contest_id);
    }
    if (found.length < 2) {
      warnings.push(`mapping merge[${i}]: fewer than two of its contests are listed now; nothing merged`);
      return;
    }
    const c: Cluster = { members: found.sort(byMember), by: 'override', confidence: new Map(found.map((m) => [memberKey(m), 1])), id: entry.id, title: entry.title, positions: entry.positions };
    clusters.push(c);
    for (const m of found) clusterOf.set(m, c);
  });
  for (const id of mapping.separate) {
    const m = byContest.get(id);
    if (m) separate.add(m);
    else warnings.push(`mapping separate: no catalog lists contest ${id}`);
  }

  // ---- score candidate pairs within (league, shape) buckets -----------------------------------
  const buckets = new Map<string, Member[]>();
  for (const m of [...members.values()].sort(byMember)) {
    if (clusterOf.has(m) || separate.has(m) || m.view.league === null || m.view.shape === 'other') continue;
    const k = `${m.view.league}\u0000${m.view.shape}`;
    const list = buckets.get(k);
    if (list) list.push(m);
    else buckets.set(k, [m]);
  }
  const best = new Map<Member, { other: Member; detail: ScoreDetail }>();
  const offer = (m: Member, other: Member, detail: ScoreDetail) => {
    const cur = best.get(m);
    const rank = (d: ScoreDetail) => (d.veto ? -1 : d.score);
    if (!cur || rank(detail) > rank(cur.detail) || (rank(detail) === rank(cur.detail) && byMember(other, cur.other) < 0)) best.set(m, { other, detail });
  };
  const pairs: { a: Member; b: Member; score: number }[] = [];
  for (const list of [...buckets.keys()].sort(cmp).map((k) => buckets.get(k)!)) {
    for (let i = 0; i < list.length; i++) {
      for (let j = i + 1; j < list.length; j++) {
        const a = list[i]!;
        const b = list[j]!;
        if (a.source === b.source) continue;
        const d = scorePair(a.view, b.view);
        offer(a, b, d);
        offer(b, a, d);
        if (!d.veto && d.score >= threshold) pairs.push({ a, b, score: d.score });
      }
    }
  }
  pairs.sort((x, y) => y.score - x.score || byMember(x.a, y.a) || byMember(x.b, y.b));
  for (const { a, b, score } of pairs) {
    const ca = clusterOf.get(a);
    const cb = clusterOf.get(b);
    if (ca && ca === cb) continue;
    const ma = ca?.members ?? [a];
    const mb = cb?.members ?? [b];
    // One contest per venue in a merged contest: the better pair taken first keeps its place.
    if (ma.some((x) => mb.some((y) => x.source === y.source))) continue;
    const merged: Cluster = { members: [...ma, ...mb].sort(byMember), by: 'score', confidence: new Map([...(ca?.confidence ?? []), ...(cb?.confidence ?? [])]) };
    for (const m of [a, b]) if (!merged.confidence.has(memberKey(m))) merged.confidence.set(memberKey(m), score);
    if (ca) clusters.splice(clusters.indexOf(ca), 1);
    if (cb) clusters.splice(clusters.indexOf(cb), 1);
    clusters.push(merged);
    for (const m of merged.members) clusterOf.set(m, merged);
  }

  // ---- build ----------------------------------------------------------------------------------
  const out = new Builder(catalogs, sources);
  const decisions: MatchDecision[] = [];
  const positionMap: PositionMap = Object.fromEntries(sources.map((s) => [s, {}]));
  const contestMap: Record<string, Record<string, string>> = Object.fromEntries(sources.map((s) => [s, {}]));
  let alignedPositions = 0;

  const candidateOf = (m: Member): MatchCandidate | null => {
    const b = best.get(m);
    return b ? { partner_id: b.other.source, contest_id: b.other.view.contest_id, title: b.other.view.title, detail: b.detail } : null;
  };

  for (const cluster of [...clusters].sort((x, y) => byMember(x.members[0]!, y.members[0]!))) {
    const r = buildCluster(cluster, aliases, out, warnings);
    alignedPositions += r.aligned;
    for (const m of cluster.members) {
      const counts = r.counts.get(m)!;
      for (const [native, merged] of r.map.get(m)!) positionMap[m.source]![native] = merged;
      if (!r.keptNative.has(m)) contestMap[m.source]![m.view.contest_id] = r.contest.id;
      decisions.push({
        partner_id: m.source,
        contest_id: m.view.contest_id,
        title: m.view.title,
        decision: 'matched',
        by: cluster.by,
        merged_into: r.contest.id,
        confidence: cluster.confidence.get(memberKey(m)) ?? null,
        candidate: cluster.by === 'override' ? null : candidateOf(m),
        positions: counts,
        reason:
          cluster.by === 'override'
            ? 'the mapping file merges it'
            : `${m.view.shape} in ${m.view.league}: ${cluster.members.filter((x) => x !== m).map((x) => `${x.source} ${x.view.contest_id}`).join(', ')}` +
              (counts.loose ? `; ${counts.loose} position(s) kept in the venue's own contest` : ''),
      });
    }
  }

  for (const m of [...members.values()].sort(byMember)) {
    if (clusterOf.has(m)) continue;
    out.keepNative(m.contest.id, null);
    const cand = candidateOf(m);
    const positions = { aligned: 0, mapped: 0, unlinked: 0, loose: m.view.positions.length };
    let decision: MatchDecision['decision'];
    let reason: string;
    if (separate.has(m)) {
      decision = 'separate';
      reason = 'the mapping file keeps it separate';
    } else if (cand && !cand.detail.veto && cand.detail.score >= LOW_CONFIDENCE_FLOOR) {
      const taken = cand.detail.score >= threshold;
      decision = taken ? 'unmatched' : 'low_confidence';
      reason = taken
        ? `its best candidate ${cand.contest_id} was merged with a better match`
        : `best candidate scored ${cand.detail.score} (< ${threshold}): kept apart; merge it in the mapping file if it is the same contest`;
    } else {
      decision = 'unmatched';
      reason =
        sources.length < 2
          ? 'no other venue'
          : m.view.notes[0] ?? (cand?.detail.veto ? `no candidate: ${cand.contest_id} ruled out (${cand.detail.veto})` : m.view.league ? `no ${m.view.shape} in ${m.view.league} on another venue` : 'no candidate');
    }
    decisions.push({ partner_id: m.source, contest_id: m.view.contest_id, title: m.view.title, decision, by: null, merged_into: null, confidence: cand && !cand.detail.veto ? cand.detail.score : null, candidate: cand, positions, reason });
  }
  decisions.sort((a, b) => cmp(a.partner_id, b.partner_id) || cmp(a.contest_id, b.contest_id));

  const report: MatchReport = {
    venues: sources,
    contests: members.size,
    matched: decisions.filter((d) => d.decision === 'matched').length,
    low_confidence: decisions.filter((d) => d.decision === 'low_confidence').length,
    unmatched: decisions.filter((d) => d.decision === 'unmatched' || d.decision === 'separate').length,
    merged_contests: clusters.length,
    aligned_positions: alignedPositions,
    threshold,
    decisions,
    warnings: warnings.sort(cmp),
  };
  return { catalog: out.catalog(), report, position_map: positionMap, contest_map: contestMap };
}

// ---------------------------------------------------------------------------------------------

/** Collects the merged catalog: venue records kept as they are, merged records added. */
class Builder {
  private readonly leagues = new Map<string, League>();
  private readonly participants = new Map<string, Participant>();
  private readonly markets = new Map<string, Market>();
  private readonly partners = new Map<string, Partner>();
  private readonly contests = new Map<string, Contest>();
  private readonly positions = new Map<string, PositionDefinition>();
  private readonly contestMarkets = new Map<string, { contest_id: string; market_id: string }>();
  private readonly contestParticipants = new Map<string, { contest_id: string; participant_id: string; role: string }>();
  private readonly nativePositions = new Map<string, PositionDefinition[]>();
  private readonly nativeContests = new Map<string, Contest>();
  private readonly nativeEntrants = new Map<string, { contest_id: string; participant_id: string; role: string }[]>();
  private readonly nativeLinks = new Map<string, { contest_id: string; market_id: string }[]>();

  constructor(catalogs: Readonly<Record<string, VenueCatalog>>, sources: string[]) {
    for (const s of sources) {
      const c = catalogs[s]!;
      for (const l of c.leagues) if (!this.leagues.has(l.id)) this.leagues.set(l.id, l);
      for (const p of c.participants) if (!this.participants.has(p.id)) this.participants.set(p.id, p);
      for (const m of c.markets) if (!this.markets.has(m.id)) this.markets.set(m.id, m);
      for (const p of c.partners) if (!this.partners.has(p.partner_id)) this.partners.set(p.partner_id, p);
      for (const k of c.contests) this.nativeContests.set(k.id, k);
      for (const p of c.positions) {
        const list = this.nativePositions.get(p.contest_id);
        if (list) list.push(p);
        else this.nativePositions.set(p.contest_id, [p]);
      }
      for (const e of c.contest_participants ?? []) {
        const list = this.nativeEntrants.get(e.contest_id);
        if (list) list.push(e);
        else this.nativeEntrants.set(e.contest_id, [e]);
      }
      for (const l of c.contest_markets) {
        const list = this.nativeLinks.get(l.contest_id);
        if (list) list.push(l);
        else this.nativeLinks.set(l.contest_id, [l]);
      }
    }
  }

  /** Keeps a venue contest with the positions in `only` (all of them when null). */
  keepNative(contestId: string, only: Set<string> | null): void {
    const c = this.nativeContests.get(contestId);
    if (!c) return;
    const kept = (this.nativePositions.get(contestId) ?? []).filter((p) => only === null || only.has(p.position_hash));
    if (only !== null && kept.length === 0) return;
    this.contests.set(c.id, c);
    const participants = new Set<string>();
    for (const p of kept) {
      this.positions.set(p.position_hash, p);
      this.contestMarkets.set(`${c.id}\u0000${p.market_id}`, { contest_id: c.id, market_id: p.market_id });
      participants.add(p.participant_id);
    }
    // Kept whole, a contest keeps every market link its venue gave it (positions may not list them all).
    if (only === null) for (const l of this.nativeLinks.get(contestId) ?? []) this.contestMarkets.set(`${l.contest_id}\u0000${l.market_id}`, l);
    for (const e of this.nativeEntrants.get(contestId) ?? []) if (only === null || participants.has(e.participant_id)) this.contestParticipants.set(`${e.contest_id}\u0000${e.participant_id}`, e);
  }

  league(l: League): void {
    this.leagues.set(l.id, l);
  }

  participant(p: Participant): void {
    if (!this.participants.has(p.id)) this.participants.set(p.id, p);
  }

  market(m: Market): void {
    this.markets.set(m.id, { ...m, side_keys: [...m.side_keys] });
  }

  contest(c: Contest): void {
    this.contests.set(c.id, c);
  }

  position(p: PositionDefinition): void {
    this.positions.set(p.position_hash, p);
    this.contestMarkets.set(`${p.contest_id}\u0000${p.market_id}`, { contest_id: p.contest_id, market_id: p.market_id });
  }

  entrant(contestId: string, participantId: string): void {
    this.contestParticipants.set(`${contestId}\u0000${participantId}`, { contest_id: contestId, participant_id: participantId, role: 'entrant' });
  }

  /** A venue contest's positions, sorted by hash (so nothing depends on the venue's listing order). */
  nativePositionsOf(contestId: string): PositionDefinition[] {
    return [...(this.nativePositions.get(contestId) ?? [])].sort((a, b) => cmp(a.position_hash, b.position_hash));
  }

  catalog(): MergedCatalog {
    const sorted = <T>(m: Map<string, T>): T[] => [...m.keys()].sort(cmp).map((k) => m.get(k)!);
    return {
      leagues: sorted(this.leagues),
      participants: sorted(this.participants),
      contests: sorted(this.contests),
      markets: sorted(this.markets),
      contest_markets: sorted(this.contestMarkets),
      positions: sorted(this.positions),
      partners: sorted(this.partners),
      contest_participants: sorted(this.contestParticipants),
    };
  }
}

const outcomeKey = (o: Outcome) => `${o.kind}|${o.line === null ? '' : formatVariable(o.line)}|${o.pick}`;

const signed = (x: number) => (x > 0 ? `+${formatVariable(x)}` : formatVariable(x));

interface ClusterResult {
  contest: Contest;
  aligned: number;
  counts: Map<Member, MatchDecision['positions']>;
  map: Map<Member, Map<string, string | null>>;
  keptNative: Set<Member>;
}

function buildCluster(cluster: Cluster, aliases: AliasTable, out: Builder, warnings: string[]): ClusterResult {
  const ms = cluster.members;
  const first = ms[0]!;
  const leagueKey = ms.every((m) => m.view.league !== null && m.view.league === first.view.league) ? first.view.league : null;
  const shape = ms.every((m) => m.view.shape === first.view.shape) ? first.view.shape : 'other';
  const id = cluster.id ?? `mx_${fnv64Hex(ms.map((m) => m.view.contest_id).join('|'))}`;
  const leagueInfo = leagueKey ? aliases.league(leagueKey) : null;
  const leagueId = leagueInfo ? `mx_${leagueInfo.key}` : first.contest.league_id;
  if (leagueInfo) out.league({ id: leagueId, name: leagueInfo.name, participant_type: leagueInfo.participant_type, status: 'active' });

  const participantId = (key: string) => `${leagueId}_${key}`;
  // A participant the table does not name (an open league) takes the first venue's spelling.
  const spelled = new Map<string, string>();
  if (leagueKey) {
    for (const m of ms) {
      for (const p of out.nativePositionsOf(m.view.contest_id)) {
        const k = aliases.resolve(leagueKey, p.participant_name);
        if (k && !spelled.has(k)) spelled.set(k, p.participant_name);
      }
    }
  }
  const nameOf = (key: string): string => {
    if (key === DRAW) return 'Draw';
    if (key === 'over') return 'Over';
    if (key === 'under') return 'Under';
    return (leagueKey && aliases.displayName(leagueKey, key)) || spelled.get(key) || key.replace(/_/g, ' ');
  };
  const sides = shape === 'game' ? first.view.participants : [];
  const home = ms.map((m) => m.view.home).find((h) => h !== null) ?? null;
  const title =
    cluster.title ??
    (shape === 'game' && sides.length === 2
      ? home
        ? `${nameOf(sides.find((s) => s !== home)!)} at ${nameOf(home)}`
        : `${nameOf(sides[0]!)} vs ${nameOf(sides[1]!)}`
      : first.contest.title);
  const startsAt = ms.map((m) => m.contest.starts_at).sort(cmp)[0]!;
  const contest: Contest = {
    id,
    league_id: leagueId,
    title,
    type: shape === 'game' ? 'match' : shape === 'outright' ? 'outright' : first.contest.type,
    parent_contest_id: null,
    starts_at: startsAt,
    status: ms.some((m) => m.contest.status === 'open') ? 'open' : first.contest.status,
    has_markets: true,
    tags: {
      source: 'matched',
      event_title: title,
      ...(home && sides.length === 2 ? { home_participant_id: participantId(home), away_participant_id: participantId(sides.find((s) => s !== home)!) } : {}),
      members: ms.map((m) => ({ partner_id: m.source, contest_id: m.view.contest_id, title: m.view.title, confidence: cluster.confidence.get(memberKey(m)) ?? null })),
      matched_by: cluster.by,
    },
    created_at: ms.map((m) => m.contest.created_at).sort(cmp)[0]!,
    updated_at: ms.map((m) => m.contest.updated_at).sort(cmp).at(-1)!,
  };
  out.contest(contest);

  const map = new Map<Member, Map<string, string | null>>(ms.map((m) => [m, new Map()]));
  const counts = new Map<Member, MatchDecision['positions']>(ms.map((m) => [m, { aligned: 0, mapped: 0, unlinked: 0, loose: 0 }]));
  /** merged hash → members quoting it */
  const quotedBy = new Map<string, Set<Member>>();
  const loose = new Map<Member, Set<string>>(ms.map((m) => [m, new Set()]));
  const assign = (m: Member, native: string, merged: string | null) => {
    map.get(m)!.set(native, merged);
    if (merged !== null) {
      let s = quotedBy.get(merged);
      if (!s) quotedBy.set(merged, (s = new Set()));
      s.add(m);
    } else counts.get(m)!.unlinked++;
  };

  // The mapping file's position groups come first: they override what the reader made of them.
  const explicit = new Map<string, number>();
  (cluster.positions ?? []).forEach((group, j) => group.forEach((h) => explicit.set(h, j)));
  const groupDefs = new Map<number, PositionDefinition>();
  const groupUsed = new Set<string>();
  for (const m of ms) {
    for (const p of out.nativePositionsOf(m.view.contest_id)) {
      const j = explicit.get(p.position_hash);
      if (j === undefined) continue;
      let def = groupDefs.get(j);
      if (!def) {
        const hash = positionHash({ contest_id: id, market_id: p.market_id, side_key: p.side_key, variable: p.variable, participant_id: p.participant_id, timeframe: p.timeframe });
        def = { ...p, position_hash: hash, contest_id: id, group_key: `${id}/${p.group_key}`, ladder_key: p.ladder_key === null ? null : `${id}/${p.ladder_key}` };
        groupDefs.set(j, def);
        out.position(def);
      }
      if (groupUsed.has(`${memberKey(m)}\u0000${j}`)) throw new MatchConfigError(`mapping: ${id} positions[${j}] holds two positions of ${m.source} (one is ${p.position_hash}); a group takes one position per venue`);
      groupUsed.add(`${memberKey(m)}\u0000${j}`);
      assign(m, p.position_hash, def.position_hash);
    }
  }
  for (const h of explicit.keys()) {
    if (!ms.some((m) => map.get(m)!.has(h))) warnings.push(`mapping: position ${h} is not listed by ${id}'s contests now`);
  }

  // Then every reading, by what it pays on.
  const byKey = new Map<string, PositionDefinition>();
  for (const m of ms) {
    const taken = new Set<string>();
    for (const r of m.view.positions) {
      if (map.get(m)!.has(r.position_hash)) continue;
      if (r.as === 'loose' || leagueKey === null) {
        loose.get(m)!.add(r.position_hash);
        continue;
      }
      if (r.as === 'complement') {
        assign(m, r.position_hash, null);
        continue;
      }
      const o = r.outcome;
      const k = outcomeKey(o);
      if (taken.has(k)) {
        // The venue lists the same outcome twice: the first (by hash) is its price, the other stays its own.
        loose.get(m)!.add(r.position_hash);
        continue;
      }
      taken.add(k);
      let def = byKey.get(k);
      if (!def) {
        def = mergedPosition(id, contest.type, o, sides, participantId, nameOf);
        byKey.set(k, def);
        out.market(MERGED_MARKETS[def.market_id as keyof typeof MERGED_MARKETS]);
        out.position(def);
        out.participant({ id: def.participant_id, league_id: leagueId, name: nameOf(o.pick), abbr: null, image_url: null, country: null });
        if (o.kind !== 'total' && o.pick !== DRAW) out.entrant(id, def.participant_id);
      }
      assign(m, r.position_hash, def.position_hash);
    }
  }

  const keptNative = new Set<Member>();
  for (const m of ms) {
    const l = loose.get(m)!;
    const c = counts.get(m)!;
    c.loose = l.size;
    if (l.size > 0) {
      keptNative.add(m);
      out.keepNative(m.view.contest_id, l);
    }
  }
  let aligned = 0;
  for (const [, who] of quotedBy) {
    if (who.size > 1) aligned++;
    for (const m of who) counts.get(m)![who.size > 1 ? 'aligned' : 'mapped']++;
  }
  return { contest, aligned, counts, map, keptNative };
}

/** The merged position for an outcome (see MERGED_MARKETS). */
function mergedPosition(
  cid: string,
  type: string,
  o: Outcome,
  sides: string[],
  participantId: (k: string) => string,
  nameOf: (k: string) => string,
): PositionDefinition {
  const def = (market: Market, side: string, variable: number, pid: string, title: string, group: string, ladder: string | null): PositionDefinition => ({
    position_hash: positionHash({ contest_id: cid, market_id: market.id, side_key: side, variable, participant_id: pid, timeframe: MERGED_TIMEFRAME }),
    contest_id: cid,
    title,
    market_id: market.id,
    market_key: market.key,
    side_key: side,
    variable,
    participant_id: pid,
    participant_name: nameOf(o.pick),
    participant_image_url: null,
    timeframe: MERGED_TIMEFRAME,
    group_key: group,
    ladder_key: ladder,
  });
  if (o.kind === 'winner') {
    const market = type === 'outright' ? MERGED_MARKETS.tournament_winner : MERGED_MARKETS.winner;
    return def(market, 'yes', 0, participantId(o.pick), o.pick === DRAW ? 'Draw' : `${nameOf(o.pick)} to win`, `${cid}/${market.id}`, null);
  }
  const line = o.line ?? 0;
  if (o.kind === 'total') {
    return def(MERGED_MARKETS.total, o.pick, line, participantId(o.pick), `${o.pick === 'over' ? 'Over' : 'Under'} ${formatVariable(line)}`, `${cid}/total/${formatVariable(line)}`, `${cid}/total`);
  }
  // A handicap pair is {favourite −x, underdog +x}: named by the line's size and the favourite.
  const opponent = sides.find((s) => s !== o.pick) ?? 'other';
  const favourite = line < 0 ? o.pick : line > 0 ? opponent : [o.pick, opponent].sort(cmp)[0]!;
  return def(
    MERGED_MARKETS.handicap,
    'yes',
    line,
    participantId(o.pick),
    `${nameOf(o.pick)} ${signed(line)}`,
    `${cid}/handicap/${formatVariable(Math.abs(line))}/${favourite}`,
    `${cid}/handicap`,
  );
}
