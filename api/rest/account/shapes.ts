/** OpenAPI shapes of the account routes (they describe answers; app.ts never serializes with them). */
import { Type, type Static } from 'typebox';
import { MODEL_DESCRIPTION_MAX, MODEL_NAME_MAX, MODEL_STATUSES, type Model as ModelT, type Opportunity as OpportunityT } from '../../../src/domain/models.js';
import { BAD_REQUEST_CODES, errorsWith } from '../openapi/responses.js';
import { RouterOrder } from '../orders/shapes.js';
import type { Agrees, Same } from '../openapi/shapes.js';

const closed = { additionalProperties: false } as const;
const Money = (description: string) => Type.Number({ description });
const Timestamp = Type.String({ format: 'date-time' });

/**
 * The error answers of an account write: what every write can give, plus the route's own codes.
 * `idempotencyKey: false` for a write that takes no Idempotency-Key (one idempotent by nature).
 */
export function writeErrors(own: { 400?: string[]; 403?: string[]; 404?: string[]; 409?: string[] } = {}, opts: { idempotencyKey?: boolean } = {}) {
  const keyed = opts.idempotencyKey ?? true;
  const conflicts = [...(keyed ? ['idempotency_key_in_use'] : []), ...(own[409] ?? [])];
  return {
    400: errorsWith([...BAD_REQUEST_CODES, ...(keyed ? ['idempotency_key_required'] : []), ...(own[400] ?? [])], keyed ? 'Invalid input, or no Idempotency-Key UUID' : 'Invalid input'),
    403: errorsWith(['entitlement_required', 'account_forbidden', ...(own[403] ?? [])], own[403] ? `The key may not change this account (a data key never holds trade:execute), or: ${own[403].join(', ')}` : 'The key may not change this account (a data key never holds trade:execute)'),
    ...(own[404] ? { 404: errorsWith(own[404], 'Not found, or not this account’s') } : {}),
    ...(conflicts.length ? { 409: errorsWith(conflicts, keyed ? 'A request with this Idempotency-Key is still running, or the change conflicts with the account’s state' : 'The change conflicts with the account’s state') } : {}),
    ...(keyed ? { 422: errorsWith(['idempotency_key_reused'], 'The Idempotency-Key was used with another request') } : {}),
  };
}

/** The error answers of an account read, plus the route's own codes. */
export const readErrors = (own: { 403?: string[]; 404?: string[] } = {}) => ({
  403: errorsWith(['entitlement_required', 'account_forbidden', ...(own[403] ?? [])], own[403] ? `The key may not read this account, or: ${own[403].join(', ')}` : 'The key may not read this account'),
  ...(own[404] ? { 404: errorsWith(own[404], 'Not found, or not this account’s') } : {}),
});

export const PracticeWallet = Type.Object(
  {
    currency: Type.Literal('ATLAS'),
    balance: Money('ATLAS, exact; the sum of the ledger'),
    max_deposit: Type.Number(),
    balance_cap: Type.Number(),
  },
  { ...closed, $id: 'PracticeWallet' },
);

