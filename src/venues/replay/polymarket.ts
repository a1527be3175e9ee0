/**
 * Polymarket on recorded payloads: Gamma `/events`, CLOB `/book` and `/books`, and the market
 * channel (`/ws/market`), on Polymarket's paths (the server mounts each host under a prefix).
 *
 * Gamma `GET /events` answers the recorded events in file order, filtered by `active`, `closed` and
 * `tag_id` and paged by `limit`/`offset` (the `order` parameter is not applied).
 *
 * Books: every market the adapter would list (both outcome tokens) is served one book. A market
 * keeps a book recorded for one of its own tokens; a market without one borrows the next recorded
 * book no listed market owns (in file order), so the replay can run although no recording holds a
 * catalog and the books of its own tokens; a market left over has no book (`/book` answers 404, no
 * snapshot is sent). The other token's book is the recorded one mirrored (a bid at p is an offer
 * at 1 − p of the complement), which is how the CLOB shows a binary market's two books.
 *
 * Frames: the recorded `price_change`, `last_trade_price` and `tick_size_change` frames of a
 * recorded book's market go with that book, in timestamp order, re-keyed onto the tokens it now
 * serves (its own token, and the other asset of the recorded market onto the complement). A
 * subscription gets the books of its tokens as one array (as the venue does), then those frames.
 * `PING` is answered `PONG`. REST serves the state after every recorded change (the last state).
 */
import { buildPolymarketCatalog } from '../polymarket/catalog.js';
import type { GammaEvent } from '../polymarket/messages.js';
import { parseGammaEvent } from '../polymarket/parse.js';
import type { HttpAnswer } from './kalshi.js';
import type { Json, PolymarketRecordings } from './recordings.js';
import type { ServerSocket } from './ws.js';

/** How a listed market's book came to be served. */
export interface PmBookAssignment {
  token_id: string;
  complement_token_id: string;
  /** Where the recorded book came from (file, or file:line). */
  from: string;
  /** The recorded asset id, when it is not one of this market's tokens (a borrowed book). */
  borrowed_from: string | null;
}

/** price → [price text, size text]; keys are micro-prices so "0.3" and "0.300" are one level. */
type Side = Map<number, [string, string]>;

interface ServedMarket {
  condition_id: string;
  anchor: string;
  other: string;
  /** The recorded book's own fields (timestamp, hash, tick_size, ...), sides excluded. */
  meta: Json;
  initial: { bids: Side; asks: Side };
  final: { bids: Side; asks: Side };
  /** Frames after the book, re-keyed, in timestamp order. */
  frames: Json[];
}

const micro = (p: string) => Math.round(Number(p) * 1e6);

function sideOf(levels: unknown): Side {
  const out: Side = new Map();
  if (!Array.isArray(levels)) return out;
  for (const l of levels as { price?: unknown; size?: unknown }[]) {
    if (typeof l?.price !== 'string' || typeof l?.size !== 'string' || !(Number(l.size) > 0)) continue;
    out.set(micro(l.price), [l.price, l.size]);
  }
  return out;
}

const copy = (b: { bids: Side; asks: Side }) => ({ bids: new Map(b.bids), asks: new Map(b.asks) });

/** 1 − p, written with p's decimals. */
function complementText(p: string): string {
  const dec = p.includes('.') ? p.length - p.indexOf('.') - 1 : 0;
  const scale = 10 ** dec;
  return ((scale - Math.round(Number(p) * scale)) / scale).toFixed(dec);
}

/** The venue's order: bids ascending, asks descending (the best level of each last). */
function levelsOut(side: Side, asc: boolean): { price: string; size: string }[] {
  return [...side.entries()].sort((a, b) => (asc ? a[0] - b[0] : b[0] - a[0])).map(([, [price, size]]) => ({ price, size }));
}

function mirror(b: { bids: Side; asks: Side }): { bids: Side; asks: Side } {
  const flip = (s: Side): Side => {
    const out: Side = new Map();
    for (const [, [p, size]] of s) {
      const c = complementText(p);
      out.set(micro(c), [c, size]);
    }
    return out;
  };
  return { bids: flip(b.asks), asks: flip(b.bids) };
}

