import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { dataDirSecrets, keepSecret } from '../../src/secrets.js';
import { ROOT } from '../support/cli.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'flow-secrets-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('secrets kept in FLOW_DATA_DIR', () => {
  it('generates each unset secret once, mode 0600, and reads the same back on the next start', () => {
    const dir = path.join(tmp(), 'data');
    const first = dataDirSecrets();
    const c1 = loadConfig({ FLOW_DATA_DIR: dir }, first.source);
    expect(first.generated.map((g) => g.name).sort()).toEqual(['adminToken', 'aiKeySecret', 'cursorSecret', 'jwtSecret', 'kitWatermarkSecret']);
    for (const f of ['admin-token', 'jwt-secret', 'cursor-secret', 'kit-watermark-secret', 'ai-key-secret']) {
      expect(statSync(path.join(dir, f)).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(path.join(dir, 'admin-token'), 'utf8').trim()).toBe(c1.adminToken);
    expect(new Set([c1.adminToken, c1.jwtSecret, c1.cursorSecret]).size).toBe(3);
    const second = dataDirSecrets();
    const c2 = loadConfig({ FLOW_DATA_DIR: dir }, second.source);
    expect(second.generated).toEqual([]);
    expect([c2.adminToken, c2.jwtSecret, c2.cursorSecret]).toEqual([c1.adminToken, c1.jwtSecret, c1.cursorSecret]);
    expect(readdirSync(dir).sort()).toEqual(['admin-token', 'ai-key-secret', 'cursor-secret', 'jwt-secret', 'kit-watermark-secret']);
  });

  it('a variable that is set wins and writes no file', () => {
    const dir = tmp();
    const s = dataDirSecrets();
    const c = loadConfig({ FLOW_DATA_DIR: dir, FLOW_JWT_SECRET: 'chosen' }, s.source);
    expect(c.jwtSecret).toBe('chosen');
    expect(readdirSync(dir).sort()).toEqual(['admin-token', 'ai-key-secret', 'cursor-secret', 'kit-watermark-secret']);
  });

  it('refuses a secret file others can read, and an empty one, saying what to do', () => {
    const dir = tmp();
    const file = path.join(dir, 'jwt-secret');
    writeFileSync(file, 'abc\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    expect(() => keepSecret(file, 'FLOW_JWT_SECRET')).toThrow(/chmod 600/);
    chmodSync(file, 0o600);
    expect(keepSecret(file, 'FLOW_JWT_SECRET')).toEqual({ value: 'abc', created: false });
    writeFileSync(file, '');
    expect(() => keepSecret(file, 'FLOW_JWT_SECRET')).toThrow(/empty.*FLOW_JWT_SECRET/);
  });

  it('concurrent starters on one data dir agree on one secret', async () => {
    const dir = tmp();
    const file = path.join(dir, 'admin-token');
    const script = `import { keepSecret } from ${JSON.stringify(path.join(ROOT, 'src/secrets.ts'))};
process.stdin.once('data', () => { const k = keepSecret(${JSON.stringify(file)}, 'FLOW_ADMIN_TOKEN'); process.stdout.write(JSON.stringify(k)); });
process.stdout.write('ready\\n');`;
    // Every child loads first and waits; then all are released at once, so the creations overlap.
    const children = Array.from({ length: 8 }, () => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT }));
    const ready: Promise<void>[] = [];
    const outputs = children.map(
      (c) =>
        new Promise<{ value: string; created: boolean }>((resolve, reject) => {
          let out = '';
          let err = '';
          ready.push(new Promise((r) => c.stdout.once('data', () => r())));
          c.stdout.on('data', (d) => (out += d));
          c.stderr.on('data', (d) => (err += d));
          c.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.slice(out.indexOf('\n') + 1))) : reject(new Error(err))));
        }),
    );
    await Promise.all(ready);
    for (const c of children) c.stdin.end('go\n');
    const results = await Promise.all(outputs);
    expect(new Set(results.map((r) => r.value)).size).toBe(1);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(readFileSync(file, 'utf8').trim()).toBe(results[0]!.value);
    expect(readdirSync(dir)).toEqual(['admin-token']);
  }, 30_000);
});