export const PracticeLedgerEntry = Type.Object(
  {
    ledger_id: Type.String(),
    type: Type.Enum(['opening_balance', 'bet_debit', 'settlement_credit', 'refund', 'adjustment', 'deposit']),
    amount: Money('negative for debits'),
    balance_after: Money('the wallet balance once this entry landed'),
    router_order_id: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { ...closed, $id: 'PracticeLedgerEntry' },
);

export const PracticeLedger = Type.Object({ currency: Type.Literal('ATLAS'), entries: Type.Array(PracticeLedgerEntry) }, closed);

export const PracticeDeposit = Type.Object(
  { currency: Type.Literal('ATLAS'), amount: Type.Number(), balance: Type.Number(), svc_ledger_id: Type.String() },
  { ...closed, $id: 'PracticeDeposit' },
);

// ---- models and opportunities ---------------------------------------------------------------------

const NullableString = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

export const Model = Type.Object(
  {
    model_id: Type.String(),
    model_name: Type.String({ maxLength: MODEL_NAME_MAX }),
    model_description: Type.String({ maxLength: MODEL_DESCRIPTION_MAX }),
    league_id: NullableString('the league the model is about, or null'),
    league_name: NullableString('that league’s name, or null'),
    status: Type.Enum([...MODEL_STATUSES], { description: 'archived models take no new orders and do not count toward the 50-active cap' }),
    created_at: Timestamp,
    updated_at: Type.String({ format: 'date-time', description: 'the last change of a value; a no-op PATCH or a repeated archive leaves it' }),
  },
  { ...closed, $id: 'Model' },
);

export const Opportunity = Type.Object(
  {
    opportunity_id: Type.String(),
    model_id: NullableString('the model of the buy that opened it; null when that buy named none'),
    model_name: NullableString('that model’s current name, or null'),
    currency: Type.Enum(['USD', 'ATLAS']),
    legs: Type.Array(RouterOrder, { description: 'the opportunity’s orders, oldest first' }),
    created_at: Timestamp,
  },
  { ...closed, $id: 'Opportunity' },
);

export type AccountShapesAgreeWithTheDomain = [Agrees<Same<Static<typeof Model>, ModelT>>, Agrees<Same<Static<typeof Opportunity>, OpportunityT>>];

// ---- venue connections and balances ---------------------------------------------------------------

const NullableMoney = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const Currency = Type.Enum(['USD', 'ATLAS']);

export const AccountPartner = Type.Object(
  {
    account_partner_id: Type.String(),
    partner_id: Type.String(),
    partner_name: Type.String(),
    status: Type.String({ description: 'e.g. active' }),
    credential_status: Type.Enum(['pending', 'connected', 'failed'], { description: 'set only by the hosted flow' }),
    currency: Type.Enum(['USD', 'ATLAS'], { description: 'USD for a venue, ATLAS for the practice wallet (extension: the figures are in this currency)' }),
    balance: NullableMoney('the venue’s last reported figure at balance_as_of; null when the venue reports none, or before the first snapshot'),
    expected_balance: NullableMoney('balance net of funds held by orders placed since balance_as_of, plus settlements landed since; the figure to spend from'),
    pending: NullableMoney('expected_balance minus balance: negative = held against open orders, positive = settlements the snapshot predates'),
    balance_as_of: Type.Union([Timestamp, Type.Null()], { description: 'the venue’s time of the snapshot; null before the first' }),
    is_stale: Type.Boolean({ description: 'the snapshot is older than the refresh SLA (5 minutes) or was never taken' }),
    balance_source: Type.Union([Type.Enum(['venue_api', 'svc_wallet']), Type.Null()], { description: 'null: the venue exposes no balance' }),
    logo_url: Type.String(),
  },
  { ...closed, $id: 'AccountPartner' },
);

const partnerFields = {
  router_account_id: Type.String(),
  total_balance: Money('USD: the sum of the venue balances (the practice wallet’s ATLAS is never added in)'),
  account_partners: Type.Array(AccountPartner),
  expected_total_balance: Money('USD: the sum of the venue expected balances'),
};

export const AccountPartners = Type.Object(partnerFields, { ...closed, $id: 'AccountPartners' });

export const RefreshedAccountPartners = Type.Object(
  { ...partnerFields, refreshed_partner_ids: Type.Array(Type.String(), { description: 'the venues whose balance this call read' }) },
  { ...closed, $id: 'RefreshedAccountPartners' },
);

const BalancePartner = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Type.String(),
    balance: NullableMoney('as on Account partner'),
    expected_balance: NullableMoney('as on Account partner'),
    pending: NullableMoney('as on Account partner'),
    is_stale: Type.Boolean(),
    internal_book: Type.Boolean(),
  },
  closed,
);

export const AccountBalances = Type.Object(
  {
    router_account_id: Type.String(),
    by_currency: Type.Array(
      Type.Object(
        {
          currency: Currency,
          is_real_money: Type.Boolean(),
          symbol: Type.String(),
          label: Type.String(),
          total: Money('the sum of the partner balances in this currency'),
          expected_total: Money('the sum of the partner expected balances in this currency (ATLAS: equal to total)'),
          partners: Type.Array(BalancePartner),
        },
        closed,
      ),
    ),
    real_money_total: Money('USD'),
    real_money_expected_total: Money('USD'),
    atlas_balance: Money('ATLAS: the practice wallet'),
  },
  { ...closed, $id: 'AccountBalances' },
);