export class PolymarketReplay {
  readonly events: GammaEvent[];
  readonly assignments: PmBookAssignment[] = [];
  private readonly markets: ServedMarket[] = [];
  private readonly byToken = new Map<string, ServedMarket>();
  private readonly sockets = new Map<ServerSocket, Set<string>>();

  constructor(
    rec: PolymarketRecordings,
    private readonly opts: { loopMs?: number } = {},
  ) {
    this.events = rec.events;
    const listed = rec.events.filter((e) => e.active === true && e.closed !== true);
    const cat = buildPolymarketCatalog(listed.map(parseGammaEvent));
    const pairs: { yes: string; no: string; condition: string; negRisk: boolean; tick: number; minSize: number }[] = [];
    for (const t of cat.tokens) if (t.outcome_index === 0) pairs.push({ yes: t.token_id, no: t.complement_token_id, condition: t.condition_id, negRisk: t.neg_risk, tick: t.tick_size, minSize: t.min_order_size });
    const tokenPair = new Map<string, (typeof pairs)[number]>();
    for (const p of pairs) tokenPair.set(p.yes, p).set(p.no, p);

    const owned = new Map<(typeof pairs)[number], { file: string; book: Json }>();
    const spare: { file: string; book: Json }[] = [];
    for (const b of rec.books) {
      const pair = tokenPair.get(String(b.book.asset_id));
      if (pair && !owned.has(pair)) owned.set(pair, b);
      else spare.push(b);
    }
    for (const pair of pairs) {
      const own = owned.get(pair);
      const b = own ?? spare.shift();
      if (!b) continue;
      const recordedAsset = String(b.book.asset_id);
      const anchor = own ? recordedAsset : pair.yes;
      const other = anchor === pair.yes ? pair.no : pair.yes;
      const { bids, asks, buys, sells, event_type: _e, ...meta } = b.book;
      const initial = { bids: sideOf(bids ?? buys), asks: sideOf(asks ?? sells) };
      const recordedMarket = String(b.book.market ?? '');
      const rekey = (asset: unknown): string => (asset === recordedAsset ? anchor : other);
      const mine = (f: Json) => recordedMarket !== '' && f.market === recordedMarket;
      const frames: Json[] = [
        ...rec.priceChanges.filter(mine).map((f): Json => ({ ...f, market: pair.condition, price_changes: (f.price_changes as Json[]).map((it) => ({ ...it, asset_id: rekey(it.asset_id) })) })),
        ...rec.trades.filter(mine).map((f): Json => ({ ...f, market: pair.condition, asset_id: rekey(f.asset_id) })),
        ...rec.tickSizeChanges.filter(mine).map((f): Json => ({ ...f, market: pair.condition, asset_id: rekey(f.asset_id) })),
      ].sort((x, y) => Number(x.timestamp ?? 0) - Number(y.timestamp ?? 0));
      const final = copy(initial);
      for (const f of frames) {
        if (f.event_type !== 'price_change') continue;
        for (const it of f.price_changes as { asset_id: string; price: string; size: string; side: string }[]) {
          if (it.asset_id !== anchor) continue;
          const side = it.side === 'BUY' ? final.bids : final.asks;
          if (Number(it.size) > 0) side.set(micro(it.price), [it.price, it.size]);
          else side.delete(micro(it.price));
        }
      }
      const served: ServedMarket = {
        condition_id: pair.condition,
        anchor,
        other,
        meta: { ...meta, market: pair.condition, neg_risk: pair.negRisk, ...(meta.min_order_size === undefined ? { min_order_size: String(pair.minSize) } : {}), ...(meta.tick_size === undefined ? { tick_size: String(pair.tick) } : {}) },
        initial,
        final,
        frames,
      };
      this.markets.push(served);
      this.byToken.set(pair.yes, served).set(pair.no, served);
      this.assignments.push({ token_id: anchor, complement_token_id: other, from: b.file, borrowed_from: own ? null : recordedAsset });
    }
  }

