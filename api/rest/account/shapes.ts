/** OpenAPI shapes of the account routes (they describe answers; app.ts never serializes with them). */
import { Type } from 'typebox';
import { BAD_REQUEST_CODES, errorsWith } from '../openapi/responses.js';

const closed = { additionalProperties: false } as const;
const Money = (description: string) => Type.Number({ description });
const Timestamp = Type.String({ format: 'date-time' });

/** The error answers of an account write: what every write can give, plus the route's own codes. */
export function writeErrors(own: { 400?: string[]; 404?: string[]; 409?: string[] } = {}) {
  return {
    400: errorsWith([...BAD_REQUEST_CODES, 'idempotency_key_required', ...(own[400] ?? [])], 'Invalid input, or no Idempotency-Key UUID'),
    403: errorsWith(['entitlement_required', 'account_forbidden'], 'The key may not change this account (a data key never holds trade:execute)'),
    ...(own[404] ? { 404: errorsWith(own[404], 'Not found, or not this account’s') } : {}),
    409: errorsWith(['idempotency_key_in_use', ...(own[409] ?? [])], 'A request with this Idempotency-Key is still running, or the change conflicts with the account’s state'),
    422: errorsWith(['idempotency_key_reused'], 'The Idempotency-Key was used with another request'),
  };
}

/** The error answers of an account read. */
export const readErrors = (own: { 404?: string[] } = {}) => ({
  403: errorsWith(['entitlement_required', 'account_forbidden'], 'The key may not read this account'),
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
