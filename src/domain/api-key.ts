/**
 * The API key format: `flow_<env>_<random><check>`, where random is 33 base62 characters (196 bits)
 * and check is the CRC-32 of everything before it, as 6 base62 characters (GitHub's token scheme).
 * The checksum is not a secret: it lets the gate refuse a mistyped, truncated or made-up key with no
 * store lookup at all, so garbage costs neither Redis nor PostgreSQL anything.
 *
 *   flow_test_4fJ0qZ9xWm2PbK7tRr1sVd8eYh3nCu6aLgQ   (random: 4fJ0…Lg, check: the last 6)
 */
export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const API_KEY_RANDOM_CHARS = 33;
export const API_KEY_CHECK_CHARS = 6;

const SHAPE = new RegExp(`^flow_(test|live)_[0-9A-Za-z]{${API_KEY_RANDOM_CHARS + API_KEY_CHECK_CHARS}}$`);

let table: Uint32Array | null = null;

/** CRC-32 (IEEE 802.3, as zlib) of an ASCII string. */
export function crc32(s: string): number {
  if (!table) {
    table = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      table[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (let i = 0; i < s.length; i++) crc = table[(crc ^ s.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The check characters of a key body (prefix and random part): CRC-32 in base62, zero-padded. */
export function apiKeyCheck(body: string): string {
  let n = crc32(body);
  let out = '';
  for (let i = 0; i < API_KEY_CHECK_CHARS; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/** A key from its environment and random base62 part. */
export function formatApiKey(environment: 'test' | 'live', random: string): string {
  const body = `flow_${environment}_${random}`;
  return body + apiKeyCheck(body);
}

/** Whether a presented key has the shape and checksum of a key this service mints. */
export function isWellFormedApiKey(key: string): boolean {
  if (!SHAPE.test(key)) return false;
  const cut = key.length - API_KEY_CHECK_CHARS;
  return apiKeyCheck(key.slice(0, cut)) === key.slice(cut);
}