  /** The book served for a token (REST shape, last state), or null. */
  book(tokenId: string, state: 'initial' | 'final' = 'final'): Json | null {
    const m = this.byToken.get(tokenId);
    if (!m) return null;
    const b = tokenId === m.anchor ? m[state] : mirror(m[state]);
    const ltp = typeof m.meta.last_trade_price === 'string' && m.meta.last_trade_price !== '' && tokenId !== m.anchor ? { last_trade_price: complementText(m.meta.last_trade_price) } : {};
    return { ...m.meta, ...ltp, asset_id: tokenId, bids: levelsOut(b.bids, true), asks: levelsOut(b.asks, false) };
  }

  // ---- REST ------------------------------------------------------------------------------------

  gamma(path: string, q: URLSearchParams): HttpAnswer {
    if (path !== '/events') return { status: 404, body: { error: `the replay has no recording of GET ${path}` } };
    const flag = (k: string) => (q.has(k) ? q.get(k) === 'true' : null);
    const active = flag('active');
    const closed = flag('closed');
    const tag = q.get('tag_id');
    const list = this.events.filter(
      (e) => (active === null || (e.active === true) === active) && (closed === null || (e.closed === true) === closed) && (!tag || (e.tags ?? []).some((t) => String(t.id) === tag)),
    );
    const offset = Math.max(Number(q.get('offset') ?? 0) || 0, 0);
    const limit = Math.min(Math.max(Number(q.get('limit') ?? 100) || 100, 1), 1000);
    return { status: 200, body: list.slice(offset, offset + limit) };
  }

  clob(method: string, path: string, q: URLSearchParams, body: unknown): HttpAnswer {
    if (method === 'GET' && path === '/book') {
      const b = this.book(q.get('token_id') ?? '');
      return b ? { status: 200, body: b } : { status: 404, body: { error: 'No orderbook exists for the requested token id' } };
    }
    if (method === 'POST' && path === '/books') {
      if (!Array.isArray(body)) return { status: 400, body: { error: 'body must be an array of {token_id}' } };
      return { status: 200, body: body.flatMap((x) => (typeof x?.token_id === 'string' && this.book(x.token_id) ? [this.book(x.token_id)] : [])) };
    }
    return { status: 404, body: { error: `the replay has no recording of ${method} ${path}` } };
  }

  // ---- the market channel ----------------------------------------------------------------------

  attach(socket: ServerSocket): void {
    this.sockets.set(socket, new Set());
    socket.onText = (text) => {
      if (text === 'PING') return socket.sendText('PONG');
      let sub: { assets_ids?: unknown };
      try {
        sub = JSON.parse(text);
      } catch {
        return;
      }
      if (!Array.isArray(sub.assets_ids)) return;
      const ids = sub.assets_ids.filter((x): x is string => typeof x === 'string');
      const mine = this.sockets.get(socket);
      for (const id of ids) mine?.add(id);
      this.play(socket, ids);
    };
    socket.onClose = () => this.sockets.delete(socket);
  }

  /** The loop (when set): every subscription's sequence again, its books first. */
  tick(loop: boolean): void {
    if (!loop) return;
    for (const [s, ids] of this.sockets) this.play(s, [...ids]);
  }

  get loopMs(): number {
    return this.opts.loopMs ?? 0;
  }

  close(): void {
    for (const s of [...this.sockets.keys()]) s.destroy();
    this.sockets.clear();
  }

  private play(socket: ServerSocket, ids: string[]): void {
    const want = new Set(ids);
    const books = ids.flatMap((id) => {
      const b = this.book(id, 'initial');
      return b ? [{ ...b, event_type: 'book' }] : [];
    });
    if (books.length > 0) socket.sendText(JSON.stringify(books));
    const markets = [...new Set(ids.map((id) => this.byToken.get(id)).filter((m): m is ServedMarket => m !== undefined))];
    for (const m of markets) {
      for (const f of m.frames) {
        const assets = Array.isArray(f.price_changes) ? (f.price_changes as Json[]).map((it) => it.asset_id) : [f.asset_id];
        if (assets.some((a) => want.has(String(a)))) socket.sendText(JSON.stringify(f));
      }
    }
  }
}
