/** Signals for tests: one factory, so every test builds a Signal the same (valid, spec-shaped) way. */
import { CALIBRATION_VERSION, signalId, type Signal, type SignalPosition, type SignalType } from '../../src/domain/signals.js';

export interface TestSignalOptions extends Partial<Omit<Signal, 'position'>> {
  position?: Partial<SignalPosition>;
  /** When it was detected, ms from now (default 0: now). */
  detectedInMs?: number;
}

/**
 * A signal of `type` keyed `<type>:<key>` on `contest`, live for `lifeMs` from now (negative:
 * already expired). Position defaults: `<contest>:p` in league `lg`, market `m`.
 */
export function testSignal(type: SignalType, key: string, contest: string, lifeMs: number, opts: TestSignalOptions = {}): Signal {
  const { position, detectedInMs = 0, ...extra } = opts;
  const now = Date.now();
  const detected = new Date(now + detectedInMs).toISOString();
  const dedupe = `${type}:${key}`;
  return {
    signal_id: signalId(dedupe, detected),
    dedupe_key: dedupe,
    signal_type: type,
    schema_version: 1,
    status: 'beta',
    position: {
      position_hash: `${contest}:p`,
      router_contest_id: contest,
      router_league_id: 'lg',
      router_market_id: 'm',
      market_key: 'moneyline',
      market_side_id: 'm:home',
      market_variable_id: null,
      participant_id: 'p',
      timeframe_id: 'ft',
      title: 't',
      contest_label: 'c',
      ...position,
    },
    related_positions: [],
    headline: 'h',
    explanation: 'e',
    strength: 50,
    confidence: 'medium',
    calibration_version: CALIBRATION_VERSION,
    detected_at: detected,
    expires_at: new Date(now + lifeMs).toISOString(),
    venues: [{ partner_id: 'v', partner_name: 'V' }],
    evidence: {},
    ...extra,
  };
}
