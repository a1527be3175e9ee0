/**
 * A digest of a contest's REST liquidity answer, stored with the snapshot so the next run can tell
 * whether the answer changed (refresh_required) without keeping the answer itself a second time.
 *
 * `as_of` values are left out: ingest re-confirms unchanged quotes every 20 s or so, and a refetch
 * for a newer confirmation time alone would send every client back to REST for nothing (a flip of
 * `is_stale`, the part of it that matters, is a changed entry).
 */

const AS_OF = '"as_of":"';

/**
 * 53-bit hash (cyrb53: two 32-bit multiply-xor lanes) of `json` with every `"as_of":"…"` member
 * skipped. Not cryptographic: a collision only costs one missed refresh hint, at odds of 2^-53.
 */
export function liquidityDigest(json: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  let from = 0;
  while (from < json.length) {
    const at = json.indexOf(AS_OF, from);
    const end = at === -1 ? json.length : at;
    for (let i = from; i < end; i++) {
      const c = json.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    if (at === -1) break;
    // An ISO timestamp holds no quote or backslash, so the value ends at the next quote.
    const close = json.indexOf('"', at + AS_OF.length);
    from = close === -1 ? json.length : close + 1;
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * One digest of a sequence of digests (each a liquidityDigest, 53 bits), in order: how the answer's
 * digest is made from its fragments' (answerDigest), so a run rehashes only the fragments it
 * rebuilt. Same lanes and finish as liquidityDigest, fed two 32-bit words per digest.
 */
export function combineDigests(parts: ArrayLike<number>): number {
  let h1 = 0xdeadbeef ^ parts.length;
  let h2 = 0x41c6ce57 ^ parts.length;
  for (let i = 0; i < parts.length; i++) {
    const x = parts[i]!;
    const lo = x >>> 0;
    const hi = (x / 4294967296) >>> 0;
    h1 = Math.imul(h1 ^ lo, 2654435761);
    h2 = Math.imul(h2 ^ lo, 1597334677);
    h1 = Math.imul(h1 ^ hi, 2654435761);
    h2 = Math.imul(h2 ^ hi, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}
