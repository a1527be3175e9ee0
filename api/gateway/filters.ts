/**
 * Per-channel event filters: given one bus event and one subscription, the payload that subscriber
 * gets (the event verbatim, a reduced copy, or nothing). Pluggable: startGateway takes overrides per
 * channel, so later work can refine filtering without touching routing.
 *
 * Filters are computed once per distinct `key(sub)` per event, so a thousand subscribers with the
 * same thresholds cost one evaluation, and the event is parsed at most once (lazily).
 */
import type { BusMessage, StreamChannel } from '../../src/domain/stream.js';
import { selectsSignal, type Confidence } from '../../src/domain/signals.js';
import type { Subscription } from './channels.js';

/** One bus message being delivered; parses the event JSON on first use only. */
export class BusEvent {
  private parsed: unknown;
  constructor(readonly msg: BusMessage) {}
  json<T = Record<string, unknown>>(): T {
    this.parsed ??= JSON.parse(this.msg.event);
    return this.parsed as T;
  }
}

export interface ChannelFilter {
  /** Subscribers with equal keys receive the same payload for an event. */
  key(sub: Subscription): string;
  /** The payload for this subscriber: msg.event as-is (the common case), a filtered copy, or null to skip. */
  apply(ev: BusEvent, sub: Subscription): string | null;
}

/** Everyone gets the event verbatim. */
export const PASS_THROUGH: ChannelFilter = { key: () => '', apply: (ev) => ev.msg.event };

/**
 * Keeps the elements of `listField` that pass `keep`; returns the event as-is when all pass, a copy
 * with the kept elements when some do, and null when none do (unless the list was empty: a clear
 * snapshot reaches every subscriber).
 */
function filterList<T>(ev: BusEvent, listField: string, keep: (x: T) => boolean, emptyReachesAll: boolean): string | null {
  const e = ev.json<Record<string, unknown>>();
  const list = e[listField];
  if (!Array.isArray(list)) return ev.msg.event;
  if (list.length === 0) return emptyReachesAll ? ev.msg.event : null;
  const kept = (list as T[]).filter(keep);
  if (kept.length === list.length) return ev.msg.event;
  if (kept.length === 0) return null;
  return JSON.stringify({ ...e, [listField]: kept });
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** trades: drop prints below min_notional_usd; drop the event when no print remains. */
export const TRADES_FILTER: ChannelFilter = {
  key: (s) => String(s.filters.min_notional_usd ?? ''),
  apply(ev, s) {
    const min = s.filters.min_notional_usd as number | undefined;
    if (min === undefined || min <= 0) return ev.msg.event;
    return filterList<{ notional_usd?: unknown }>(ev, 'trades', (t) => (num(t.notional_usd) ?? 0) >= min, false);
  },
};

/**
 * arbitrage.update: keep the arbitrages that pass the subscriber's thresholds. A cleared set (empty
 * array) reaches everyone; a set where nothing passes is not sent.
 */
export const ARBITRAGE_FILTER: ChannelFilter = {
  key: (s) => JSON.stringify([s.filters.after_fee_only, s.filters.min_roi_pct, s.filters.min_after_fee_roi_pct, s.filters.min_investment]),
  apply(ev, s) {
    const f = s.filters as { after_fee_only?: boolean; min_roi_pct?: number; min_after_fee_roi_pct?: number; min_investment?: number };
    if (!f.after_fee_only && f.min_roi_pct === undefined && f.min_after_fee_roi_pct === undefined && f.min_investment === undefined) return ev.msg.event;
    type Arb = { roi_pct?: unknown; after_fee_roi_pct?: unknown; profitable_after_fees?: unknown; max_investment?: unknown };
    return filterList<Arb>(
      ev,
      'arbitrages',
      (a) => {
        if (f.after_fee_only && a.profitable_after_fees !== true) return false;
        if (f.min_roi_pct !== undefined && !((num(a.roi_pct) ?? -Infinity) >= f.min_roi_pct)) return false;
        // null after-fee ROI means fees are unknown: it cannot be shown to pass an after-fee threshold.
        if (f.min_after_fee_roi_pct !== undefined && !((num(a.after_fee_roi_pct) ?? -Infinity) >= f.min_after_fee_roi_pct)) return false;
        if (f.min_investment !== undefined && !((num(a.max_investment) ?? -Infinity) >= f.min_investment)) return false;
        return true;
      },
      true,
    );
  },
};

/**
 * signal.update: keep the signals that pass types, min_confidence, min_strength and include_beta
 * (beta signals are excluded unless include_beta is true), by the same rule GET /signals applies
 * (src/domain/signals.ts selectsSignal: served types only). A clear reaches every subscriber;
 * otherwise nothing is sent when every signal fails the filters (spec).
 */
export const SIGNAL_FILTER: ChannelFilter = {
  key: (s) => JSON.stringify([s.filters.types, s.filters.min_confidence, s.filters.min_strength, s.filters.include_beta]),
  apply(ev, s) {
    const f = s.filters as { types?: string[]; min_confidence?: Confidence; min_strength?: number; include_beta?: boolean };
    const keep = selectsSignal({ types: f.types ? new Set(f.types) : null, includeBeta: f.include_beta === true, minStrength: f.min_strength ?? null, minConfidence: f.min_confidence ?? null });
    return filterList(ev, 'signals', keep, true);
  },
};

export const DEFAULT_FILTERS: Readonly<Record<StreamChannel, ChannelFilter>> = {
  liquidity: PASS_THROUGH,
  contest_state: PASS_THROUGH,
  ticks: PASS_THROUGH,
  trades: TRADES_FILTER,
  arbitrage: ARBITRAGE_FILTER,
  signal: SIGNAL_FILTER,
  orders: PASS_THROUGH,
  balance: PASS_THROUGH,
};
