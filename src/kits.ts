/**
 * The kit files (kits/*.md at the repository root, shipped with the build) and the per-key
 * fingerprint their copies carry (docs/kits.md). The watermark itself is src/domain/watermark.ts.
 */
import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseKit, type KitDefinition } from './domain/kits.js';
import type { Principal } from './domain/principal.js';
import { embedWatermark, readWatermark, watermarkMatch, type WatermarkReading } from './domain/watermark.js';

/**
 * kits/ beside package.json: from source this module is src/kits.ts, from the build
 * dist/src/kits.js, so the root is found by walking up rather than by a fixed number of steps.
 */
export function defaultKitsDir(from = path.dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'kits'))) return path.join(dir, 'kits');
    if (path.dirname(dir) === dir) throw new Error(`no kits/ directory beside a package.json above ${from}`);
  }
}

/** Every kit, by slug order. Read once at start: a malformed kit stops the start with its problem. */
export function loadKits(dir = defaultKitsDir()): KitDefinition[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => parseKit(f.slice(0, -3), readFileSync(path.join(dir, f), 'utf8')));
}

/** Who a copy is for: the key, or for a player JWT (no key) its account. */
export const watermarkIdentity = (p: Pick<Principal, 'key_id' | 'router_account_id'>): string => p.key_id ?? `account:${p.router_account_id}`;

/** 64 bits of HMAC-SHA256(secret, identity), hex: stable per key, unforgeable without the secret. */
export function kitFingerprint(secret: string, identity: string): string {
  return createHmac('sha256', secret).update(`flow-kit-watermark:v1:${identity}`).digest('hex').slice(0, 16);
}

export function watermarkedCopy(kit: KitDefinition, secret: string, identity: string): string {
  return embedWatermark(kit.markdown, kitFingerprint(secret, identity));
}

export interface TraceMatch {
  identity: string;
  /** Zero-width frames naming this identity. */
  frames: number;
  /** The trailing-space channel names it too. */
  spaces: boolean;
}

/**
 * Which of the candidate identities (key ids, `account:<id>`) fetched this copy: every candidate
 * either channel names, the most frames first. The operator's `flow kits trace` runs this over every
 * key and account of the deployment.
 */
export function traceCopy(copy: string, secret: string, candidates: Iterable<string>): { reading: WatermarkReading; matches: TraceMatch[] } {
  const reading = readWatermark(copy);
  const matches: TraceMatch[] = [];
  for (const identity of candidates) {
    const m = watermarkMatch(reading, kitFingerprint(secret, identity));
    if (m.frames > 0 || m.spaces) matches.push({ identity, ...m });
  }
  matches.sort((a, b) => b.frames - a.frames || Number(b.spaces) - Number(a.spaces));
  return { reading, matches };
}
