/**
 * The service's own secrets kept in FLOW_DATA_DIR when their variables are unset: generated once,
 * on first start, and read back by every later start and every CLI command, so `flow jwt` signs with
 * the secret the API verifies with. Files are mode 0600 and refused when others can read them.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, SECRETS, type SecretName, type SecretSource } from './config.js';

export interface KeptSecret {
  value: string;
  /** True when this call generated it (the first start): the caller shows it once. */
  created: boolean;
}

/** 256 random bits, base64url: a secret nobody can guess and any header can carry. */
export const newSecret = (): string => randomBytes(32).toString('base64url');

/**
 * The secret in `file`, generated when the file does not exist yet. Concurrent starters on one data
 * dir agree: each writes its candidate to a private temporary file and hard-links it into place, which
 * succeeds for exactly one of them (link never replaces); the others read the winner's file. A reader
 * never sees a half-written file, because the name only appears once the content is complete.
 */
export function keepSecret(file: string, variable: string): KeptSecret {
  const existing = readSecret(file, variable);
  if (existing !== null) return { value: existing, created: false };
  mkdirSync(path.dirname(file), { recursive: true });
  const value = newSecret();
  const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${value}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(tmp, file);
    return { value, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { value: readSecret(file, variable)!, created: false };
  } finally {
    unlinkSync(tmp);
  }
}

function readSecret(file: string, variable: string): string | null {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    const mode = fstatSync(fd).mode & 0o777;
    if (mode & 0o077) {
      throw new ConfigError(`${file} holds a secret but other users may read it (mode ${mode.toString(8)}); run: chmod 600 ${file}`);
    }
    const value = readFileSync(fd, 'utf8').trim();
    if (value === '') throw new ConfigError(`${file} is empty; delete it to have a new secret generated at the next start, or set ${variable}`);
    return value;
  } finally {
    closeSync(fd);
  }
}

export interface GeneratedSecret {
  name: SecretName;
  file: string;
  value: string;
}

/**
 * The secret source the composition root hands to loadConfig: each secret its variable leaves unset
 * is kept in its file under FLOW_DATA_DIR. `generated` lists those this process created, to announce.
 */
export function dataDirSecrets(): { source: SecretSource; generated: GeneratedSecret[] } {
  const generated: GeneratedSecret[] = [];
  const source: SecretSource = (name, file) => {
    const kept = keepSecret(file, SECRETS[name].variable);
    if (kept.created) generated.push({ name, file, value: kept.value });
    return kept.value;
  };
  return { source, generated };
}
