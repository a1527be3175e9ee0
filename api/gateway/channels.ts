/**
 * The stream's channel table (spec "WebSocket stream"; OPERATOR-INTERFACE "Stream access") and the
 * validation of client messages into subscriptions. Pure: no sockets, no I/O, so every rule here is
 * unit-testable and the gateway only does bookkeeping and delivery.
 */
import { canonicalEntitlement, missingEntitlements } from '../../src/domain/plans.js';
import { isConfidence, SIGNAL_TYPES } from '../../src/domain/signals.js';
import { STREAM_CHANNELS, type StreamChannel } from '../../src/domain/stream.js';

/** Spec "Limits": 200 contests per connection per channel. Also caps the other id lists. */
export const MAX_CONTESTS_PER_CHANNEL = 200;
const MAX_IDS = 200;
const KNOWN_SIGNAL_TYPES = new Set<string>(SIGNAL_TYPES);

/**
 * How a channel reaches its subscribers:
 * - topic: the payload is the same for everyone, so uWS topics fan it out natively (fast path);
 * - direct: the gateway visits each subscriber of the contest (per-connection seq or filters);
 * - private: routed by the account an event belongs to (orders, balance).
 */
export type Delivery = 'topic' | 'direct' | 'private';

type FieldKind = 'ids' | 'signal_types' | 'number' | 'nonneg' | 'bool' | 'confidence' | 'strength';

export interface ChannelRule {
  channel: StreamChannel;
  /** Entitlements a subscribe needs (beyond a valid key). */
  requires: readonly string[];
  contests: 'required' | 'optional' | 'none';
  delivery: Delivery;
  /** The channel's own filter fields (besides contest_ids). */
  fields: Readonly<Record<string, FieldKind>>;
}

const RT = 'stream:realtime';

export const CHANNEL_RULES: Readonly<Record<StreamChannel, ChannelRule>> = {
  liquidity: { channel: 'liquidity', requires: [], contests: 'optional', delivery: 'topic', fields: {} },
  contest_state: { channel: 'contest_state', requires: [RT], contests: 'optional', delivery: 'topic', fields: {} },
  ticks: { channel: 'ticks', requires: [RT, 'stream:ticks'], contests: 'required', delivery: 'direct', fields: {} },
  trades: { channel: 'trades', requires: [RT, 'trades:read'], contests: 'required', delivery: 'direct', fields: { min_notional_usd: 'nonneg' } },
  arbitrage: {
    channel: 'arbitrage',
    requires: [RT, 'arbitrage:read'],
    contests: 'optional',
    delivery: 'direct',
    fields: { league_ids: 'ids', after_fee_only: 'bool', min_roi_pct: 'number', min_after_fee_roi_pct: 'number', min_investment: 'nonneg' },
  },
  signal: {
    channel: 'signal',
    requires: [RT, 'signals:read'],
    contests: 'optional',
    delivery: 'direct',
    fields: { league_ids: 'ids', types: 'signal_types', min_confidence: 'confidence', min_strength: 'strength', include_beta: 'bool' },
  },
  orders: { channel: 'orders', requires: [RT], contests: 'none', delivery: 'private', fields: { all: 'bool', account_ids: 'ids' } },
  balance: { channel: 'balance', requires: [RT], contests: 'none', delivery: 'private', fields: { all: 'bool', account_ids: 'ids' } },
};

/** Seeing other accounts' orders and balances (all, account_ids) is an organization capability. */
export const OTHER_ACCOUNTS_ENTITLEMENT = 'connect:trade';

/** Channels the spec names that this service does not offer (organization market-making). */
const UNAVAILABLE_CHANNELS = new Set(['quote', 'exposure']);

export type AccountScope = { kind: 'own' } | { kind: 'all' } | { kind: 'ids'; ids: string[] };

/** One channel subscription of one connection: its contest list and normalized filters. */
export interface Subscription {
  channel: StreamChannel;
  /** null: every contest. */
  contestIds: string[] | null;
  /** arbitrage and signal: null means every league. */
  leagueIds: string[] | null;
  /** The channel's filters, normalized (absent when not given). */
  filters: Readonly<Record<string, number | boolean | string | string[]>>;
  /** orders and balance only. */
  accounts: AccountScope | null;
}

export type ClientMessage =
  | { action: 'ping' }
  /** resumeFrom: contest id → the event id to replay after (docs/stream.md "Event ids and resume"); null when not asked. */
  | { action: 'subscribe'; sub: Subscription; resumeFrom: ReadonlyMap<string, string> | null }
  | { action: 'unsubscribe'; channel: StreamChannel; contestIds: string[] | null };

export interface ProtocolError {
  code: 'invalid_message' | 'invalid_channel' | 'entitlement_required' | 'contest_ids_required' | 'account_forbidden' | 'resume_unavailable' | 'events_missed';
  message: string;
  channel?: string;
  missing?: string[];
  /** resume_unavailable: the contest whose events could not be replayed. */
  contest_id?: string;
}

