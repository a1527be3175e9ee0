/**
 * PostgreSQL LISTEN on a connection of its own (a pool's clients come and go; a listening session
 * must stay). The connection is re-opened whenever it fails; notifications sent while it was down
 * are lost, so onNotify also runs after every (re)connect (without a payload: anything may have
 * happened), and callers keep a poll as the fallback. A notification's payload is passed on.
 */
import pg from 'pg';
import type { Logger } from '../../log.js';

export interface Listening {
  /** Ends the session; no onNotify after this resolves. */
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 2_000;
export const LISTEN_RETRY_MS = 1_000;

export function listen(databaseUrl: string, channel: string, onNotify: (payload?: string) => void, opts: { log?: Pick<Logger, 'warn'>; retryMs?: number } = {}): Listening {
  const retryMs = opts.retryMs ?? LISTEN_RETRY_MS;
  let closed = false;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;

  const retry = (err: unknown) => {
    if (closed || timer) return;
    opts.log?.warn({ err, channel, retry_in_ms: retryMs }, 'the PostgreSQL LISTEN connection failed; reconnecting (polling meanwhile)');
    const dead = client;
    client = null;
    dead?.end().catch(() => undefined);
    timer = setTimeout(() => {
      timer = null;
      void open();
    }, retryMs);
  };

  const open = async () => {
    if (closed) return;
    // keepAlive: a connection that died silently is noticed, not listened on forever.
    const c = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    client = c;
    c.on('error', (err) => client === c && retry(err));
    c.on('end', () => client === c && retry(new Error('connection ended')));
    c.on('notification', (n) => {
      if (n.channel === channel && !closed) onNotify(n.payload || undefined);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      if (client === c) retry(err);
      return;
    }
    if (closed) return void c.end().catch(() => undefined);
    // What was committed while no session listened.
    onNotify();
  };

  void open();
  return {
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}
