/**
 * The replay server: recorded Kalshi and Polymarket payloads served on the venues' own paths, on one
 * local port, so the adapters (and the whole service) run on real recorded data:
 *
 *   const server = await startReplayServer({ dir: 'test/venues' });
 *   server.env();   // FLOW_VENUES, FLOW_KALSHI_BASE_URL, FLOW_KALSHI_WS_URL, FLOW_POLYMARKET_*_URL
 *
 * Layout (each venue host under a prefix, its paths unchanged below it):
 *   /kalshi/trade-api/v2/...        Kalshi REST          /kalshi/trade-api/ws/v2     Kalshi WebSocket
 *   /polymarket/gamma/...           Gamma                /polymarket/clob/...        CLOB
 *   /polymarket/ws/market           the market channel
 * What each serves: kalshi.ts and polymarket.ts. Nothing is written; a request the recordings cannot
 * answer is a 404 saying so. Requests are logged in a bounded ring (the last 1000) for tests and
 * the CLI.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KalshiReplay, type BookAssignment } from './kalshi.js';
import { PolymarketReplay, type PmBookAssignment } from './polymarket.js';
import { loadRecordings, type Recordings } from './recordings.js';
import { ServerSocket } from './ws.js';

export const KALSHI_PREFIX = '/kalshi';
export const KALSHI_REST_PATH = '/trade-api/v2';
export const KALSHI_WS_PATH = '/trade-api/ws/v2';
export const POLYMARKET_PREFIX = '/polymarket';

/** Kalshi's heartbeat period (the venue pings every 10 s). */
const HEARTBEAT_MS = 10_000;
/** Request log entries kept. */
const LOG_MAX = 1000;
/** Largest request body read (a POST /books of many token ids is a few hundred KB). */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface ReplayOptions {
  /** A recordings folder (`<dir>/kalshi/`, `<dir>/polymarket/`); or the recordings already read. */
  dir?: string;
  recordings?: Recordings;
  host?: string;
  /** 0: any free port. */
  port?: number;
  /** Replay every subscription's frames again this often (books first); 0 (default): send once and hold. */
  loopMs?: number;
}

export interface ReplayServer {
  readonly url: string;
  readonly port: number;
  readonly kalshi: KalshiReplay | null;
  readonly polymarket: PolymarketReplay | null;
  /** The environment that points the adapters here. */
  env(): Record<string, string>;
  /** What was lent to which market (the books no recording holds for the catalog's own markets). */
  summary(): { kalshi: BookAssignment[]; polymarket: PmBookAssignment[]; files: Record<string, string[]>; ignored: Record<string, string[]> };
  /** The last requests (method and path with query), oldest first. */
  requests(): string[];
  close(): Promise<void>;
}