export type Parsed = { ok: true; msg: ClientMessage } | { ok: false; error: ProtocolError };

const fail = (code: ProtocolError['code'], message: string, extra: Partial<ProtocolError> = {}): Parsed => ({ ok: false, error: { code, message, ...extra } });

const isStreamChannel = (c: string): c is StreamChannel => (STREAM_CHANNELS as readonly string[]).includes(c);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Validates an id list: non-empty strings, deduplicated in order. Returns an error text or the list. */
function idList(name: string, v: unknown, max: number): string[] | string {
  if (!Array.isArray(v)) return `${name} must be an array of strings`;
  const out: string[] = [];
  const seen = new Set<string>();
  for (const x of v) {
    if (typeof x !== 'string' || x.length === 0 || x.length > 200) return `${name} must hold non-empty strings (at most 200 characters each)`;
    if (!seen.has(x)) {
      seen.add(x);
      out.push(x);
    }
  }
  if (out.length === 0) return `${name} must list at least one id; omit it to mean every one`;
  if (out.length > max) return `${name} lists ${out.length} ids; at most ${max} per channel per connection`;
  return out;
}

/**
 * Validates resume_from: an object of at most MAX_CONTESTS_PER_CHANNEL contest id → event id
 * entries. Event ids are opaque here: one the log never issued is answered by the gateway with
 * resume_unavailable (spec), not refused. Returns an error text or the map (null for {}).
 */
function resumeFrom(v: unknown, contestIds: readonly string[] | null): ReadonlyMap<string, string> | null | string {
  if (!isRecord(v)) return 'resume_from must be an object of contest id → event id, e.g. {"<contest_id>":"<event_id>"}';
  const entries = Object.entries(v);
  if (entries.length > MAX_CONTESTS_PER_CHANNEL) return `resume_from names ${entries.length} contests; at most ${MAX_CONTESTS_PER_CHANNEL}`;
  const out = new Map<string, string>();
  for (const [contest, id] of entries) {
    if (contest.length === 0 || contest.length > 200) return 'resume_from keys must be contest ids (1 to 200 characters)';
    if (typeof id !== 'string' || id.length === 0 || id.length > 200) return `resume_from.${contest} must be an event_id string as received (1 to 200 characters)`;
    out.set(contest, id);
  }
  if (contestIds) {
    const listed = new Set(contestIds);
    const stray = [...out.keys()].filter((c) => !listed.has(c));
    if (stray.length) return `resume_from names contest(s) not in contest_ids: ${stray.join(', ')}; resume only contests you subscribe to`;
  }
  return out.size ? out : null;
}

function field(name: string, kind: FieldKind, v: unknown): number | boolean | string | string[] | { error: string } {
  switch (kind) {
    case 'ids': {
      const r = idList(name, v, MAX_IDS);
      return typeof r === 'string' ? { error: r } : r;
    }
    case 'signal_types': {
      // A misspelt type would otherwise match nothing, silently (GET /signals answers it with a 400 too).
      const r = idList(name, v, MAX_IDS);
      if (typeof r === 'string') return { error: r };
      const unknown = r.filter((t) => !KNOWN_SIGNAL_TYPES.has(t));
      return unknown.length ? { error: `${name} names ${unknown.map((t) => JSON.stringify(t)).join(', ')}, not a signal type; types: ${SIGNAL_TYPES.join(', ')}` } : r;
    }
    case 'bool':
      return typeof v === 'boolean' ? v : { error: `${name} must be a boolean` };
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? v : { error: `${name} must be a number` };
    case 'nonneg':
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : { error: `${name} must be a number of at least 0` };
    case 'strength':
      return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 100 ? v : { error: `${name} must be a number between 0 and 100` };
    case 'confidence':
      return isConfidence(v) ? v : { error: `${name} must be one of low, medium, high` };
  }
}

/**
 * Parses one client text frame against the key's entitlements. Checks run in the order a caller
 * can act on: JSON → action → channel → entitlements → contest_ids → filters. Nothing here creates
 * anything; the gateway applies a successful subscribe.
 */
