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
];