export async function startReplayServer(opts: ReplayOptions): Promise<ReplayServer> {
  const rec = opts.recordings ?? loadRecordings(opts.dir ?? 'test/venues');
  const kalshi = rec.kalshi ? new KalshiReplay(rec.kalshi, { loopMs: opts.loopMs }) : null;
  const polymarket = rec.polymarket ? new PolymarketReplay(rec.polymarket, { loopMs: opts.loopMs }) : null;
  const log: string[] = [];
  const note = (s: string) => {
    log.push(s);
    if (log.length > LOG_MAX) log.splice(0, log.length - LOG_MAX);
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://replay');
    const method = req.method ?? 'GET';
    note(`${method} ${url.pathname}${url.search}`);
    const reply = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    };
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        reply(413, { error: 'request body too large for the replay' });
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => {
      if (res.headersSent) return;
      const p = url.pathname;
      let body: unknown = null;
      if (chunks.length) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          return reply(400, { error: 'body is not JSON' });
        }
      }
      if (kalshi && p.startsWith(KALSHI_PREFIX + KALSHI_REST_PATH + '/')) {
        if (method !== 'GET') return reply(405, { error: { code: 'method_not_allowed', message: 'the replay serves recorded reads only', service: 'replay' } });
        const a = kalshi.get(p.slice((KALSHI_PREFIX + KALSHI_REST_PATH).length), url.searchParams);
        return reply(a.status, a.body);
      }
      if (polymarket && p.startsWith(`${POLYMARKET_PREFIX}/gamma/`)) {
        if (method !== 'GET') return reply(405, { error: 'the replay serves recorded reads only' });
        const a = polymarket.gamma(p.slice(`${POLYMARKET_PREFIX}/gamma`.length), url.searchParams);
        return reply(a.status, a.body);
      }
      if (polymarket && p.startsWith(`${POLYMARKET_PREFIX}/clob/`)) {
        const a = polymarket.clob(method, p.slice(`${POLYMARKET_PREFIX}/clob`.length), url.searchParams, body);
        return reply(a.status, a.body);
      }
      reply(404, { error: `the replay serves ${[kalshi && `${KALSHI_PREFIX}${KALSHI_REST_PATH}/`, polymarket && `${POLYMARKET_PREFIX}/gamma/ and ${POLYMARKET_PREFIX}/clob/`].filter(Boolean).join(' and ')}; not ${p}` });
    });
  });

  server.on('upgrade', (req, socket: Socket, head: Buffer) => {
    const p = new URL(req.url ?? '/', 'http://replay').pathname;
    note(`WS ${p}`);
    const target = kalshi && p === KALSHI_PREFIX + KALSHI_WS_PATH ? kalshi : polymarket && p === `${POLYMARKET_PREFIX}/ws/market` ? polymarket : null;
    if (!target) return ServerSocket.refuse(socket, 404, `no WebSocket at ${p}`);
    const s = ServerSocket.accept(req, socket, head);
    if (s) target.attach(s);
  });

  const timers: NodeJS.Timeout[] = [];
  const heartbeat = setInterval(() => kalshi?.tick(false), HEARTBEAT_MS);
  heartbeat.unref();
  timers.push(heartbeat);
  if (opts.loopMs && opts.loopMs > 0) {
    const loop = setInterval(() => {
      kalshi?.tick(true);
      polymarket?.tick(true);
    }, opts.loopMs);
    loop.unref();
    timers.push(loop);
  }

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `http://${hostPart}:${port}`;
  const ws = `ws://${hostPart}:${port}`;

  return {
    url,
    port,
    kalshi,
    polymarket,
    env() {
      const venues = [kalshi && 'kalshi', polymarket && 'polymarket'].filter((v): v is string => !!v);
      return {
        FLOW_VENUES: venues.join(','),
        ...(kalshi ? { FLOW_KALSHI_BASE_URL: `${url}${KALSHI_PREFIX}${KALSHI_REST_PATH}`, FLOW_KALSHI_WS_URL: `${ws}${KALSHI_PREFIX}${KALSHI_WS_PATH}` } : {}),
        ...(polymarket
          ? { FLOW_POLYMARKET_GAMMA_URL: `${url}${POLYMARKET_PREFIX}/gamma`, FLOW_POLYMARKET_CLOB_URL: `${url}${POLYMARKET_PREFIX}/clob`, FLOW_POLYMARKET_WS_URL: `${ws}${POLYMARKET_PREFIX}` }
          : {}),
      };
    },
    summary() {
      return {
        kalshi: kalshi?.assignments ?? [],
        polymarket: polymarket?.assignments ?? [],
        files: { ...(rec.kalshi ? { kalshi: rec.kalshi.files } : {}), ...(rec.polymarket ? { polymarket: rec.polymarket.files } : {}) },
        ignored: { ...(rec.kalshi ? { kalshi: rec.kalshi.ignored } : {}), ...(rec.polymarket ? { polymarket: rec.polymarket.ignored } : {}) },
      };
    },
    requests: () => [...log],
    async close() {
      for (const t of timers) clearInterval(t);
      kalshi?.close();
      polymarket?.close();
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeAllConnections();
      await closed;
    },
  };
}
