/** Accounts' money as the stream and the REST reads show it: shapes and pure rules, no I/O. */

export type Currency = 'USD' | 'ATLAS';

/** The practice venue: ATLAS, filled on the internal book, its balance the practice ledger. */
export const PRACTICE_PARTNER_ID = 'practice';

/**
 * Every account has a practice connection without connecting anything (its wallet opens at 1,000
 * ATLAS); its id is derived, so no row has to exist before the wallet is first touched.
 */
export const practiceAccountPartnerId = (routerAccountId: string): string => `ap_practice_${routerAccountId}`;

export type BalanceCause = 'order_hold' | 'release' | 'settlement' | 'refresh' | 'wallet';

/** The balance channel's event (spec "Events"): `balance` is the EXPECTED figure to render. */
export interface BalanceUpdateEvent {
  type: 'balance.update';
  account_partner_id: string;
  partner_id: string;
  currency: Currency;
  balance: number;
  venue_balance: number;
  pending: number;
  /** Monotonic per venue connection: clients drop a frame whose version is not above the last seen. */
  balance_version: number;
  balance_as_of: string;
  cause: BalanceCause;
  router_order_id: string | null;
  timestamp: string;
}
