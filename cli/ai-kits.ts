/**
 * `flow ai-keys set|remove|list` (an account's own AI provider keys, docs/ai.md) and
 * `flow kits trace <file>` (which key fetched a kit copy, docs/kits.md).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AI_PROVIDERS, type AiProvider } from '../src/domain/ai.js';
import { traceCopy } from '../src/kits.js';
import { AiKeyInputError, linkAiKey, listAiKeys, unlinkAiKey } from '../src/store/pg/ai-keys.js';
import { CommandFailed } from './errors.js';
import { UsageError } from './keys.js';
import type { Runtime } from './runtime.js';

const isProvider = (s: string | undefined): s is AiProvider => (AI_PROVIDERS as readonly string[]).includes(s ?? '');

/** The key from standard input: never an argument, which other users of the machine can read in the process list. */
function readKeyFromStdin(): string {
  let text: string;
  try {
    text = readFileSync(0, 'utf8');
  } catch {
    throw new UsageError('pipe the provider key on standard input, e.g.: flow ai-keys set --account <id> --provider anthropic < key.txt');
  }
  return text.trim();
}

export async function runAiKeysCommand(rt: Runtime, argv: string[], out: (s: string) => void, stdinKey: () => string = readKeyFromStdin): Promise<void> {
  const [sub, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { account: { type: 'string' }, provider: { type: 'string' }, json: { type: 'boolean', default: false } }, strict: true });
  const usage = 'usage: flow ai-keys set|remove --account <router_account_id> --provider anthropic|openai (set reads the key on standard input); flow ai-keys list --account <id> [--json]';
  if (!values.account) throw new UsageError(usage);
  if (sub === 'list') {
    const keys = await listAiKeys(rt.pool, values.account);
    if (values.json) out(JSON.stringify(keys));
    else for (const k of keys) out(`${k.provider}  …${k.key_hint}  linked ${k.linked_at}`);
    return;
  }
  if (!isProvider(values.provider)) throw new UsageError(usage);
  if (sub === 'set') {
    try {
      const linked = await linkAiKey(rt.pool, rt.config.aiKeySecret, { routerAccountId: values.account, provider: values.provider, apiKey: stdinKey() });
      out(values.json ? JSON.stringify(linked) : `linked ${linked.provider} key …${linked.key_hint} to ${values.account}`);
    } catch (err) {
      if (err instanceof AiKeyInputError) throw new CommandFailed(err.message);
      throw err;
    }
    return;
  }
  if (sub === 'remove') {
    const removed = await unlinkAiKey(rt.pool, values.account, values.provider);
    out(values.json ? JSON.stringify({ provider: values.provider, removed }) : removed ? `removed the ${values.provider} key of ${values.account}` : `${values.account} had no ${values.provider} key`);
    return;
  }
  throw new UsageError(usage);
}

/** Every identity a kit copy can be for: each key ever made (revoked ones too: a leak may predate the revocation) and each account (player JWTs). */
async function identities(rt: Runtime): Promise<string[]> {
  const [keys, accounts] = await Promise.all([
    rt.pool.query<{ key_id: string }>('SELECT key_id FROM api_keys'),
    rt.pool.query<{ router_account_id: string }>('SELECT router_account_id FROM accounts'),
  ]);
  return [...keys.rows.map((r) => r.key_id), ...accounts.rows.map((r) => `account:${r.router_account_id}`)];
}

export async function runKitsCommand(rt: Runtime, argv: string[], out: (s: string) => void): Promise<void> {
  const [sub, ...rest] = argv;
  const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
  if (sub !== 'trace' || positionals.length !== 1) throw new UsageError('usage: flow kits trace <file> [--json]   (a copy of a kit, whole or in part)');
  let copy: string;
  try {
    copy = readFileSync(positionals[0]!, 'utf8');
  } catch (err) {
    throw new CommandFailed(`cannot read ${positionals[0]}: ${(err as Error).message}`);
  }
  const { reading, matches } = traceCopy(copy, rt.config.kitWatermarkSecret, await identities(rt));
  if (values.json) {
    out(JSON.stringify({ matches, frames_read: reading.frames.reduce((n, f) => n + f.count, 0), space_bits_read: reading.space_bits.length }));
    return;
  }
  if (matches.length === 0) {
    out(`no key of this deployment matches (${reading.frames.length} fingerprint(s) in zero-width frames, ${reading.space_bits.length} trailing-space bits read)`);
    return;
  }
  for (const m of matches) out(`${m.identity}  frames: ${m.frames}  trailing spaces: ${m.spaces ? 'match' : 'no match'}`);
}
