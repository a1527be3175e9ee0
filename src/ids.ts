/** Opaque identifiers and secrets minted by the service. */
import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_RANDOM_CHARS, BASE62, formatApiKey } from './domain/api-key.js';

// Ids are minted several per request: their random bytes are drawn from the CSPRNG a few KiB at a
// time (as crypto.randomUUID does) rather than one call per id, each byte used once.
const RANDOM_BATCH = 4096;
let batch = Buffer.alloc(0);
let used = 0;
function randomSlice(n: number): Buffer {
  if (n > RANDOM_BATCH) return randomBytes(n);
  if (used + n > batch.length) {
    batch = randomBytes(RANDOM_BATCH);
    used = 0;
  }
  return batch.subarray(used, (used += n));
}

export const newId = (prefix: string, bytes = 12): string => `${prefix}_${randomSlice(bytes).toString('base64url')}`;

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** `n` uniformly random base62 characters (bytes of 248 and above are dropped, so no character is favoured). */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 248 && out.length < n) out += BASE62[b % 62];
    }
  }
  return out;
}

/**
 * An API key shows its environment so a leaked one is easy to triage, carries 196 random bits, and
 * ends in a checksum so a malformed key is refused before any lookup (src/domain/api-key.ts).
 */
export const newApiKey = (environment: 'test' | 'live'): string => formatApiKey(environment, randomBase62(API_KEY_RANDOM_CHARS));
