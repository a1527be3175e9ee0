/** Shared helpers for the Kalshi tests: fixtures, a test partner, an RSA key pair. */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Partner } from '../../../src/domain/catalog.js';
import { kalshiOrderConfig } from '../../../src/venues/kalshi/grid.js';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');

export const fixtureText = (name: string): string => readFileSync(join(FIXTURES, name), 'utf8');
export const fixture = <T = any>(name: string): T => JSON.parse(fixtureText(name)) as T;
/** The JSON lines of a .jsonl fixture. */
export const lines = <T = any>(name: string): T[] =>
  fixtureText(name)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

export const TEST_PARTNER: Partner = {
  partner_id: 'kalshi',
  name: 'Kalshi',
  status: 'active',
  orders_allowed: false,
  connectable: false,
  internal_book: false,
  order_config: kalshiOrderConfig(false),
  credential_fields: [],
  logo_url: 'https://static.flow.local/partners/kalshi.svg',
};

let pair: { privateKeyPem: string; publicKeyPem: string } | null = null;

/** One RSA key pair per test process (2048-bit, as Kalshi issues). */
export function rsaPair(): { privateKeyPem: string; publicKeyPem: string } {
  if (!pair) {
    const k = generateKeyPairSync('rsa', { modulusLength: 2048 });
    pair = {
      privateKeyPem: k.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      publicKeyPem: k.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    };
  }
  return pair;
}
