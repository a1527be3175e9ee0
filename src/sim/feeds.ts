/**
 * The simulated market's feeds: who listens to what (per venue or to every venue), and the
 * delivery of each event to them. A listener that throws must not stop the market: it is counted
 * (state().listener_errors) and the others still hear the event. Lists are copy-on-write, so an
 * unsubscribe during a delivery does not skip a neighbour.
 */
import type { Listener, SimBalanceEvent, SimContestOpenedEvent, SimOrderEvent, SimQuoteEvent, SimSettleEvent, SimStateEvent, SimTradeEvent } from './events.js';

/** Listeners of one kind of event, by venue id ('*': every venue). */
class Keyed<T> {
  private readonly map = new Map<string, Listener<T>[]>();

  add(key: string, fn: Listener<T>): () => void {
    this.map.set(key, [...(this.map.get(key) ?? []), fn]);
    return () => {
      const next = (this.map.get(key) ?? []).filter((x) => x !== fn);
      if (next.length === 0) this.map.delete(key);
      else this.map.set(key, next);
    };
  }

  /** Whether anyone hears events of `key`. */
  heard(key: string): boolean {
    return this.map.has(key) || this.map.has('*');
  }

  deliver(key: string, ev: T, safe: (fn: Listener<T>, ev: T) => void): void {
    const a = this.map.get(key);
    const b = this.map.get('*');
    if (a) for (const fn of a) safe(fn, ev);
    if (b) for (const fn of b) safe(fn, ev);
  }
}

/** Listeners of one kind of event, whatever the venue. */
class Plain<T> {
  private list: Listener<T>[] = [];

  add(fn: Listener<T>): () => void {
    this.list = [...this.list, fn];
    return () => {
      this.list = this.list.filter((x) => x !== fn);
    };
  }

  heard(): boolean {
    return this.list.length > 0;
  }

  deliver(ev: T, safe: (fn: Listener<T>, ev: T) => void): void {
    for (const fn of this.list) safe(fn, ev);
  }
}

export class Feeds {
  readonly quotes = new Keyed<SimQuoteEvent>();
  readonly trades = new Keyed<SimTradeEvent>();
  readonly orders = new Keyed<SimOrderEvent>();
  readonly balances = new Keyed<SimBalanceEvent>();
  readonly states = new Plain<SimStateEvent>();
  readonly settlements = new Plain<SimSettleEvent>();
  readonly opened = new Plain<SimContestOpenedEvent>();
  /** Listeners that threw. */
  errors = 0;

  /** Calls a listener; a throw is counted, never passed on. */
  readonly safe = <T>(fn: Listener<T>, ev: T): void => {
    try {
      fn(ev);
    } catch {
      this.errors++;
    }
  };
}
