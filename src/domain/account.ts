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

/**
 * How a currency is shown and whether it is money (spec: USD and ATLAS are never summed or
 * blended in any total, so every total is per currency).
 */
export interface Funding {
  currency: Currency;
  is_real_money: boolean;
  symbol: string;
  precision: number;
  label: string;
}

export const FUNDING: Readonly<Record<Currency, Funding>> = {
  USD: { currency: 'USD', is_real_money: true, symbol: '$', precision: 2, label: 'US dollars' },
  ATLAS: { currency: 'ATLAS', is_real_money: false, symbol: 'ATLAS', precision: 2, label: 'Practice money (ATLAS)' },
};

/**
 * Venue balance snapshots (docs/balances.md): the scheduler re-reads a connected venue's balance
 * once it was last tried BALANCE_REFRESH_EVERY_MS ago; a snapshot older than BALANCE_STALE_AFTER_MS
 * (five refresh periods: a venue may miss a few reads before the figure is called stale) is stale.
 */
export const BALANCE_REFRESH_EVERY_MS = 60_000;
export const BALANCE_STALE_AFTER_MS = 5 * 60_000;

/** Where a connection's balance comes from (spec "Account partner"); null: the venue reports none. */
export type BalanceSource = 'venue_api' | 'svc_wallet';

/** The spec's Account partner, plus `currency` (USD for a venue, ATLAS for the practice wallet). */
export interface AccountPartner {
  account_partner_id: string;
  partner_id: string;
  partner_name: string;
  status: string;
  credential_status: 'pending' | 'connected' | 'failed';
  currency: Currency;
  balance: number | null;
  expected_balance: number | null;
  pending: number | null;
  balance_as_of: string | null;
  is_stale: boolean;
  balance_source: BalanceSource | null;
  logo_url: string;
  /** Not served on Account partner; the balances read shows it per partner. */
  internal_book: boolean;
}
