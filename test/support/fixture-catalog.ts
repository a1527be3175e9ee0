/**
 * A small hand-written catalog whose every answer a test can know in advance: three leagues (team,
 * athlete, null participant_type), contests at fixed times around FIXTURE_NOW, one tournament with
 * children, and two venues.
 */
import type { CatalogSeed } from '../../src/store/pg/catalog.js';
import type { OrderConfig } from '../../src/domain/catalog.js';

export const FIXTURE_NOW = Date.parse('2026-11-20T12:00:00.000Z');
const at = (hours: number) => new Date(FIXTURE_NOW + hours * 3_600_000).toISOString();

const team = (abbr: string, name: string) => ({ abbr, name, full_label: `${name} (${abbr})`, market_name: name });

const cfg: OrderConfig = {
  orders_allowed: true,
  credentials_allowed: true,
  min_order_amount: 1,
  max_order_amount: null,
  amount_increment: 0.01,
  whole_contracts: false,
  full_fill_always_allowed: false,
  price_submitted: true,
  price_format: 'probability',
  price_tick: 0.01,
  min_price: 0.01,
  max_price: 0.99,
  cancel_supported: true,
  supported_order_types: ['market', 'limit'],
};

function contest(id: string, league_id: string, title: string, hours: number, extra: Partial<CatalogSeed['contests'][number]> = {}) {
  return {
    id,
    league_id,
    title,
    type: 'match',
    parent_contest_id: null,
    starts_at: at(hours),
    status: 'open',
    has_markets: false,
    tags: {},
    created_at: at(-100),
    updated_at: at(-100),
    ...extra,
  };
}

export const FIXTURE_CATALOG: CatalogSeed = {
  leagues: [
    { id: 'lg_fb', name: 'Pro Football', participant_type: 'team', status: 'active' },
    { id: 'lg_tn', name: 'Tennis Tour', participant_type: 'athlete', status: 'active' },
    { id: 'lg_aw', name: 'Film Awards', participant_type: null, status: 'active' },
  ],
  participants: [
    { id: 'pt_bos', league_id: 'lg_fb', name: 'Boston Harbors', abbr: 'BOS', image_url: null, country: null },
    { id: 'pt_nyc', league_id: 'lg_fb', name: 'New York Knights', abbr: 'NYK', image_url: null, country: null },
    { id: 'pt_chi', league_id: 'lg_fb', name: 'Chicago Winds', abbr: 'CHI', image_url: null, country: null },
    { id: 'pt_ana', league_id: 'lg_tn', name: 'Ana Ruiz', abbr: null, image_url: null, country: 'ES' },
    { id: 'pt_kim', league_id: 'lg_tn', name: 'Min Kim', abbr: null, image_url: null, country: 'KR' },
  ],
  contests: [
    contest('ct_1', 'lg_fb', 'Boston Harbors at New York Knights', 1, {
      tags: { source: 'fixture', home_team: team('NYK', 'New York Knights'), away_team: team('BOS', 'Boston Harbors') },
    }),
    contest('ct_2', 'lg_fb', 'Chicago Winds at Boston Harbors', 2, {
      tags: { source: 'fixture', home_team: team('BOS', 'Boston Harbors'), away_team: team('CHI', 'Chicago Winds') },
    }),
    // Same start as ct_2: ordering falls back to id.
    contest('ct_3', 'lg_fb', 'New York Knights at Chicago Winds', 2, {
      tags: { source: 'fixture', home_team: team('CHI', 'Chicago Winds'), away_team: team('NYK', 'New York Knights') },
    }),
    contest('ct_4', 'lg_tn', 'Ruiz vs Kim', 5),
    contest('ct_5', 'lg_fb', 'Boston Harbors at Chicago Winds (final)', -30, { status: 'closed' }),
    contest('ct_t', 'lg_tn', 'Autumn Open 100% Championship', 0, { type: 'tournament' }),
    contest('ct_t1', 'lg_tn', 'Autumn Open: Ruiz vs Kim', 3, { parent_contest_id: 'ct_t' }),
    contest('ct_t2', 'lg_tn', 'Autumn Open: Kim vs Ruiz', 27, { parent_contest_id: 'ct_t' }),
    contest('ct_aw', 'lg_aw', 'Best Picture', 240, { type: 'award' }),
  ],
  markets: [
    { id: 'mk_ml', key: 'moneyline', name: 'Moneyline', variable_required: false, allow_multiple_participants: false, side_keys: ['home', 'away'] },
    { id: 'mk_tot', key: 'total', name: 'Total', variable_required: true, allow_multiple_participants: false, side_keys: ['over', 'under'] },
    { id: 'mk_win', key: 'tournament_winner', name: 'Winner', variable_required: false, allow_multiple_participants: true, side_keys: ['yes', 'no'] },
  ],
  contest_markets: [
    { contest_id: 'ct_1', market_id: 'mk_ml' },
    { contest_id: 'ct_1', market_id: 'mk_tot' },
    { contest_id: 'ct_t', market_id: 'mk_win' },
  ],
  positions: [],
  partners: [
    {
      partner_id: 'fx_book',
      name: 'Fixture Book',
      status: 'active',
      orders_allowed: true,
      connectable: true,
      internal_book: false,
      order_config: cfg,
      credential_fields: [{ key: 'api_key', label: 'API key', type: 'password', required: true }],
      logo_url: 'https://example.invalid/fx.png',
    },
    {
      partner_id: 'practice',
      name: 'Practice',
      status: 'active',
      orders_allowed: true,
      connectable: false,
      internal_book: true,
      order_config: { ...cfg, credentials_allowed: false, supported_order_types: ['market'] },
      credential_fields: [],
      logo_url: 'https://example.invalid/practice.png',
    },
  ],
};
