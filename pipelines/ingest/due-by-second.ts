/**
 * Keys (contest ids) due at a second (unix s), taken once that second has come: the ingester's
 * staleness checks (a contest with a quote due to go stale then) and its deferred re-confirmation
 * recomputations. A key may be due at several seconds; taking returns each key once.
 */
export class DueBySecond {
  private readonly buckets = new Map<number, Set<string>>();

  add(key: string, second: number): void {
    let set = this.buckets.get(second);
    if (!set) this.buckets.set(second, (set = new Set()));
    set.add(key);
  }

  remove(key: string, second: number): void {
    const set = this.buckets.get(second);
    if (!set) return;
    set.delete(key);
    if (set.size === 0) this.buckets.delete(second);
  }

  /** Every key due at or before `nowS`, removed from here. */
  takeDue(nowS: number): Set<string> {
    const due = new Set<string>();
    for (const [second, keys] of this.buckets) {
      if (second > nowS) continue;
      this.buckets.delete(second);
      for (const k of keys) due.add(k);
    }
    return due;
  }

  clear(): void {
    this.buckets.clear();
  }
}
