/**
 * Catalog resources as the spec shows them to callers. Ids are opaque strings; the service
 * never splits or prefix-matches them except where it minted them itself (hashes).
 */

export type ParticipantType = 'team' | 'athlete' | null;

export interface League {
  id: string;
  name: string;
  participant_type: ParticipantType;
  status: string;
}

/** Slim shape suited to dropdowns. */
export interface Participant {
  id: string;
  league_id: string;
  name: string;
  abbr: string | null;
  image_url: string | null;
  country: string | null;
}

export interface TeamTag {
  abbr: string;
  name: string;
  full_label: string;
  market_name: string;
}

export interface ContestTags {
  source?: string;
  event_title?: string;
  home_team?: TeamTag;
  away_team?: TeamTag;
  venue?: { name: string; city: string; state: string | null; country: string; time_zone: string };
  broadcast?: { network: string };
  [extra: string]: unknown;
}

export interface Contest {
  id: string;
  league_id: string;
  title: string;
  /** e.g. `match`, `tournament`, `fight`, `race`. */
  type: string;
  parent_contest_id: string | null;
  starts_at: string;
  status: string;
  has_markets: boolean;
  tags: ContestTags;
  created_at: string;
  updated_at: string;
}

export interface Market {
  id: string;
  key: string;
  name: string;
  variable_required: boolean;
  allow_multiple_participants: boolean;
  /** The two side keys this market type prices (home/away, over/under, yes/no). */
  side_keys: string[];
}

export type OrderType = 'market' | 'limit';

export interface OrderConfig {
  orders_allowed: boolean;
  credentials_allowed: boolean;
  min_order_amount: number;
  max_order_amount: number | null;
  amount_increment: number | null;
  whole_contracts: boolean;
  full_fill_always_allowed: boolean;
  price_submitted: boolean;
  price_format: 'cents' | 'probability' | 'american';
  price_tick: number;
  min_price: number | null;
  max_price: number | null;
  cancel_supported: boolean;
  supported_order_types: OrderType[];
}

export interface CredentialField {
  key: string;
  label: string;
  type: 'text' | 'password' | 'email';
  required: boolean;
}

export interface Partner {
  partner_id: string;
  name: string;
  status: string;
  orders_allowed: boolean;
  connectable: boolean;
  internal_book: boolean;
  order_config: OrderConfig;
  credential_fields: CredentialField[];
  logo_url: string;
}

/** A position's definition: one bettable outcome of a contest, as the catalog holds it. */
export interface PositionDefinition {
  position_hash: string;
  contest_id: string;
  title: string;
  market_id: string;
  market_key: string;
  side_key: string;
  /** Line value; 0 when the market has no line. */
  variable: number;
  participant_id: string;
  participant_name: string;
  participant_image_url: string | null;
  timeframe: string;
  /** The mutually exclusive set this position belongs to (both sides of a moneyline, over/under of
   *  one total line, every runner of an outright). */
  group_key: string;
  /** Ties the lines of one spread/total ladder together (per participant for player props); null
   *  for markets without lines. */
  ladder_key: string | null;
}
