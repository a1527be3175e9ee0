/**
 * Ordered schema migrations. SQL lives in TypeScript so the build carries it without a copy step.
 * Never edit an applied migration: add a new one.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'workspaces, accounts, keys',
    sql: `
CREATE TABLE workspaces (
  id text PRIMARY KEY,
  name text NOT NULL,
  plan text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE accounts (
  router_account_id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  environment text NOT NULL CHECK (environment IN ('test','live')),
  external_user_id text,
  is_owner boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (workspace_id, environment, external_user_id)
);
CREATE UNIQUE INDEX accounts_one_owner ON accounts (workspace_id, environment) WHERE is_owner;
CREATE TABLE api_keys (
  key_id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspaces(id),
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  key_hash text NOT NULL UNIQUE,
  key_prefix text NOT NULL,
  plan text NOT NULL,
  key_type text NOT NULL CHECK (key_type IN ('data','execution')),
  environment text NOT NULL CHECK (environment IN ('test','live')),
  entitlements text[] NOT NULL,
  rate_limit_per_minute integer NOT NULL CHECK (rate_limit_per_minute > 0),
  rate_limit_per_day integer NOT NULL CHECK (rate_limit_per_day > 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX api_keys_workspace ON api_keys (workspace_id);
CREATE TABLE service_meta (
  key text PRIMARY KEY,
  value jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 2,
    name: 'catalog',
    sql: `
CREATE TABLE leagues (
  id text PRIMARY KEY,
  name text NOT NULL,
  participant_type text CHECK (participant_type IN ('team','athlete')),
  status text NOT NULL,
  sort_order integer NOT NULL DEFAULT 0
);
CREATE TABLE participants (
  id text PRIMARY KEY,
  league_id text NOT NULL REFERENCES leagues(id),
  name text NOT NULL,
  abbr text,
  image_url text,
  country text
);
CREATE INDEX participants_league ON participants (league_id, name, id);
CREATE TABLE contests (
  id text PRIMARY KEY,
  league_id text NOT NULL REFERENCES leagues(id),
  title text NOT NULL,
  type text NOT NULL,
  parent_contest_id text REFERENCES contests(id),
  starts_at timestamptz NOT NULL,
  status text NOT NULL,
  tags jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX contests_status_start ON contests (status, starts_at, id);
CREATE INDEX contests_league_start ON contests (league_id, starts_at, id);
CREATE INDEX contests_parent ON contests (parent_contest_id);
CREATE TABLE markets (
  id text PRIMARY KEY,
  key text NOT NULL,
  name text NOT NULL,
  variable_required boolean NOT NULL,
  allow_multiple_participants boolean NOT NULL,
  side_keys text[] NOT NULL
);
CREATE TABLE contest_markets (
  contest_id text NOT NULL REFERENCES contests(id),
  market_id text NOT NULL REFERENCES markets(id),
  PRIMARY KEY (contest_id, market_id)
);
CREATE TABLE positions (
  position_hash text PRIMARY KEY,
  contest_id text NOT NULL REFERENCES contests(id),
  market_id text NOT NULL REFERENCES markets(id),
  definition jsonb NOT NULL
);
CREATE INDEX positions_contest ON positions (contest_id);
CREATE TABLE partners (
  partner_id text PRIMARY KEY,
  name text NOT NULL,
  status text NOT NULL,
  orders_allowed boolean NOT NULL,
  connectable boolean NOT NULL,
  internal_book boolean NOT NULL,
  order_config jsonb NOT NULL,
  credential_fields jsonb NOT NULL,
  logo_url text NOT NULL,
  sort_order integer NOT NULL DEFAULT 0
);
`,
  },
  {
    version: 3,
    name: 'accounts: venue connections, balance ledger, practice ledger, idempotency, models, opportunities',
    sql: `
-- A user's connection to a venue, as the hosted flow (or /sim/v1/accounts/:id/connect) leaves it.
-- balance/venue_held/balance_as_of: the venue's last snapshot; balance_version: bumped with every
-- balance event of this connection, in the transaction of the change it reports.
CREATE TABLE account_partners (
  account_partner_id text PRIMARY KEY,
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  partner_id text NOT NULL,
  status text NOT NULL DEFAULT 'active',
  credential_status text NOT NULL CHECK (credential_status IN ('pending','connected','failed')),
  balance numeric(24,6),
  venue_held numeric(24,6),
  balance_as_of timestamptz,
  balance_version bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (router_account_id, partner_id)
);
-- Funds orders hold on a venue connection, their releases and settlements: expected_balance is the
-- snapshot plus what landed here after it, computed from these rows, never a drifting counter.
CREATE TABLE balance_ledger (
  entry_id bigserial PRIMARY KEY,
  account_partner_id text NOT NULL REFERENCES account_partners(account_partner_id),
  kind text NOT NULL CHECK (kind IN ('hold','release','settlement')),
  amount numeric(24,6) NOT NULL,
  router_order_id text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX balance_ledger_partner_time ON balance_ledger (account_partner_id, created_at);
-- The practice (ATLAS) wallet is this ledger: the balance is the last entry's balance_after, which
-- equals the sum of amounts; (account, seq) orders the entries and refuses a lost race.
CREATE TABLE practice_ledger (
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  seq integer NOT NULL CHECK (seq > 0),
  ledger_id text NOT NULL UNIQUE,
  type text NOT NULL CHECK (type IN ('opening_balance','bet_debit','settlement_credit','refund','adjustment','deposit')),
  amount numeric(24,6) NOT NULL,
  balance_after numeric(24,6) NOT NULL CHECK (balance_after >= 0),
  router_order_id text,
  description text,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (router_account_id, seq)
);
CREATE UNIQUE INDEX practice_ledger_one_opening ON practice_ledger (router_account_id) WHERE type = 'opening_balance';
-- Idempotency records live with the effect they guard, in its transaction.
CREATE TABLE idempotency_keys (
  router_account_id text NOT NULL,
  idempotency_key uuid NOT NULL,
  operation text NOT NULL,
  fingerprint text NOT NULL,
  state text NOT NULL CHECK (state IN ('running','done')),
  status_code integer,
  response text,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (router_account_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
CREATE TABLE models (
  model_id text PRIMARY KEY,
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  model_name text NOT NULL,
  model_description text NOT NULL,
  league_id text,
  status text NOT NULL CHECK (status IN ('active','archived')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX models_account_newest ON models (router_account_id, created_at DESC, model_id DESC);
CREATE TABLE opportunities (
  opportunity_id text PRIMARY KEY,
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  model_id text NOT NULL REFERENCES models(model_id),
  currency text NOT NULL CHECK (currency IN ('USD','ATLAS')),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX opportunities_account_newest ON opportunities (router_account_id, created_at DESC, opportunity_id DESC);
CREATE INDEX opportunities_model ON opportunities (model_id, created_at DESC);
-- Account events (balance, later orders) wait here, written in the transaction of their effect,
-- until the relay has appended them to the Redis event log: a crash in between loses none.
CREATE TABLE account_outbox (
  seq bigserial PRIMARY KEY,
  router_account_id text NOT NULL,
  channel text NOT NULL CHECK (channel IN ('balance','orders')),
  event jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
`,
  },
  {
    version: 4,
    name: 'opportunities without a model; active models per account',
    sql: `
-- Every buy opens an opportunity unless it joins one, and model_id is optional on a buy: an
-- opportunity opened by a buy that names no model has none.
ALTER TABLE opportunities ALTER COLUMN model_id DROP NOT NULL;
-- The 50-active-model cap counts these on every create and unarchive; archived models, never
-- deleted, stay out of the count's way.
CREATE INDEX models_account_active ON models (router_account_id) WHERE status = 'active';
`,
  },
  {
    version: 5,
    name: 'idempotency and practice-ledger steps as functions; a practice deposit in one call',
    sql: `
-- The Idempotency-Key rules in one place, for every write that takes a key (src/store/pg/idempotency.ts).
-- Call inside the effect's transaction: the advisory lock holds until it ends.
-- outcome: fresh (run the effect), replay (status_code and response are the first answer),
-- reused (another body or operation), in_use (the first is still running).
CREATE FUNCTION flow_idem_claim(p_account text, p_key uuid, p_operation text, p_fingerprint text)
RETURNS TABLE (outcome text, status_code integer, response text) LANGUAGE plpgsql AS $fn$
DECLARE r record;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended(p_account || '/' || p_key::text, 727003)) THEN
    RETURN QUERY SELECT 'in_use'::text, NULL::integer, NULL::text; RETURN;
  END IF;
  SELECT k.operation, k.fingerprint, k.state, k.status_code, k.response, k.expires_at > now() AS live INTO r
    FROM idempotency_keys k WHERE k.router_account_id = p_account AND k.idempotency_key = p_key;
  IF FOUND AND r.live THEN
    IF r.operation <> p_operation OR r.fingerprint <> p_fingerprint THEN
      RETURN QUERY SELECT 'reused'::text, NULL::integer, NULL::text; RETURN;
    END IF;
    IF r.state <> 'done' THEN RETURN QUERY SELECT 'in_use'::text, NULL::integer, NULL::text; RETURN; END IF;
    RETURN QUERY SELECT 'replay'::text, r.status_code, r.response; RETURN;
  END IF;
  IF FOUND THEN DELETE FROM idempotency_keys WHERE router_account_id = p_account AND idempotency_key = p_key; END IF;
  RETURN QUERY SELECT 'fresh'::text, NULL::integer, NULL::text;
END $fn$;

-- Records the answer of a key's effect, in the effect's transaction.
CREATE FUNCTION flow_idem_record(p_account text, p_key uuid, p_operation text, p_fingerprint text, p_status integer, p_response text, p_ttl_ms bigint)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, status_code, response, expires_at)
  VALUES (p_account, p_key, p_operation, p_fingerprint, 'done', p_status, p_response, now() + p_ttl_ms * interval '1 millisecond');
$fn$;

-- Opens a practice wallet with its opening balance unless it is open (safe to race: the opening
-- entry is unique per account).
CREATE FUNCTION flow_practice_open(p_account text, p_ledger_id text, p_opening numeric)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, description)
  VALUES (p_account, 1, p_ledger_id, 'opening_balance', p_opening, p_opening, 'Every practice wallet starts at 1,000 ATLAS')
  ON CONFLICT DO NOTHING;
$fn$;

-- One practice-ledger entry (src/store/pg/wallet.ts): locks the account row (FOR NO KEY UPDATE:
-- inserts that only reference the account are not held up), opens the wallet with its 1,000 ATLAS
-- if it is not open, and appends the entry computed from the newest one, in numeric.
-- outcome: ok, no_account, or out_of_bounds (below 0 or above p_cap; nothing written).
CREATE FUNCTION flow_practice_append(p_account text, p_ledger_id text, p_type text, p_amount numeric, p_router_order_id text, p_description text, p_cap numeric, p_opening_ledger_id text, p_opening numeric)
RETURNS TABLE (outcome text, seq integer, balance_after numeric, created_at timestamptz) LANGUAGE plpgsql AS $fn$
DECLARE last_seq integer; last_balance numeric; e record;
BEGIN
  PERFORM 1 FROM accounts WHERE router_account_id = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN RETURN QUERY SELECT 'no_account'::text, NULL::integer, NULL::numeric, NULL::timestamptz; RETURN; END IF;
  SELECT l.seq, l.balance_after INTO last_seq, last_balance FROM practice_ledger l WHERE l.router_account_id = p_account ORDER BY l.seq DESC LIMIT 1;
  IF NOT FOUND THEN
    PERFORM flow_practice_open(p_account, p_opening_ledger_id, p_opening);
    last_seq := 1; last_balance := p_opening;
  END IF;
  IF last_balance + p_amount < 0 OR last_balance + p_amount > p_cap THEN
    RETURN QUERY SELECT 'out_of_bounds'::text, NULL::integer, NULL::numeric, NULL::timestamptz; RETURN;
  END IF;
  INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, router_order_id, description)
  VALUES (p_account, last_seq + 1, p_ledger_id, p_type, p_amount, last_balance + p_amount, p_router_order_id, p_description)
  RETURNING practice_ledger.seq, practice_ledger.balance_after, practice_ledger.created_at INTO e;
  RETURN QUERY SELECT 'ok'::text, e.seq, e.balance_after, e.created_at;
END $fn$;

-- A practice deposit whole, in one round trip: the key's claim, the ledger entry, its balance event
-- in the outbox and the key's record, in the caller's single statement (one transaction).
-- p_event: the event's fixed fields; the balance fields are filled in here. p_meta: the envelope's meta.
-- outcome: as flow_idem_claim, or created (response is the 201 body), no_account, balance_cap.
CREATE FUNCTION flow_practice_deposit(p_account text, p_key uuid, p_fingerprint text, p_ledger_id text, p_amount numeric, p_description text, p_cap numeric,
                                      p_opening_ledger_id text, p_opening numeric, p_event jsonb, p_meta json, p_ttl_ms bigint)
RETURNS TABLE (outcome text, status_code integer, response text) LANGUAGE plpgsql AS $fn$
DECLARE c record; a record; body text; at text;
BEGIN
  SELECT * INTO c FROM flow_idem_claim(p_account, p_key, 'paper.deposit', p_fingerprint);
  IF c.outcome <> 'fresh' THEN RETURN QUERY SELECT c.outcome, c.status_code, c.response; RETURN; END IF;
  SELECT * INTO a FROM flow_practice_append(p_account, p_ledger_id, 'deposit', p_amount, NULL, p_description, p_cap, p_opening_ledger_id, p_opening);
  IF a.outcome = 'no_account' THEN RETURN QUERY SELECT 'no_account'::text, NULL::integer, NULL::text; RETURN; END IF;
  IF a.outcome <> 'ok' THEN RETURN QUERY SELECT 'balance_cap'::text, NULL::integer, NULL::text; RETURN; END IF;
  at := to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  INSERT INTO account_outbox (router_account_id, channel, event)
  VALUES (p_account, 'balance', p_event || jsonb_build_object('balance', trim_scale(a.balance_after), 'venue_balance', trim_scale(a.balance_after),
                                                               'balance_version', a.seq, 'balance_as_of', at));
  body := json_build_object('data', json_build_object('currency', 'ATLAS', 'amount', trim_scale(p_amount), 'balance', trim_scale(a.balance_after), 'svc_ledger_id', p_ledger_id),
                            'meta', p_meta)::text;
  PERFORM flow_idem_record(p_account, p_key, 'paper.deposit', p_fingerprint, 201, body, p_ttl_ms);
  RETURN QUERY SELECT 'created'::text, 201, body;
END $fn$;
`,
  },
  {
    version: 6,
    name: 'venue connections: balance source, balance refresh claims',
    sql: `
-- Whether the venue reports a balance at all, set by whoever records the connection (it holds the
-- venue's adapter): 'venue_api', or NULL for a venue that exposes none (no honest figure exists, so
-- balance, expected and pending read null). The API reads it here, without the adapters.
ALTER TABLE account_partners ADD COLUMN balance_source text DEFAULT 'venue_api' CHECK (balance_source IN ('venue_api'));
-- When a refresher last tried to read the venue's balance (landed or not): the scheduler claims the
-- connections tried longest ago, so a venue that keeps failing never starves the others.
ALTER TABLE account_partners ADD COLUMN balance_checked_at timestamptz;
CREATE INDEX account_partners_refresh_due ON account_partners (balance_checked_at NULLS FIRST, account_partner_id)
  WHERE status = 'active' AND credential_status = 'connected' AND balance_source IS NOT NULL;
`,
  },
  {
    version: 7,
    name: 'the account outbox notifies its relay on every insert',
    sql: `
-- Whatever writes an account event (a statement in TypeScript, a function in SQL), its commit wakes
-- an idle relay at once: PostgreSQL delivers NOTIFY at commit, never for a rolled-back write.
CREATE FUNCTION flow_account_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('account_outbox', '');
  RETURN NULL;
END $fn$;
CREATE TRIGGER account_outbox_notify AFTER INSERT ON account_outbox FOR EACH STATEMENT EXECUTE FUNCTION flow_account_outbox_notify();
`,
  },
  {
    version: 8,
    name: 'orders',
    sql: `
-- One row per buy leg that wrote an order (src/store/pg/orders.ts, docs/orders.md). A leg refused
-- before any book saw it (no price, a control, halted, real money not available yet) writes none:
-- the buy's response is its only record, kept by the Idempotency-Key.
-- Money is numeric(24,6) as on the ledgers; prices are kept exactly as quoted (plain numeric).
CREATE TABLE orders (
  router_order_id text PRIMARY KEY,
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  opportunity_id text REFERENCES opportunities(opportunity_id),
  model_id text REFERENCES models(model_id),
  -- The buy that wrote it: its Idempotency-Key and the leg's index in its orders array.
  idempotency_key uuid NOT NULL,
  leg_index integer NOT NULL CHECK (leg_index >= 0),
  -- What a venue sees as the order's reference: derived from account, key and leg, so a retried
  -- placement can never become a second order at the venue.
  client_order_id text NOT NULL UNIQUE,
  sor_decision_id text NOT NULL,
  -- The book filled on ('practice' for paper) and the venue the leg named.
  partner_id text NOT NULL,
  requested_partner_id text NOT NULL,
  currency text NOT NULL CHECK (currency IN ('USD','ATLAS')),
  mode text NOT NULL CHECK (mode IN ('real','paper')),
  order_type text NOT NULL CHECK (order_type IN ('market','limit')),
  position_hash text NOT NULL,
  -- The liquidity_hash the leg named (null when it named a position_hash).
  liquidity_hash text,
  -- Paper: the venue quote that set the fill price (spec rule 11: best live price across real venues).
  price_partner_id text,
  price_liquidity_hash text,
  contest_id text NOT NULL,
  title text NOT NULL,
  requested_amount numeric(24,6) CHECK (requested_amount > 0),
  requested_shares numeric(24,6) CHECK (requested_shares > 0),
  max_price numeric NOT NULL CHECK (max_price > 0 AND max_price < 1),
  -- The order's notional: booked plus unfilled.
  amount numeric(24,6) NOT NULL CHECK (amount >= 0),
  avg_price numeric CHECK (avg_price > 0 AND avg_price < 1),
  filled_notional numeric(24,6) NOT NULL DEFAULT 0 CHECK (filled_notional >= 0),
  filled_shares numeric(24,6) NOT NULL DEFAULT 0 CHECK (filled_shares >= 0),
  unfilled_notional numeric(24,6) NOT NULL DEFAULT 0 CHECK (unfilled_notional >= 0),
  fee numeric(24,6) NOT NULL DEFAULT 0,
  leg_status text NOT NULL CHECK (leg_status IN ('completed','resting','pending','failed','rejected')),
  status text NOT NULL CHECK (status IN ('pending','open','closed')),
  fill_status text NOT NULL CHECK (fill_status IN ('unfilled','partially_filled','filled')),
  rejected_code text,
  rejected_reason text,
  -- Settlement (written by the settlement path): all four together or none.
  result text CHECK (result IN ('win','lose','push','cancelled')),
  winnings numeric(24,6),
  net_winnings numeric(24,6),
  settled_at timestamptz,
  cancelled_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (router_account_id, idempotency_key, leg_index),
  CHECK ((requested_amount IS NULL) <> (requested_shares IS NULL)),
  CHECK ((mode = 'paper') = (currency = 'ATLAS')),
  CHECK ((result IS NULL) = (settled_at IS NULL)),
  CHECK (result IS NULL OR (winnings IS NOT NULL AND net_winnings IS NOT NULL))
);
-- The list reads (newest first, or by settlement time) and their filters, always within one account.
CREATE INDEX orders_account_newest ON orders (router_account_id, created_at DESC, router_order_id DESC);
CREATE INDEX orders_account_settled ON orders (router_account_id, settled_at DESC, router_order_id DESC) WHERE settled_at IS NOT NULL;
CREATE INDEX orders_account_contest ON orders (router_account_id, contest_id, created_at DESC);
CREATE INDEX orders_account_model ON orders (router_account_id, model_id, created_at DESC) WHERE model_id IS NOT NULL;
CREATE INDEX orders_opportunity ON orders (opportunity_id, created_at) WHERE opportunity_id IS NOT NULL;
CREATE INDEX orders_resting ON orders (router_account_id, created_at DESC) WHERE leg_status = 'resting' AND cancelled_at IS NULL;
-- The settlement path finds a contest's unsettled orders here.
CREATE INDEX orders_unsettled_contest ON orders (contest_id) WHERE settled_at IS NULL;

-- check_all_first's affordability pre-check of paper legs (spec rule 6, per venue: here the one
-- wallet): walking the stakes in leg order, a stake fits when it is at most what the legs before it
-- that fit have left; one that does not fit is skipped, not counted, so a later smaller one may fit.
CREATE FUNCTION flow_paper_affordable(p_balance numeric, p_stakes numeric[])
RETURNS boolean[] LANGUAGE plpgsql IMMUTABLE AS $fn$
DECLARE left_over numeric := p_balance; out boolean[] := '{}'; s numeric;
BEGIN
  FOREACH s IN ARRAY coalesce(p_stakes, '{}') LOOP
    IF s <= left_over THEN left_over := left_over - s; out := out || true; ELSE out := out || false; END IF;
  END LOOP;
  RETURN out;
END $fn$;
`,
  },
  {
    version: 9,
    name: 'settlement: the venues\' contest results, the order settlement formula',
    sql: `
-- A venue's settlement of a contest as its feed reported it (pipelines/settlement/recorder.ts): the
-- durable trigger of order settlement (docs/orders.md "Settlement"). Orders settle by the results
-- of the book they were filled on (orders.partner_id; 'practice' for paper). pending: orders of the
-- contest on this book may still be unsettled; the settler clears it once none is left, and a
-- repeated or extended report sets it again. checked_at: when a settler last worked on it, so one
-- whose orders keep waiting (still working at the venue) goes to the back of the queue.
CREATE TABLE contest_settlements (
  partner_id text NOT NULL,
  contest_id text NOT NULL,
  winner_participant_id text,
  ts_event timestamptz NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  pending boolean NOT NULL DEFAULT true,
  checked_at timestamptz,
  PRIMARY KEY (partner_id, contest_id)
);
CREATE INDEX contest_settlements_pending ON contest_settlements (checked_at NULLS FIRST, recorded_at) WHERE pending;
-- Each position's result on that book. The first report stands: a venue that reports a position
-- again with another result is logged, not applied (orders may already have settled on the first).
CREATE TABLE position_settlements (
  partner_id text NOT NULL,
  position_hash text NOT NULL,
  contest_id text NOT NULL,
  result text NOT NULL CHECK (result IN ('win','lose','push','cancelled')),
  PRIMARY KEY (partner_id, position_hash),
  FOREIGN KEY (partner_id, contest_id) REFERENCES contest_settlements (partner_id, contest_id)
);

-- A recorded (or re-opened) settlement wakes an idle settler at once (delivered at commit).
CREATE FUNCTION flow_contest_settlements_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('contest_settlements', '');
  RETURN NULL;
END $fn$;
CREATE TRIGGER contest_settlements_notify AFTER INSERT OR UPDATE ON contest_settlements FOR EACH STATEMENT EXECUTE FUNCTION flow_contest_settlements_notify();

-- The settlement of one order, exact in numeric (the one place the formula lives):
--   result: the position's result on the order's book; 'cancelled' when nothing of the order was
--           booked (filled_notional 0: it took no part, whatever the position did).
--   winnings: what the book pays back. win: filled_shares (a contract pays 1); lose: 0; push and
--           cancelled: the stake back (filled_notional).
--   net_winnings: winnings − fee (the realized venue fee, paid at the fill), so that the spec's
--           performance figure net_pl = Σ net_winnings − Σ amount is the profit after fees.
CREATE FUNCTION flow_order_settlement(p_filled_notional numeric, p_filled_shares numeric, p_fee numeric, p_position_result text)
RETURNS TABLE (result text, winnings numeric, net_winnings numeric) LANGUAGE sql IMMUTABLE AS $fn$
  SELECT a.r, b.w, b.w - p_fee
    FROM (SELECT CASE WHEN p_filled_notional = 0 THEN 'cancelled' ELSE p_position_result END AS r) a,
         LATERAL (SELECT CASE a.r WHEN 'win' THEN p_filled_shares WHEN 'lose' THEN 0 ELSE p_filled_notional END AS w) b;
$fn$;
`,
  },
  {
    version: 10,
    name: 'real-money legs: order intents and their execution; Idempotency-Key leases',
    sql: `
-- A real-money leg is written as an intent before any venue sees it (exec_state 'intent'), marked
-- 'sent' (committed) before every venue call, and 'decided' once the venue's answer and its ledger
-- rows are recorded (src/store/pg/executions.ts, docs/orders.md "Real-money legs"). A 'sent' intent
-- may or may not be at the venue: it is reconciled (placed again under the same client_order_id,
-- which the venue answers with the order it already has) before anything is decided. Paper orders
-- are decided in the buy's own transaction.
ALTER TABLE orders
  ADD COLUMN exec_state text NOT NULL DEFAULT 'decided' CHECK (exec_state IN ('intent','sent','decided')),
  -- What the venue is sent (the preflight plan, on the venue's grid): a stake or a contract count, and the limit.
  ADD COLUMN send_amount numeric(24,6) CHECK (send_amount > 0),
  ADD COLUMN send_shares numeric(24,6) CHECK (send_shares > 0),
  ADD COLUMN limit_price numeric CHECK (limit_price > 0 AND limit_price < 1),
  -- The plan's funds: notional (a resting part at its limit) plus the estimated taker fee.
  ADD COLUMN commitment numeric(24,6) CHECK (commitment >= 0),
  ADD COLUMN venue_order_id text,
  -- Venue calls made for this order (a second one is a reconcile).
  ADD COLUMN attempts integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  ADD COLUMN sent_at timestamptz,
  ADD COLUMN decided_at timestamptz,
  -- An undecided order is a real-money intent: it says what to send.
  ADD CONSTRAINT orders_intent_sends_one_size CHECK (exec_state = 'decided' OR (mode = 'real' AND (send_amount IS NULL) <> (send_shares IS NULL) AND limit_price IS NOT NULL));
-- The execute role's sweep finds undecided intents of its venues here.
CREATE INDEX orders_undecided ON orders (partner_id, created_at) WHERE exec_state <> 'decided';

-- A write that outlives one transaction (a real-money buy waits on venues) keeps its key's record
-- 'running' under a lease its runner renews. A record whose lease lapsed (its runner died) is
-- resumed by the next request with the same key and body instead of answering 409 forever.
ALTER TABLE idempotency_keys ADD COLUMN lease_owner text, ADD COLUMN lease_until timestamptz;

-- flow_idem_claim's rules plus outcome 'resume': the key's record is running and its lease lapsed.
CREATE FUNCTION flow_idem_claim_leased(p_account text, p_key uuid, p_operation text, p_fingerprint text)
RETURNS TABLE (outcome text, status_code integer, response text) LANGUAGE plpgsql AS $fn$
DECLARE r record;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtextextended(p_account || '/' || p_key::text, 727003)) THEN
    RETURN QUERY SELECT 'in_use'::text, NULL::integer, NULL::text; RETURN;
  END IF;
  SELECT k.operation, k.fingerprint, k.state, k.status_code, k.response, k.expires_at > now() AS live, k.lease_until INTO r
    FROM idempotency_keys k WHERE k.router_account_id = p_account AND k.idempotency_key = p_key;
  IF FOUND AND r.live THEN
    IF r.operation <> p_operation OR r.fingerprint <> p_fingerprint THEN
      RETURN QUERY SELECT 'reused'::text, NULL::integer, NULL::text; RETURN;
    END IF;
    IF r.state = 'done' THEN RETURN QUERY SELECT 'replay'::text, r.status_code, r.response; RETURN; END IF;
    IF r.lease_until IS NOT NULL AND r.lease_until <= clock_timestamp() THEN
      RETURN QUERY SELECT 'resume'::text, NULL::integer, NULL::text; RETURN;
    END IF;
    RETURN QUERY SELECT 'in_use'::text, NULL::integer, NULL::text; RETURN;
  END IF;
  IF FOUND THEN DELETE FROM idempotency_keys WHERE router_account_id = p_account AND idempotency_key = p_key; END IF;
  RETURN QUERY SELECT 'fresh'::text, NULL::integer, NULL::text;
END $fn$;

-- Takes the lease of a key's running record, in the claim's transaction: a new record, or a
-- lapsed one taken over (a finished record is never touched).
CREATE FUNCTION flow_idem_lease(p_account text, p_key uuid, p_operation text, p_fingerprint text, p_owner text, p_lease_ms bigint, p_ttl_ms bigint)
RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, lease_owner, lease_until, expires_at)
  VALUES (p_account, p_key, p_operation, p_fingerprint, 'running', p_owner, clock_timestamp() + p_lease_ms * interval '1 millisecond', now() + p_ttl_ms * interval '1 millisecond')
  ON CONFLICT (router_account_id, idempotency_key) DO UPDATE
    SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
    WHERE idempotency_keys.state = 'running';
$fn$;
`,
  },
  {
    version: 11,
    name: 'trade grants per venue connection; execution limits per account',
    sql: `
-- The per-user grants of a venue connection (spec "Authentication": balance:read, history:read,
-- trade:execute), as the hosted flow (or /sim/v1/accounts/:id/connect) leaves them. A real-money
-- buy on the venue needs trade:execute (else 403 scope_not_granted). Connections made before
-- grants existed hold all three, as a connection made without naming any does
-- (USER_GRANTS in src/domain/execution-limits.ts).
ALTER TABLE account_partners
  ADD COLUMN scopes text[] NOT NULL DEFAULT ARRAY['balance:read','history:read','trade:execute']
    CHECK (scopes <@ ARRAY['balance:read','history:read','trade:execute']);

-- The account's execution-limit policy (src/domain/execution-limits.ts, docs/orders.md), replaced
-- whole by each write; position keeps the order it was given in. Each type carries exactly its params.
CREATE TABLE execution_limits (
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  position integer NOT NULL CHECK (position >= 0),
  type text NOT NULL CHECK (type IN ('max_stake_per_order','max_stake_per_venue','max_stake_per_league','practice_only')),
  partner_id text,
  league_id text,
  amount numeric(24,6) CHECK (amount > 0),
  PRIMARY KEY (router_account_id, position),
  CHECK (CASE type
           WHEN 'max_stake_per_order' THEN amount IS NOT NULL AND partner_id IS NULL AND league_id IS NULL
           WHEN 'max_stake_per_venue' THEN amount IS NOT NULL AND partner_id IS NOT NULL AND league_id IS NULL
           WHEN 'max_stake_per_league' THEN amount IS NOT NULL AND league_id IS NOT NULL AND partner_id IS NULL
           ELSE amount IS NULL AND partner_id IS NULL AND league_id IS NULL
         END)
);
-- No two limits on the same thing.
CREATE UNIQUE INDEX execution_limits_one_per_target ON execution_limits (router_account_id, type, coalesce(partner_id, ''), coalesce(league_id, ''));

-- The open real-money exposure a per-venue or per-league limit counts (openExposure in
-- src/store/pg/policy.ts): the account's unsettled real orders.
CREATE INDEX orders_account_open_real ON orders (router_account_id) WHERE mode = 'real' AND settled_at IS NULL;
`,
  },
  {
    version: 12,
    name: 'real-money orders after their decision: later fills, venue-side cancels, liquidity refreshes',
    sql: `
-- A resting or pending order learns of its later fills and of its end at the venue (the execute
-- role's order-update feed, and its reconcile by fetchOrder: src/store/pg/order-updates.ts). An
-- update lands once: it is applied only while the order is working and when it carries more
-- filled contracts than recorded, or ends the order.
-- cancel_requested_at: POST orders/cancel asked the venue to cancel (a job on the venue's execute
-- queue carries it out and clears it); cancel_error: why the venue last refused a cancel.
-- reconciled_at: when the order was last compared with the venue's record (the reconcile takes
-- the least recently compared first, so every working order gets its turn).
ALTER TABLE orders
  ADD COLUMN cancel_requested_at timestamptz,
  ADD COLUMN cancel_error text,
  ADD COLUMN reconciled_at timestamptz;
-- An update names the order by its client_order_id (unique already) or by the venue's id.
CREATE INDEX orders_venue_order ON orders (partner_id, venue_order_id) WHERE venue_order_id IS NOT NULL;
-- The reconcile's working orders per venue, and the sweep's cancels still asked for.
CREATE INDEX orders_working ON orders (partner_id, reconciled_at NULLS FIRST)
  WHERE mode = 'real' AND exec_state = 'decided' AND leg_status IN ('resting','pending') AND cancelled_at IS NULL;
CREATE INDEX orders_cancel_requested ON orders (partner_id, cancel_requested_at) WHERE cancel_requested_at IS NOT NULL;
-- What an order holds is the sum of its hold and release rows: found per order here.
CREATE INDEX balance_ledger_order ON balance_ledger (router_order_id) WHERE router_order_id IS NOT NULL;

-- A fill on a real venue changes the contest's liquidity in a way no quote entry carries yet: a
-- liquidity.update {changed_entries: [], refresh_required: true} goes to the contest's event log.
-- Asked for here in the fill's transaction (one row per contest while one waits: fills coalesce),
-- appended to the log by the execute role's refresh relay and deleted in one transaction.
CREATE TABLE liquidity_refresh_outbox (
  contest_id text PRIMARY KEY,
  requested_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE FUNCTION flow_liquidity_refresh_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_notify('liquidity_refresh', '');
  RETURN NULL;
END $fn$;
CREATE TRIGGER liquidity_refresh_notify AFTER INSERT ON liquidity_refresh_outbox FOR EACH STATEMENT EXECUTE FUNCTION flow_liquidity_refresh_notify();
`,
  },
  {
    version: 13,
    name: 'a practice buy in one statement; its outbox wake-up after its commit',
    sql: `
-- NOTIFY's cost: PostgreSQL takes a cluster-wide lock when a notifying transaction commits and holds
-- it through the commit's WAL flush, so notifying commits cannot share an fsync (measured here: a
-- practice buy's writes ran at 2-3x the rate without the outbox trigger's NOTIFY). A write may leave
-- the wake-up to its caller, who sends it (flow_account_outbox_wake) in a transaction of its own once
-- the write committed: that one writes no WAL, so it holds the lock for a moment. The events are
-- written in the same transaction as before; only the hint that wakes an idle relay moves, and a
-- relay polls behind it anyway. Set flow.outbox_wake to 'after_commit' (transaction-local) to do so.
CREATE OR REPLACE FUNCTION flow_account_outbox_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF current_setting('flow.outbox_wake', true) IS DISTINCT FROM 'after_commit' THEN PERFORM pg_notify('account_outbox', ''); END IF;
  RETURN NULL;
END $fn$;
CREATE FUNCTION flow_account_outbox_wake() RETURNS void LANGUAGE sql VOLATILE AS $fn$ SELECT pg_notify('account_outbox', '') $fn$;

-- A practice buy whole, in one statement (src/store/pg/paper-buys.ts), for a buy whose every leg was
-- planned before it (priced on the hot state, sized by the same numeric arithmetic, its catalog
-- facts taken from a copy): the key's claim, the account's lock, the model's share lock, per leg the
-- wallet debit, the opportunity (opened with the first order), the order row and its two events,
-- then the key's record of the response. The relay's wake-up is the caller's, after the commit. That is what the buy's transaction writes
-- (api/rest/orders/execution.ts), in its order and under its locks. Whatever would make that
-- transaction answer otherwise (no account, a model that refuses orders, a catalog fact that is no
-- longer so, a leg the wallet cannot cover, a balance a JS number cannot show exactly) raises
-- SQLSTATE FL001 with the reason as its detail: nothing is written, and the caller runs the buy's
-- transaction, which answers it.
-- p_internal: the internal-book partners the plan left out of its prices. p_legs, in leg order:
-- {order: the orders row (its columns as named below), stake, ledger_id, opening_ledger_id,
-- description, order_event, balance_event (its fixed fields; the balance fields are filled in here,
-- as flow_practice_deposit does)}. outcome: as flow_idem_claim, or created (response is p_response).
CREATE FUNCTION flow_paper_buy(p_account text, p_key uuid, p_operation text, p_fingerprint text, p_model_id text, p_opportunity_id text,
                               p_internal text[], p_legs jsonb, p_cap numeric, p_opening numeric, p_status integer, p_response text, p_ttl_ms bigint)
RETURNS TABLE (outcome text, status_code integer, response text) LANGUAGE plpgsql AS $fn$
DECLARE c record; a record; l jsonb; o jsonb; pos record; model_status text; books text[]; opened boolean := false;
BEGIN
  SELECT * INTO c FROM flow_idem_claim(p_account, p_key, p_operation, p_fingerprint);
  IF c.outcome <> 'fresh' THEN RETURN QUERY SELECT c.outcome, c.status_code, c.response; RETURN; END IF;
  PERFORM 1 FROM accounts WHERE router_account_id = p_account FOR NO KEY UPDATE;
  IF NOT FOUND THEN RAISE EXCEPTION 'flow_paper_buy: run the transaction' USING ERRCODE = 'FL001', DETAIL = 'no_account'; END IF;
  IF p_model_id IS NOT NULL THEN
    SELECT m.status INTO model_status FROM models m WHERE m.model_id = p_model_id AND m.router_account_id = p_account FOR SHARE;
    IF model_status IS DISTINCT FROM 'active' THEN RAISE EXCEPTION 'flow_paper_buy: run the transaction' USING ERRCODE = 'FL001', DETAIL = 'model'; END IF;
  END IF;
  PERFORM set_config('flow.outbox_wake', 'after_commit', true);
  books := ARRAY(SELECT partner_id FROM partners WHERE internal_book);
  IF NOT (books @> p_internal AND p_internal @> books) THEN
    RAISE EXCEPTION 'flow_paper_buy: run the transaction' USING ERRCODE = 'FL001', DETAIL = 'catalog';
  END IF;
  FOR l IN SELECT x FROM jsonb_array_elements(p_legs) AS x LOOP
    o := l->'order';
    SELECT p.contest_id, p.definition->>'title' AS title INTO pos FROM positions p JOIN contests ct ON ct.id = p.contest_id WHERE p.position_hash = o->>'position_hash';
    IF NOT FOUND OR pos.contest_id IS DISTINCT FROM o->>'contest_id' OR pos.title IS DISTINCT FROM o->>'title' THEN
      RAISE EXCEPTION 'flow_paper_buy: run the transaction' USING ERRCODE = 'FL001', DETAIL = 'catalog';
    END IF;
    SELECT * INTO a FROM flow_practice_append(p_account, l->>'ledger_id', 'bet_debit', -((l->>'stake')::numeric), o->>'router_order_id', l->>'description', p_cap,
                                              l->>'opening_ledger_id', p_opening);
    -- The JS path shows the balance as a number: beyond 15 significant digits its text may differ.
    IF a.outcome <> 'ok' OR length(replace(trim_scale(a.balance_after)::text, '.', '')) > 15 THEN
      RAISE EXCEPTION 'flow_paper_buy: run the transaction' USING ERRCODE = 'FL001', DETAIL = 'wallet';
    END IF;
    IF NOT opened THEN
      INSERT INTO opportunities (opportunity_id, router_account_id, model_id, currency) VALUES (p_opportunity_id, p_account, p_model_id, o->>'currency');
      opened := true;
    END IF;
    INSERT INTO orders (router_order_id, router_account_id, opportunity_id, model_id, idempotency_key, leg_index, client_order_id, sor_decision_id,
                        partner_id, requested_partner_id, currency, mode, order_type, position_hash, liquidity_hash, price_partner_id, price_liquidity_hash,
                        contest_id, title, requested_amount, requested_shares, max_price, amount, avg_price, filled_notional, filled_shares,
                        unfilled_notional, fee, leg_status, status, fill_status, rejected_code, rejected_reason)
    SELECT r.router_order_id, r.router_account_id, r.opportunity_id, r.model_id, r.idempotency_key, r.leg_index, r.client_order_id, r.sor_decision_id,
           r.partner_id, r.requested_partner_id, r.currency, r.mode, r.order_type, r.position_hash, r.liquidity_hash, r.price_partner_id, r.price_liquidity_hash,
           r.contest_id, r.title, r.requested_amount, r.requested_shares, r.max_price, r.amount, r.avg_price, r.filled_notional, r.filled_shares,
           r.unfilled_notional, r.fee, r.leg_status, r.status, r.fill_status, r.rejected_code, r.rejected_reason
      FROM jsonb_populate_record(NULL::orders, o) r;
    -- Both events in one insert, in this order (seq follows the rows).
    INSERT INTO account_outbox (router_account_id, channel, event)
    VALUES (p_account, 'orders', l->'order_event'),
           (p_account, 'balance', (l->'balance_event') || jsonb_build_object('balance', trim_scale(a.balance_after), 'venue_balance', trim_scale(a.balance_after),
                                                                          'balance_version', a.seq,
                                                                          'balance_as_of', to_char(a.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')));
  END LOOP;
  PERFORM flow_idem_record(p_account, p_key, p_operation, p_fingerprint, p_status, p_response, p_ttl_ms);
  RETURN QUERY SELECT 'created'::text, p_status, p_response;
END $fn$;
`,
  },
  {
    version: 16,
    name: 'AI pass-through: linked provider keys (encrypted), credit use per workspace and month',
    sql: `
-- An account's own key for an AI provider (docs/ai.md). Only ciphertext is kept: AES-256-GCM under
-- FLOW_AI_KEY_SECRET (src/store/pg/ai-keys.ts), the layout iv (12 bytes) || tag (16) || ciphertext.
-- key_hint is the key's last four characters, to tell linked keys apart without revealing them.
CREATE TABLE ai_provider_keys (
  router_account_id text NOT NULL REFERENCES accounts(router_account_id),
  provider text NOT NULL CHECK (provider IN ('anthropic','openai')),
  key_ciphertext bytea NOT NULL,
  key_hint text NOT NULL,
  linked_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (router_account_id, provider)
);

-- Reasoning credits spent (src/store/pg/credits.ts): one row per workspace and UTC month, so a spend
-- is one atomic upsert that refuses to pass the allowance. A row per workspace per month is the
-- whole growth; the allowance itself is the plan's (src/domain/plans.ts), not stored.
CREATE TABLE credit_usage (
  workspace_id text NOT NULL REFERENCES workspaces(id),
  period date NOT NULL CHECK (extract(day FROM period) = 1),
  used integer NOT NULL CHECK (used >= 0),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workspace_id, period)
);
`,
  },
  {
    version: 17,
    name: 'the key record, the key lease and the wallet opening as PL/pgSQL: planned once per connection',
    sql: `
-- A LANGUAGE sql function that is not inlined (these insert) is parsed and planned again on every
-- call; PL/pgSQL keeps its statements' plans for the connection. flow_idem_record runs in every
-- practice buy and deposit (flow_paper_buy, flow_practice_deposit) and every buy's transaction:
-- measured with pgbench on the one-statement practice buy, 1.10-1.17 → 0.94-1.00 ms of
-- PostgreSQL CPU a buy. Same bodies, same signatures: callers do not change.
CREATE OR REPLACE FUNCTION flow_idem_record(p_account text, p_key uuid, p_operation text, p_fingerprint text, p_status integer, p_response text, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, status_code, response, expires_at)
  VALUES (p_account, p_key, p_operation, p_fingerprint, 'done', p_status, p_response, now() + p_ttl_ms * interval '1 millisecond');
END $fn$;

CREATE OR REPLACE FUNCTION flow_idem_lease(p_account text, p_key uuid, p_operation text, p_fingerprint text, p_owner text, p_lease_ms bigint, p_ttl_ms bigint)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO idempotency_keys (router_account_id, idempotency_key, operation, fingerprint, state, lease_owner, lease_until, expires_at)
  VALUES (p_account, p_key, p_operation, p_fingerprint, 'running', p_owner, clock_timestamp() + p_lease_ms * interval '1 millisecond', now() + p_ttl_ms * interval '1 millisecond')
  ON CONFLICT (router_account_id, idempotency_key) DO UPDATE
    SET lease_owner = EXCLUDED.lease_owner, lease_until = EXCLUDED.lease_until
    WHERE idempotency_keys.state = 'running';
END $fn$;

CREATE OR REPLACE FUNCTION flow_practice_open(p_account text, p_ledger_id text, p_opening numeric)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO practice_ledger (router_account_id, seq, ledger_id, type, amount, balance_after, description)
  VALUES (p_account, 1, p_ledger_id, 'opening_balance', p_opening, p_opening, 'Every practice wallet starts at 1,000 ATLAS')
  ON CONFLICT DO NOTHING;
END $fn$;
`,
  },
];
