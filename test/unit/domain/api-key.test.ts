import { crc32 as zlibCrc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { apiKeyCheck, crc32, formatApiKey, isWellFormedApiKey } from '../../../src/domain/api-key.js';
import { newApiKey } from '../../../src/ids.js';

describe('API key checksum', () => {
  it('CRC-32 is zlib’s', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (s) => {
        expect(crc32(s)).toBe(zlibCrc32(Buffer.from(s, 'latin1')));
      }),
    );
  });
  it('minted keys are well formed, 196 random bits, unique', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const k = newApiKey(i % 2 ? 'live' : 'test');
      expect(k).toMatch(/^flow_(test|live)_[0-9A-Za-z]{39}$/);
      expect(isWellFormedApiKey(k)).toBe(true);
      keys.add(k);
    }
    expect(keys.size).toBe(2000);
  });
  it('refuses any single-character change, truncation, extension, and the old format', () => {
    const k = newApiKey('test');
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    for (let i = 'flow_test_'.length; i < k.length; i++) {
      for (const c of alphabet) {
        if (c === k[i]) continue;
        expect(isWellFormedApiKey(k.slice(0, i) + c + k.slice(i + 1))).toBe(false);
      }
    }
    expect(isWellFormedApiKey(k.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(k + 'a')).toBe(false);
    expect(isWellFormedApiKey(k.replace('flow_test_', 'flow_live_'))).toBe(false);
    expect(isWellFormedApiKey('flow_test_' + 'A'.repeat(32))).toBe(false);
    expect(isWellFormedApiKey('flow_test_nope')).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });
  it('a key built from any random part carries its own check', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9A-Za-z]{33}$/), fc.constantFrom('test' as const, 'live' as const), (r, env) => {
        const k = formatApiKey(env, r);
        expect(isWellFormedApiKey(k)).toBe(true);
        expect(k.endsWith(apiKeyCheck(`flow_${env}_${r}`))).toBe(true);
      }),
    );
  });
});