export function parseClientMessage(text: string, held: ReadonlySet<string>): Parsed {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return fail('invalid_message', 'messages must be JSON objects, e.g. {"action":"subscribe","channel":"liquidity","contest_ids":["..."]}');
  }
  if (!isRecord(raw)) return fail('invalid_message', 'messages must be JSON objects with an "action" field');
  const action = raw.action;
  if (action === 'ping') return { ok: true, msg: { action: 'ping' } };
  if (action !== 'subscribe' && action !== 'unsubscribe') {
    return fail('invalid_message', `unknown action ${JSON.stringify(action ?? null)}; use subscribe, unsubscribe or ping`);
  }
  const ch = raw.channel;
  if (typeof ch !== 'string' || !isStreamChannel(ch)) {
    const why = typeof ch === 'string' && UNAVAILABLE_CHANNELS.has(ch) ? ' is not available on this service' : ' is not a channel';
    return fail('invalid_channel', `${JSON.stringify(ch ?? null)}${why}; channels: ${STREAM_CHANNELS.join(', ')}`, {
      channel: typeof ch === 'string' ? ch : undefined,
    });
  }
  const rule = CHANNEL_RULES[ch];

  if (action === 'unsubscribe') {
    // Lenient on purpose: an unsubscribe carrying the subscribe's filters still unsubscribes.
    if (raw.contest_ids === undefined || raw.contest_ids === null || rule.contests === 'none') {
      return { ok: true, msg: { action: 'unsubscribe', channel: ch, contestIds: null } };
    }
    const ids = idList('contest_ids', raw.contest_ids, MAX_CONTESTS_PER_CHANNEL);
    if (typeof ids === 'string') return fail('invalid_message', ids, { channel: ch });
    return { ok: true, msg: { action: 'unsubscribe', channel: ch, contestIds: ids } };
  }

  const missing = missingEntitlements(held, rule.requires);
  if (missing.length) {
    return fail('entitlement_required', `the ${ch} channel needs ${missing.join(', ')}, which this key's plan does not include`, { channel: ch, missing });
  }

  const allowed = new Set(['action', 'channel', ...Object.keys(rule.fields), ...(rule.contests === 'none' ? [] : ['contest_ids', 'resume_from'])]);
  const unknown = Object.keys(raw).filter((k) => !allowed.has(k));
  if (unknown.length) {
    // A typo such as contest_id would otherwise silently subscribe to every contest.
    return fail('invalid_message', `unknown field(s) ${unknown.join(', ')} for the ${ch} channel; allowed: ${[...allowed].slice(2).join(', ') || 'none'}`, {
      channel: ch,
    });
  }

  let contestIds: string[] | null = null;
  const rawContests = raw.contest_ids;
  if (rule.contests !== 'none' && rawContests !== undefined && rawContests !== null) {
    if (Array.isArray(rawContests) && rawContests.length === 0 && rule.contests === 'required') {
      return fail('contest_ids_required', `the ${ch} channel needs contest_ids (1 to ${MAX_CONTESTS_PER_CHANNEL} contest ids)`, { channel: ch });
    }
    const ids = idList('contest_ids', rawContests, MAX_CONTESTS_PER_CHANNEL);
    if (typeof ids === 'string') return fail('invalid_message', ids, { channel: ch });
    contestIds = ids;
  } else if (rule.contests === 'required') {
    return fail('contest_ids_required', `the ${ch} channel needs contest_ids (1 to ${MAX_CONTESTS_PER_CHANNEL} contest ids)`, { channel: ch });
  }

  const filters: Record<string, number | boolean | string | string[]> = {};
  for (const [name, kind] of Object.entries(rule.fields)) {
    const v = raw[name];
    if (v === undefined || v === null) continue;
    const r = field(name, kind, v);
    if (typeof r === 'object' && !Array.isArray(r)) return fail('invalid_message', r.error, { channel: ch });
    filters[name] = r;
  }

  let accounts: AccountScope | null = null;
  let leagueIds: string[] | null = null;
  if (rule.delivery === 'private') {
    const all = filters.all === true;
    const ids = filters.account_ids as string[] | undefined;
    if (all && ids) return fail('invalid_message', 'send either all: true or account_ids, not both', { channel: ch });
    accounts = all ? { kind: 'all' } : ids ? { kind: 'ids', ids } : { kind: 'own' };
    if (accounts.kind !== 'own' && !held.has(canonicalEntitlement(OTHER_ACCOUNTS_ENTITLEMENT))) {
      return fail('entitlement_required', `${ch} for other accounts (all or account_ids) needs ${OTHER_ACCOUNTS_ENTITLEMENT}`, {
        channel: ch,
        missing: [OTHER_ACCOUNTS_ENTITLEMENT],
      });
    }
    delete filters.all;
    delete filters.account_ids;
  } else if (filters.league_ids) {
    leagueIds = filters.league_ids as string[];
    delete filters.league_ids;
  }

  let resume: ReadonlyMap<string, string> | null = null;
  if (raw.resume_from !== undefined && raw.resume_from !== null) {
    const r = resumeFrom(raw.resume_from, contestIds);
    if (typeof r === 'string') return fail('invalid_message', r, { channel: ch });
    resume = r;
  }

  return { ok: true, msg: { action: 'subscribe', sub: { channel: ch, contestIds, leagueIds, filters, accounts }, resumeFrom: resume } };
}

/** uWS topic names for topic channels. Distinct prefixes so no contest id can collide with "every contest". */
export const contestTopic = (channel: StreamChannel, contestId: string): string => `c\u0001${channel}\u0001${contestId}`;
export const everyContestTopic = (channel: StreamChannel): string => `a\u0001${channel}`;
