/**
 * Kits over HTTP (issue 13 item 4; spec "Kit"): the catalog as each plan sees it, a kit's content
 * with its watermarked copy, kit_not_entitled with details.entitlement, kit_not_found, and the
 * watermark doing its job: two keys get distinguishable copies of the same text, each copy traces
 * back to the key that fetched it (as `flow kits trace` does), the same key always gets the same
 * copy, and every copy strips back to the guide in kits/.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKitsCommand } from '../../../cli/ai-kits.js';
import { PLAN_ENTITLEMENTS, PLANS } from '../../../src/domain/plans.js';
import { stripWatermark } from '../../../src/domain/watermark.js';
import { signPlayerJwt } from '../../../src/jwt.js';
import { defaultKitsDir, kitFingerprint, loadKits, traceCopy } from '../../../src/kits.js';
import type { CreatedKey } from '../../../src/store/pg/keys.js';
import { accountKey, keyHeaders as H } from '../../support/accounts.js';
import { get } from '../../support/http.js';
import { startStack, type TestStack } from '../../support/stack.js';

let s: TestStack;
let FREE: CreatedKey;
let PRO: CreatedKey;
let PRO2: CreatedKey;
const KITS = loadKits();

beforeAll(async () => {
  s = await startStack();
  FREE = await accountKey(s, 'data', { plan: 'free' });
  PRO = await accountKey(s, 'data', { plan: 'pro' });
  PRO2 = await accountKey(s, 'execution', { plan: 'pro' });
});
afterAll(async () => s?.close());

describe('the kit files', () => {
  it('are real guides: at least four, each a versioned kit:<slug> that some plan grants', () => {
    expect(KITS.map((k) => k.slug)).toEqual(['orders-reconcile', 'price-history', 'signals-arbitrage', 'streaming-resume']);
    for (const k of KITS) {
      expect(k.entitlement).toBe(`kit:${k.slug}`);
      expect(k.version).toBeGreaterThanOrEqual(1);
      expect(k.markdown.length, k.slug).toBeGreaterThan(3000);
      expect(PLANS.some((p) => PLAN_ENTITLEMENTS[p].includes(k.entitlement)), k.slug).toBe(true);
      // The file as stored, front matter aside, is what is served (before the watermark).
      expect(readFileSync(path.join(defaultKitsDir(), `${k.slug}.md`), 'utf8').endsWith(k.markdown)).toBe(true);
    }
  });
});

describe('GET /flow/v1/kits', () => {
  it('lists every kit with the spec’s fields, entitled per key', async () => {
    const free = await get(s.built.app, '/flow/v1/kits', H(FREE));
    expect(free.status).toBe(200);
    expect(free.body.data.kits.map((k: any) => k.slug)).toEqual(KITS.map((k) => k.slug));
    const orders = free.body.data.kits.find((k: any) => k.slug === 'orders-reconcile');
    expect(orders).toEqual({
      slug: 'orders-reconcile',
      title: 'Placing and reconciling orders',
      version: 1,
      summary: KITS.find((k) => k.slug === 'orders-reconcile')!.summary,
      entitlement: 'kit:orders-reconcile',
      companion_entitlements: ['trade:execute', 'account:read', 'stream:realtime'],
      entitled: true,
    });
    expect(free.body.data.kits.filter((k: any) => !k.entitled).map((k: any) => k.slug)).toEqual(['price-history', 'signals-arbitrage', 'streaming-resume']);
    const pro = await get(s.built.app, '/flow/v1/kits', H(PRO));
    expect(pro.body.data.kits.every((k: any) => k.entitled)).toBe(true);
    expect((await get(s.built.app, '/flow/v1/kits')).status).toBe(401);
  });
});

describe('GET /flow/v1/kits/:slug', () => {
  it('answers the kit with its content: the key’s copy, when it was made, the companions the key lacks', async () => {
    const r = await get(s.built.app, '/flow/v1/kits/orders-reconcile', H(FREE));
    expect(r.status).toBe(200);
    const kit = KITS.find((k) => k.slug === 'orders-reconcile')!;
    expect(r.body.data).toMatchObject({ slug: kit.slug, title: kit.title, version: kit.version, entitlement: 'kit:orders-reconcile', entitled: true });
    // A free data key: no trade:execute (a data key), no stream:realtime (the plan); account:read every key has.
    expect(r.body.data.missing_companion_entitlements).toEqual(['trade:execute', 'stream:realtime']);
    expect(Date.parse(r.body.data.generated_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(r.body.data.markdown).not.toBe(kit.markdown);
    expect(stripWatermark(r.body.data.markdown)).toBe(kit.markdown);
    const exec = await get(s.built.app, '/flow/v1/kits/orders-reconcile', H(PRO2));
    expect(exec.body.data.missing_companion_entitlements).toEqual([]);
  });

  it('403 kit_not_entitled names the entitlement; 404 kit_not_found for a slug no kit has', async () => {
    const refused = await get(s.built.app, '/flow/v1/kits/streaming-resume', H(FREE));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'kit_not_entitled', details: { entitlement: 'kit:streaming-resume' } });
    for (const slug of ['no-such-kit', 'Streaming-Resume', 'streaming_resume', '..%2Fpackage']) {
      const missing = await get(s.built.app, `/flow/v1/kits/${slug}`, H(PRO));
      expect(missing.status, slug).toBe(404);
      expect(missing.body.error.code).toBe('kit_not_found');
    }
    // Unknown before unentitled: a free key asking for a kit that does not exist learns that.
    expect((await get(s.built.app, '/flow/v1/kits/no-such-kit', H(FREE))).body.error.code).toBe('kit_not_found');
    expect((await get(s.built.app, `/flow/v1/kits/${'x'.repeat(65)}`, H(PRO))).status).toBe(400);
  });

  it('two keys get distinguishable copies of the same text; each copy names its key, and only its key', async () => {
    const a = (await get(s.built.app, '/flow/v1/kits/streaming-resume', H(PRO))).body.data.markdown as string;
    const b = (await get(s.built.app, '/flow/v1/kits/streaming-resume', H(PRO2))).body.data.markdown as string;
    expect(a).not.toBe(b);
    expect(stripWatermark(a)).toBe(stripWatermark(b));
    const secret = s.config.kitWatermarkSecret;
    const candidates = [PRO.key_id, PRO2.key_id, FREE.key_id];
    expect(traceCopy(a, secret, candidates).matches.map((m) => [m.identity, m.spaces])).toEqual([[PRO.key_id, true]]);
    expect(traceCopy(b, secret, candidates).matches.map((m) => [m.identity, m.spaces])).toEqual([[PRO2.key_id, true]]);
    expect(traceCopy(a, secret, candidates).matches[0]!.frames).toBeGreaterThanOrEqual(10);
    // Stable per key: the same key gets the same copy every time.
    expect((await get(s.built.app, '/flow/v1/kits/streaming-resume', H(PRO))).body.data.markdown).toBe(a);
    // The fingerprint is the key's, whatever the kit: a copy of another kit names the same key.
    const other = (await get(s.built.app, '/flow/v1/kits/price-history', H(PRO))).body.data.markdown as string;
    expect(traceCopy(other, secret, candidates).matches[0]!.identity).toBe(PRO.key_id);
    // Without the deployment's secret a copy names no one (nobody can frame another key).
    expect(traceCopy(a, 'another secret', candidates).matches).toEqual([]);
    expect(kitFingerprint(secret, PRO.key_id)).not.toBe(kitFingerprint(secret, PRO2.key_id));
  });

  it('a player JWT (no key) gets a copy that names its account', async () => {
    const token = signPlayerJwt('test-jwt-secret', PRO.router_account_id, 600, Date.now());
    const r = await get(s.built.app, '/flow/v1/kits/price-history', { authorization: `Bearer ${token}` });
    expect(r.status).toBe(200);
    expect(traceCopy(r.body.data.markdown, s.config.kitWatermarkSecret, [PRO.key_id, `account:${PRO.router_account_id}`]).matches.map((m) => m.identity)).toEqual([`account:${PRO.router_account_id}`]);
  });

  it('flow kits trace names the key that fetched a copy, from a file, among every key of the deployment', async () => {
    const copy = (await get(s.built.app, '/flow/v1/kits/signals-arbitrage', H(PRO2))).body.data.markdown as string;
    const dir = mkdtempSync(path.join(tmpdir(), 'flow-kit-trace-'));
    // An excerpt: a few paragraphs from the middle, as a leak might be.
    const lines = copy.split('\n');
    const excerpt = lines.slice(Math.floor(lines.length / 3), Math.floor(lines.length / 3) + 12).join('\n');
    writeFileSync(path.join(dir, 'excerpt.md'), excerpt);
    const out: string[] = [];
    try {
      await runKitsCommand(s.rt, ['trace', path.join(dir, 'excerpt.md'), '--json'], (l) => out.push(l));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const traced = JSON.parse(out[0]!);
    expect(traced.matches.map((m: any) => m.identity)).toEqual([PRO2.key_id]);
    expect(traced.matches[0].frames).toBeGreaterThan(0);
  });
});
