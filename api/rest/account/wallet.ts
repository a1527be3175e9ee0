/**
 * The practice wallet (spec "Practice wallet"): read, deposit, ledger. The ledger is the wallet
 * (src/store/pg/wallet.ts); a deposit is one entry, its balance event in the outbox and its
 * idempotency record, all in one statement (one transaction, one round trip).
 */
import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { practiceAccountPartnerId, PRACTICE_PARTNER_ID, type BalanceUpdateEvent } from '../../../src/domain/account.js';
import { envelope } from '../../../src/domain/envelope.js';
import { ApiError } from '../../../src/errors.js';
import { canonicalFingerprint, IDEMPOTENCY_TTL_MS, settledClaim } from '../../../src/store/pg/idempotency.js';
import { practiceBalance, practiceDeposit, practiceLedger, PRACTICE_BALANCE_CAP, PRACTICE_MAX_DEPOSIT } from '../../../src/store/pg/wallet.js';
import type { AppContext } from '../context.js';
import { Ok } from '../openapi/responses.js';
import { sendEnvelope, sendRecorded } from '../reply.js';
import { Limit, Text } from '../schemas.js';
import { ACCOUNT_READ, ACCOUNT_WRITE, actingAccount, idempotencyKey } from './acting.js';
import { PracticeDeposit, PracticeLedger, PracticeWallet, readErrors, writeErrors } from './shapes.js';

const invalidAmount = (why: string) =>
  new ApiError(400, 'invalid_amount', `amount ${why}: send a number above 0 with at most two decimals, at most ${PRACTICE_MAX_DEPOSIT.toLocaleString('en-US')}`, {
    min_exclusive: 0,
    max: PRACTICE_MAX_DEPOSIT,
    max_decimals: 2,
  });

/**
 * The amount as exact decimal text, or a 400. A JSON number's shortest round-trip text is what the
 * caller wrote (12.34 → "12.34"), so counting its decimals there is exact; 1e-7 or 0.001 fail.
 */
export function depositAmount(v: unknown): string {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw invalidAmount('must be a number');
  const text = String(v);
  if (!/^\d+(\.\d{1,2})?$/.test(text)) throw invalidAmount(v <= 0 ? 'must be above 0' : 'has more than two decimals');
  if (v <= 0) throw invalidAmount('must be above 0');
  if (v > PRACTICE_MAX_DEPOSIT) throw invalidAmount(`is above the ${PRACTICE_MAX_DEPOSIT.toLocaleString('en-US')} ATLAS deposit limit`);
  return text;
}

/**
 * The fixed fields of a deposit's balance event; the store fills in balance, venue_balance,
 * balance_version (the ledger seq: monotonic, and exact) and balance_as_of from the entry it writes.
 */
export function depositEventBase(account: string, at: number): Omit<BalanceUpdateEvent, 'balance' | 'venue_balance' | 'balance_version' | 'balance_as_of'> {
  return {
    type: 'balance.update',
    account_partner_id: practiceAccountPartnerId(account),
    partner_id: PRACTICE_PARTNER_ID,
    currency: 'ATLAS',
    pending: 0,
    cause: 'wallet',
    router_order_id: null,
    timestamp: new Date(at).toISOString(),
  };
}

export function walletRoutes(app: FastifyInstance, ctx: AppContext): void {
  const now = () => ctx.clock.now();

  app.get(
    '/flow/v1/auth/account/paper',
    { schema: { tags: ['account'], summary: 'The practice (ATLAS) wallet', operationId: 'getPracticeWallet', response: { 200: Ok(PracticeWallet, 'The wallet'), ...readErrors() } }, config: ACCOUNT_READ },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const balance = await practiceBalance(ctx.pool, account);
      return sendEnvelope(reply, now(), { currency: 'ATLAS', balance: Number(balance), max_deposit: PRACTICE_MAX_DEPOSIT, balance_cap: PRACTICE_BALANCE_CAP });
    },
  );

  const LedgerQuery = Type.Object({ limit: Limit() });
  app.get<{ Querystring: Static<typeof LedgerQuery> }>(
    '/flow/v1/auth/account/paper/ledger',
    { schema: { querystring: LedgerQuery, tags: ['account'], summary: 'The practice wallet’s ledger, newest first', operationId: 'getPracticeLedger', response: { 200: Ok(PracticeLedger, 'The ledger'), ...readErrors() } }, config: ACCOUNT_READ },
    async (req, reply) => {
      const account = await actingAccount(req, ctx.pool);
      const entries = await practiceLedger(ctx.pool, account, req.query.limit);
      return sendEnvelope(reply, now(), { currency: 'ATLAS', entries });
    },
  );

  const DepositBody = Type.Object(
    {
      amount: Type.Unknown({ description: 'ATLAS: above 0, at most two decimals, at most 100,000 (else 400 invalid_amount)' }),
      description: Type.Optional(Text({ maxLength: 500 })),
    },
    { additionalProperties: false },
  );
  app.post<{ Body: Static<typeof DepositBody> }>(
    '/flow/v1/auth/account/paper/deposit',
    {
      schema: {
        body: DepositBody,
        tags: ['account'],
        summary: 'Deposit practice money (ATLAS); Idempotency-Key required',
        operationId: 'depositPractice',
        response: {
          201: Ok(PracticeDeposit, 'The deposit landed (a replay of the same key answers the first response)'),
          ...writeErrors({ 400: ['invalid_amount'], 409: ['balance_cap'] }),
        },
      },
      config: ACCOUNT_WRITE,
    },
    async (req, reply) => {
      const key = idempotencyKey(req);
      const amount = depositAmount(req.body.amount);
      const account = await actingAccount(req, ctx.pool);
      const at = now();
      // One statement, one round trip: claim, entry, balance event and key record together.
      const r = await practiceDeposit(ctx.pool, {
        routerAccountId: account,
        key,
        fingerprint: canonicalFingerprint(req.body),
        amount,
        description: req.body.description ?? null,
        event: depositEventBase(account, at),
        meta: envelope(null, at).meta,
        ttlMs: IDEMPOTENCY_TTL_MS,
      });
      if (r.outcome === 'no_account') throw new ApiError(404, 'not_found', 'the acting account does not exist');
      if (r.outcome === 'balance_cap') {
        throw new ApiError(409, 'balance_cap', `this deposit would take the practice wallet over ${PRACTICE_BALANCE_CAP.toLocaleString('en-US')} ATLAS`, { balance_cap: PRACTICE_BALANCE_CAP });
      }
      const response = r.outcome === 'created' ? { status: r.status_code!, body: r.response! } : settledClaim(r);
      return sendRecorded(reply, response);
    },
  );
}
