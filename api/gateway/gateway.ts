/**
 * The stream gateway: a uWebSockets.js server on STREAM_PORT at /flow/v1/stream (spec "WebSocket
 * stream"). Each process tails the durable event log (src/store/redis/eventlog.ts) on a dedicated
 * Redis connection and fans events out to its own clients, so gateways scale out by running more of
 * them; nothing but the per-key connection slots is shared between them. Every channel's events come
 * from the log, orders and balance included (routed by account); only key revocations arrive on
 * the pub/sub bus. See docs/stream.md for the behaviour in user terms.
 *
 * Hot path: liquidity and contest_state events are identical for every subscriber, so they go
 * through uWS topics (one native publish per topic, no JS per subscriber). Channels whose payload
 * differs per connection (ticks: seq; trades, arbitrage, signal: filters) visit the subscribers of
 * the event's contest, computing each distinct filtered payload once.
 *
 * Resume (subscribe with resume_from): the contest is kept out of live delivery for that connection
 * while the log is replayed to it, then attached (see ./resume.ts for why that gives no gap and no
 * duplicate). orders and balance have no resume (the spec: clients fetch that state over REST).
 */
import { randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Registry } from 'prom-client';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { PrincipalRecord } from '../../src/domain/principal.js';
import { missingEntitlements } from '../../src/domain/plans.js';
import { ACCOUNT_CHANNELS, STREAM_CHANNELS, type BusMessage, type StreamChannel } from '../../src/domain/stream.js';
import { isWellFormedApiKey } from '../../src/domain/api-key.js';
import { sha256Hex } from '../../src/ids.js';
import type { Logger } from '../../src/log.js';
import type { Pool } from '../../src/store/pg/pool.js';
import { loadPrincipalRecord, lookupPrincipalRecord } from '../../src/store/principals.js';
import { subscribeBus } from '../../src/store/redis/bus.js';
import type { Keyspace, Redis } from '../../src/store/redis/client.js';
import { compareStreamIds, EventLogReader, REPLAY_PAGE, type AccountLogEvent, type LogEvent } from '../../src/store/redis/eventlog.js';
import type { RequestGate } from '../../src/store/redis/gate.js';
import { AccountDirectory } from './accounts.js';
import {
  CHANNEL_RULES,
  contestTopic,
  everyContestTopic,
  OTHER_ACCOUNTS_ENTITLEMENT,
  parseClientMessage,
  type ProtocolError,
  type Subscription,
} from './channels.js';
import { BusEvent, DEFAULT_FILTERS, PASS_THROUGH, type ChannelFilter } from './filters.js';
import { gatewayMetrics, type GatewayMetrics } from './metrics.js';
import { ContestReplay, spliceMembers } from './resume.js';
import { ConnectionSlots } from './slots.js';
import { uws, type HttpResponse, type TemplatedApp, type us_listen_socket, type WebSocket } from './uws.js';

export const STREAM_PATH = '/flow/v1/stream';

/** Close code for a revoked or expired key (spec): do not reconnect with the same key. */
export const CLOSE_KEY_INVALID = 4001;

export interface GatewayTuning {
  /** Server ping interval; a client that has not ponged by the next ping is terminated. Spec: 25 s. */
  pingIntervalMs: number;
  /** How often every connected key is re-read from PostgreSQL (revocation is also pushed on the bus). */
  keyCheckIntervalMs: number;
  /** Per-connection send buffer bound (bytes); beyond it events are dropped for that connection. */
  maxBackpressureBytes: number;
  /** How often this process re-scores its connection slots in Redis. */
  slotHeartbeatMs: number;
  /** A slot not re-scored for this long is free (a gateway that died releases its keys' slots). */
  slotTtlMs: number;
}

export const DEFAULT_TUNING: GatewayTuning = {
  pingIntervalMs: 25_000,
  keyCheckIntervalMs: 60_000,
  maxBackpressureBytes: 1024 * 1024,
  slotHeartbeatMs: 15_000,
  slotTtlMs: 60_000,
};

export interface GatewayDeps {
  config: Config;
  log: Logger;
  pool: Pool;
  redis: Redis;
  ks: Keyspace;
  gate: RequestGate;
  clock: Clock;
  metrics: Registry;
  /**
   * A new Redis connection. The gateway opens two (the bus subscription, and the event-log tail,
   * whose blocking reads hold their connection), owns them and closes them on stop.
   */
  createSubscriber: () => Redis;
  /** Replay reads (default: the event log through `redis`); tests put a controllable one here. */
  replayReader?: Pick<EventLogReader, 'eventsAfter'>;
  tuning?: Partial<GatewayTuning>;
  /** Per-channel event filters replacing the defaults (topic channels, liquidity and contest_state, are never filtered). */
  filters?: Partial<Record<StreamChannel, ChannelFilter>>;
}

export interface Gateway {
  /** The bound port (the real one when config.streamPort is 0). */
  port: number;
  /** Stops accepting, closes every client with 1001, ends the log tail and the bus subscription, frees the slots. */
  stop(): Promise<void>;
}

interface Conn {
  id: string;
  keyHash: string;
  record: PrincipalRecord;
  held: Set<string>;
  ws: WebSocket<UserData> | null;
  open: boolean;
  subs: Map<StreamChannel, Subscription>;
  /** The account_ids a caller named for a private channel (echoed back on subscribed). */
  namedAccounts: Map<StreamChannel, string[]>;
  /** ticks events routed to this connection so far (the spec's per-connection seq). */
  seq: number;
  awaitingPong: boolean;
  pingPending: boolean;
  /** Which of the ping round's slices pings this connection (see pingSlices). */
  pingSlice: number;
  /** Messages dropped since the last backpressure notice. */
  dropped: number;
  inbox: Promise<void>;
  /** Subscriptions being resumed, by channel. */
  resumes: Map<StreamChannel, Resume>;
  /** Replays waiting for the send buffer to drain. */
  drainWaiters: (() => void)[];
}

/** One subscription's resume: the contests still being replayed (they are not in live delivery yet). */
interface Resume {
  conn: Conn;
  sub: Subscription;
  contests: Map<string, ContestReplay>;
  /** Cancelled (re-subscribe, unsubscribe, close) or finished: in-flight reads are ignored. */
  over: boolean;
}

interface UserData {
  conn: Conn;
}

type Refusal = { ok: false; status: string; code: string; message: string; details?: Record<string, unknown> };
type Admission = { ok: true; conn: Conn } | Refusal;

interface DirectIndex {
  byContest: Map<string, Set<Conn>>;
  every: Set<Conn>;
}
interface PrivateIndex {
  byAccount: Map<string, Set<Conn>>;
  all: Set<Conn>;
}

const RECENTLY_REVOKED_MS = 5 * 60_000;

function addTo<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(v);
}
function removeFrom<K, V>(m: Map<K, Set<V>>, k: K, v: V): void {
  const s = m.get(k);
  if (s && s.delete(v) && s.size === 0) m.delete(k);
}

/** How long one blocking read of the event feed waits (stop() also disconnects, so this only bounds a stuck read). */
const FEED_BLOCK_MS = 500;
/** Pause after a failed feed read before reading on from the same position. */
const FEED_RETRY_MS = 200;
/** At stop, how long clients get to answer the close frame before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;
/** Contests whose last live event id is remembered (an evicted one only delays a resume's attach). */
const LAST_LIVE_MAX = 100_000;

const eventIdMember = (id: string) => `"event_id":"${id}"`;

/** A log event as the filters see it (they were written for bus messages, which carry the same fields). */
const asBusMessage = (e: LogEvent): BusMessage => ({ channel: e.channel, contest_id: e.contest_id, league_id: e.league_id, account_id: null, event: e.event });

const TYPE_TO_CHANNEL: Record<string, string> = {
  'liquidity.update': 'liquidity',
  ticks: 'ticks',
  trades: 'trades',
  'arbitrage.update': 'arbitrage',
  'signal.update': 'signal',
  'contest_state.update': 'contest_state',
  'order.update': 'orders',
  'order.settled': 'orders',
  'balance.update': 'balance',
};

/** The channel label of a payload uWS dropped (control messages: pong, subscribed, errors). */
function channelOfPayload(ab: ArrayBuffer): string {
  const head = Buffer.from(ab, 0, Math.min(ab.byteLength, 64)).toString('latin1');
  const m = /"type":"([a-z_.]+)"/.exec(head);
  return (m && TYPE_TO_CHANNEL[m[1]!]) || 'control';
}

class StreamGateway {
  private readonly tuning: GatewayTuning;
  private readonly log: Logger;
  private readonly m: GatewayMetrics;
  private readonly slots: ConnectionSlots;
  private readonly accounts: AccountDirectory;
  private readonly filters: Record<StreamChannel, ChannelFilter>;
  private readonly app: TemplatedApp;
  private listenSocket: us_listen_socket | null = null;
  private subscriber: Redis | null = null;
  private unsubscribeBus: (() => Promise<void>) | null = null;
  private feedConn: Redis | null = null;
  private tail: Promise<void> = Promise.resolve();
  private readonly replayReader: Pick<EventLogReader, 'eventsAfter'>;
  /** Per contest, the id of the newest event this gateway delivered live. */
  private readonly lastLive = new LRUCache<string, string>({ max: LAST_LIVE_MAX });
  private readonly resumesByContest = new Map<string, Set<Resume>>();
  /** Resumes of subscriptions to every contest: until they finish, this path delivers the channel to them. */
  private readonly resumesEvery = new Map<StreamChannel, Set<Resume>>();
  private readonly replays = new Set<Promise<void>>();
  private readonly conns = new Set<Conn>();
  /**
   * Connections split into slices pinged in turn, one slice per pingIntervalMs / slices: pinging a
   * thousand connections in one go held the event loop ~13 ms (bench stream-latency), a stall every
   * change in flight then waited out.
   */
  private readonly pingSlices: Set<Conn>[];
  private nextPingSlice = 0;
  private pingRound = 0;
  private readonly byKey = new Map<string, Set<Conn>>();
  private readonly direct = new Map<StreamChannel, DirectIndex>();
  private readonly priv = new Map<StreamChannel, PrivateIndex>();
  private readonly recentlyRevoked = new Map<string, number>();
  private readonly pendingReleases = new Set<Promise<void>>();
  /** Upgrade requests waiting for their key check (see completeUpgrade). */
  private readonly pendingUpgrades = new Set<HttpResponse>();
  private privateChain: Promise<void> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private checkingKeys = false;
  private stopping = false;

  constructor(private readonly deps: GatewayDeps) {
    this.tuning = { ...DEFAULT_TUNING, ...deps.tuning };
    // Slices at least 200 ms apart (25 at the spec's 25 s; tests with short intervals use fewer).
    this.pingSlices = Array.from({ length: Math.max(1, Math.min(25, Math.floor(this.tuning.pingIntervalMs / 200))) }, () => new Set<Conn>());
    this.log = deps.log.child({ component: 'gateway' });
    this.m = gatewayMetrics(deps.metrics);
    this.slots = new ConnectionSlots(deps.redis, deps.ks, this.tuning.slotTtlMs);
    this.accounts = new AccountDirectory(deps.pool);
    this.filters = { ...DEFAULT_FILTERS, ...deps.filters };
    this.replayReader = deps.replayReader ?? new EventLogReader(deps.redis, deps.ks);
    for (const ch of STREAM_CHANNELS) {
      const d = CHANNEL_RULES[ch].delivery;
      if (d === 'direct') this.direct.set(ch, { byContest: new Map(), every: new Set() });
      if (d === 'private') this.priv.set(ch, { byAccount: new Map(), all: new Set() });
    }
    this.app = this.buildApp();
  }

  async start(): Promise<Gateway> {
    // Subscribe and take the feed's head before listening: a client that is told `subscribed` must
    // not miss what follows.
    this.subscriber = this.deps.createSubscriber();
    this.unsubscribeBus = await subscribeBus(this.subscriber, this.deps.ks, ['keys-revoked'], (_ch, raw) => {
      try {
        this.onKeyRevoked(raw);
      } catch (err) {
        this.log.error({ err }, 'could not apply a key revocation from the bus');
      }
    });
    this.feedConn = this.deps.createSubscriber();
    const feed = new EventLogReader(this.feedConn, this.deps.ks);
    try {
      const head = await feed.feedHead();
      this.tail = this.tailFeed(feed, head);
    } catch (err) {
      this.stopping = true;
      await this.closeSubscriber();
      throw err;
    }
    const { host, streamPort } = this.deps.config;
    const ls = await new Promise<us_listen_socket | false>((resolve) => this.app.listen(host, streamPort, resolve));
    if (!ls) {
      this.stopping = true;
      await this.closeSubscriber();
      throw new Error(`stream gateway could not listen on ${host}:${streamPort}`);
    }
    this.listenSocket = ls;
    const port = uws.us_socket_local_port(ls as never);
    const every = (ms: number, fn: () => void) => this.timers.push(setInterval(fn, ms));
    every(this.tuning.pingIntervalMs / this.pingSlices.length, () => this.pingTick());
    every(this.tuning.keyCheckIntervalMs, () => void this.checkKeys());
    every(this.tuning.slotHeartbeatMs, () => this.slotHeartbeat());
    this.log.info({ role: 'gateway', url: `ws://${host}:${port}${STREAM_PATH}` }, 'stream gateway listening');
    return { port, stop: () => this.stop() };
  }

  // ---- HTTP / WebSocket wiring -------------------------------------------------------------

  private buildApp(): TemplatedApp {
    const t = this.tuning;
    return uws
      .App()
      .ws<UserData>(STREAM_PATH, {
        compression: uws.DISABLED,
        maxPayloadLength: 64 * 1024,
        maxBackpressure: t.maxBackpressureBytes,
        closeOnBackpressureLimit: false,
        // Liveness is our own ping timer (spec: ping every 25 s, terminate without a pong by the next).
        idleTimeout: 0,
        sendPingsAutomatically: false,
        upgrade: (res, req, context) => {
          const apiKey = req.getQuery('api_key') || req.getHeader('x-api-key');
          const secKey = req.getHeader('sec-websocket-key');
          const secProtocol = req.getHeader('sec-websocket-protocol');
          const secExtensions = req.getHeader('sec-websocket-extensions');
          let aborted = false;
          res.onAborted(() => {
            aborted = true;
            this.pendingUpgrades.delete(res);
          });
          this.pendingUpgrades.add(res);
          void this.admit(apiKey).then((a) => {
            this.pendingUpgrades.delete(res);
            if (aborted) {
              if (a.ok) this.releaseSlot(a.conn);
              return;
            }
            if (a.ok) this.completeUpgrade(res, () => res.upgrade<UserData>({ conn: a.conn }, secKey, secProtocol, secExtensions, context));
            else res.cork(() => this.refuse(res, a));
          });
        },
        open: (ws) => this.onOpen(ws),
        message: (ws, data) => {
          const conn = ws.getUserData().conn;
          const text = Buffer.from(data).toString('utf8'); // copy now: uWS neuters the buffer on return
          conn.inbox = conn.inbox.then(() => this.onMessage(conn, text)).catch((err) => this.log.error({ err }, 'stream message handler failed'));
        },
        pong: (ws) => {
          ws.getUserData().conn.awaitingPong = false;
        },
        drain: (ws) => {
          const conn = ws.getUserData().conn;
          if (conn.pingPending && ws.getBufferedAmount() < t.maxBackpressureBytes) {
            conn.pingPending = false;
            ws.ping();
          }
          this.maybeNotifyDrops(conn);
          if (conn.drainWaiters.length && ws.getBufferedAmount() < t.maxBackpressureBytes / 2) this.wakeReplays(conn);
        },
        dropped: (ws, message) => {
          if (message.byteLength === 0) return; // a ping; handled by pingPending
          const conn = ws.getUserData().conn;
          conn.dropped++;
          this.m.dropped.inc({ channel: channelOfPayload(message) });
        },
        close: (ws, code, message) => this.onClose(ws.getUserData().conn, code, Buffer.from(message).toString('utf8')),
      })
      .get('/healthz', (res) => {
        res.writeHeader('content-type', 'application/json').end('{"status":"ok"}');
      })
      // A gateway-only process has no API listener: expose its metrics here too.
      .get('/metrics', (res) => {
        let aborted = false;
        res.onAborted(() => {
          aborted = true;
        });
        void this.deps.metrics.metrics().then(
          (text) => {
            if (!aborted) res.cork(() => res.writeHeader('content-type', this.deps.metrics.contentType).end(text));
          },
          () => {
            if (!aborted) res.cork(() => res.writeStatus('500 Internal Server Error').end());
          },
        );
      })
      .get(STREAM_PATH, (res) => {
        res.writeStatus('426 Upgrade Required').writeHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: { code: 'upgrade_required', message: `open a WebSocket to ${STREAM_PATH}?api_key=<API_KEY>` } }));
      })
      .any('/*', (res) => {
        res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json');
        res.end(JSON.stringify({ error: { code: 'not_found', message: `the stream is at ${STREAM_PATH}` } }));
      });
  }

  private refuse(res: HttpResponse, r: Refusal): void {
    res.writeStatus(r.status).writeHeader('content-type', 'application/json');
    res.end(JSON.stringify({ error: { code: r.code, message: r.message, ...(r.details ? { details: r.details } : {}) } }), true);
  }

  /**
   * Finishes an asynchronous upgrade without uWS 20.51's HttpResponse.cork() post-processing, which
   * re-reads the just-upgraded socket as an HTTP response and, depending on stale memory, shuts it
   * down right after the 101 (uNetworking/uWebSockets#1928, fixed upstream after the last release
   * that supports Node 20; reproduced here on a share of connections). Inside another socket's
   * cork, res.cork() just runs the callback: the upgrade is written uncorked and no close check
   * runs. With no other socket to borrow, upgrade uncorked (uWS then prints a cork warning; the
   * connection is sound).
   */
  private completeUpgrade(res: HttpResponse, upgrade: () => void): void {
    for (const c of this.conns) {
      if (c.ws) {
        c.ws.cork(() => res.cork(upgrade));
        return;
      }
    }
    for (const other of this.pendingUpgrades) {
      other.cork(() => res.cork(upgrade));
      return;
    }
    upgrade();
  }

  /** Key check and connection slot, before the 101: refusals are HTTP statuses, not in-band messages. */
  private async admit(apiKey: string): Promise<Admission> {
    const refuse = (status: string, code: string, message: string, details?: Record<string, unknown>): Refusal => ({ ok: false, status, code, message, details });
    if (this.stopping) {
      this.m.upgrades.inc({ result: 'error' });
      return refuse('503 Service Unavailable', 'unavailable', 'this gateway is shutting down; reconnect');
    }
    if (!apiKey) {
      this.m.upgrades.inc({ result: 'unauthorized' });
      return refuse('401 Unauthorized', 'unauthorized', 'missing API key: pass ?api_key=<API_KEY> or the X-API-Key header');
    }
    if (!isWellFormedApiKey(apiKey)) {
      this.m.upgrades.inc({ result: 'unauthorized' });
      return refuse('401 Unauthorized', 'unauthorized', 'unknown API key: check that it was copied whole');
    }
    try {
      const keyHash = sha256Hex(apiKey);
      const rec = await lookupPrincipalRecord(this.deps.gate, this.deps.pool, { kind: 'key', id: keyHash });
      if (('invalid' in rec && rec.invalid) || !('key_id' in rec) || !rec.key_id) {
        this.m.upgrades.inc({ result: 'unauthorized' });
        const revoked = 'invalid' in rec && rec.invalid === 'revoked';
        return refuse('401 Unauthorized', 'unauthorized', revoked ? 'this API key was revoked' : 'unknown API key');
      }
      const conn: Conn = {
        id: `wsc_${randomBytes(9).toString('base64url')}`,
        keyHash,
        record: rec,
        held: new Set(rec.entitlements),
        ws: null,
        open: false,
        subs: new Map(),
        namedAccounts: new Map(),
        seq: 0,
        awaitingPong: false,
        pingPending: false,
        pingSlice: this.nextPingSlice++ % this.pingSlices.length,
        dropped: 0,
        inbox: Promise.resolve(),
        resumes: new Map(),
        drainWaiters: [],
      };
      const max = this.deps.config.streamMaxConnectionsPerKey;
      const slot = await this.slots.acquire(rec.key_id, conn.id, max, this.deps.clock.now());
      if (!slot.ok) {
        this.m.upgrades.inc({ result: 'limit' });
        return refuse('429 Too Many Requests', 'connection_limit_exceeded', `this key already has ${slot.open} open stream connection(s); at most ${max} per key`, {
          max_connections: max,
        });
      }
      return { ok: true, conn };
    } catch (err) {
      this.log.error({ err }, 'stream upgrade failed');
      this.m.upgrades.inc({ result: 'error' });
      return refuse('503 Service Unavailable', 'unavailable', 'the stream cannot check keys right now; retry shortly');
    }
  }

  private onOpen(ws: WebSocket<UserData>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    conn.open = true;
    this.conns.add(conn);
    this.pingSlices[conn.pingSlice]!.add(conn);
    addTo(this.byKey, conn.keyHash, conn);
    this.m.upgrades.inc({ result: 'accepted' });
    this.m.connections.inc();
    // First write after the upgrade call has fully returned (see completeUpgrade): a send from
    // inside `open` is what makes the uWS cork bug most likely when a corked upgrade path is taken.
    queueMicrotask(() => this.greet(conn));
  }

  private greet(conn: Conn): void {
    const ws = conn.ws;
    if (!conn.open || !ws) return;
    if (this.stopping) return ws.end(1001, 'server shutting down');
    // A revocation that arrived between the key check and the open.
    const revokedUntil = this.recentlyRevoked.get(conn.keyHash);
    if (revokedUntil !== undefined && revokedUntil > this.deps.clock.now()) return this.invalidate(conn, 'revoked');
    this.sendJson(conn, {
      type: 'connected',
      organization_id: conn.record.workspace_id,
      api_key_id: conn.record.key_id,
      server_time: this.now(),
    });
  }

  private onClose(conn: Conn, code: number, reason: string): void {
    if (!conn.open) return;
    this.log.debug({ conn: conn.id, key_id: conn.record.key_id, code, reason }, 'stream connection closed');
    conn.open = false;
    this.conns.delete(conn);
    this.pingSlices[conn.pingSlice]!.delete(conn);
    removeFrom(this.byKey, conn.keyHash, conn);
    for (const sub of conn.subs.values()) this.unindex(conn, sub);
    for (const ch of [...conn.resumes.keys()]) this.cancelResume(conn, ch);
    this.wakeReplays(conn);
    conn.subs.clear();
    conn.ws = null;
    this.m.connections.dec();
    this.releaseSlot(conn);
  }

  private releaseSlot(conn: Conn): void {
    const p = this.slots
      .release(conn.record.key_id!, conn.id)
      .catch((err) => this.log.warn({ err }, 'could not release a stream connection slot; it expires by itself'))
      .finally(() => this.pendingReleases.delete(p));
    this.pendingReleases.add(p);
  }

  // ---- client messages ------------------------------------------------------------------------

  private async onMessage(conn: Conn, text: string): Promise<void> {
    if (!conn.open) return;
    const p = parseClientMessage(text, conn.held);
    if (!p.ok) return this.sendError(conn, p.error);
    const msg = p.msg;
    if (msg.action === 'ping') return this.sendJson(conn, { type: 'pong', server_time: this.now() });

    if (msg.action === 'unsubscribe') {
      const cur = conn.subs.get(msg.channel);
      if (cur && msg.contestIds) {
        if (!cur.contestIds) {
          return this.sendError(conn, {
            code: 'invalid_message',
            channel: msg.channel,
            message: `the ${msg.channel} subscription covers every contest; unsubscribe without contest_ids, or subscribe again with the contests you want`,
          });
        }
        const drop = new Set(msg.contestIds);
        const remaining = cur.contestIds.filter((c) => !drop.has(c));
        this.unindex(conn, cur);
        if (remaining.length) {
          const next = { ...cur, contestIds: remaining };
          conn.subs.set(msg.channel, next);
          this.narrowResume(conn, next, drop);
          this.index(conn, next);
        } else {
          conn.subs.delete(msg.channel);
          this.cancelResume(conn, msg.channel);
        }
        return this.sendJson(conn, { type: 'unsubscribed', channel: msg.channel, contest_ids: msg.contestIds, remaining_contest_ids: remaining });
      }
      if (cur) {
        this.unindex(conn, cur);
        conn.subs.delete(msg.channel);
        conn.namedAccounts.delete(msg.channel);
      }
      this.cancelResume(conn, msg.channel);
      return this.sendJson(conn, { type: 'unsubscribed', channel: msg.channel });
    }

    let sub = msg.sub;
    let named: string[] | null = null;
    if (sub.accounts?.kind === 'ids') {
      named = sub.accounts.ids;
      const { accounts, foreign } = await this.accounts.resolve(conn.record.workspace_id, conn.record.environment, named);
      if (!conn.open) return;
      if (foreign.length) {
        return this.sendError(conn, {
          code: 'account_forbidden',
          channel: sub.channel,
          message: `account_ids names accounts this organization does not own: ${foreign.join(', ')}`,
        });
      }
      sub = { ...sub, accounts: { kind: 'ids', ids: accounts } };
    }
    // Re-subscribing replaces the channel's filter list (spec), atomically: no event runs in between.
    // A resume registers before indexing, so its contests stay out of live delivery from this instant.
    const prev = conn.subs.get(sub.channel);
    if (prev) this.unindex(conn, prev);
    this.cancelResume(conn, sub.channel);
    conn.subs.set(sub.channel, sub);
    if (named) conn.namedAccounts.set(sub.channel, named);
    else conn.namedAccounts.delete(sub.channel);
    const resume = msg.resumeFrom ? this.beginResume(conn, sub, msg.resumeFrom) : null;
    this.index(conn, sub);
    const reply: Record<string, unknown> = { type: 'subscribed', channel: sub.channel, contest_ids: sub.contestIds };
    if (sub.leagueIds) reply.league_ids = sub.leagueIds;
    if (sub.accounts?.kind === 'all') reply.all = true;
    if (named) reply.account_ids = named;
    this.sendJson(conn, reply);
    if (resume) for (const [contestId, replay] of resume.contests) this.track(this.replay(resume, contestId, replay));
  }

  /** Adds the subscription to live delivery, except the contests its resume still replays (and all of an every-contest one until then). */
  private index(conn: Conn, sub: Subscription): void {
    const rule = CHANNEL_RULES[sub.channel];
    const replaying = conn.resumes.get(sub.channel)?.contests;
    if (rule.delivery !== 'private') {
      if (sub.contestIds) {
        for (const c of sub.contestIds) if (!replaying?.has(c)) this.indexContest(conn, sub.channel, c);
      } else if (!replaying) {
        if (rule.delivery === 'topic') conn.ws!.subscribe(everyContestTopic(sub.channel));
        else this.direct.get(sub.channel)!.every.add(conn);
      }
    } else {
      const ix = this.priv.get(sub.channel)!;
      const a = sub.accounts ?? { kind: 'own' };
      if (a.kind === 'all') ix.all.add(conn);
      else for (const id of a.kind === 'ids' ? a.ids : [conn.record.router_account_id]) addTo(ix.byAccount, id, conn);
    }
  }

  private indexContest(conn: Conn, channel: StreamChannel, contestId: string): void {
    if (CHANNEL_RULES[channel].delivery === 'topic') conn.ws!.subscribe(contestTopic(channel, contestId));
    else addTo(this.direct.get(channel)!.byContest, contestId, conn);
  }

  /** Removes the subscription from live delivery; removing what a resume had not added yet is a no-op. */
  private unindex(conn: Conn, sub: Subscription): void {
    const rule = CHANNEL_RULES[sub.channel];
    if (rule.delivery === 'topic') {
      // On close uWS drops the socket's topics itself (and the socket may no longer be used).
      if (!conn.open || !conn.ws) return;
      const ws = conn.ws;
      if (sub.contestIds) for (const c of sub.contestIds) ws.unsubscribe(contestTopic(sub.channel, c));
      else ws.unsubscribe(everyContestTopic(sub.channel));
    } else if (rule.delivery === 'direct') {
      const ix = this.direct.get(sub.channel)!;
      if (sub.contestIds) for (const c of sub.contestIds) removeFrom(ix.byContest, c, conn);
      else ix.every.delete(conn);
    } else {
      const ix = this.priv.get(sub.channel)!;
      const a = sub.accounts ?? { kind: 'own' };
      if (a.kind === 'all') ix.all.delete(conn);
      else for (const id of a.kind === 'ids' ? a.ids : [conn.record.router_account_id]) removeFrom(ix.byAccount, id, conn);
    }
  }

  // ---- event log → clients --------------------------------------------------------------------

  /**
   * Tails the feed from `from` until stop(): blocking reads, events delivered in log order. A failed
   * read (Redis away, a timeout) is retried from the same position, so nothing is skipped.
   */
  private async tailFeed(feed: EventLogReader, from: string): Promise<void> {
    let after = from;
    while (!this.stopping) {
      try {
        const batch = await feed.readFeed(after, FEED_BLOCK_MS);
        // Behind by a whole read: the feed may have been trimmed past this position.
        if (batch.full && after !== '0-0' && !(await feed.feedHolds(after))) this.accountEventsMissed();
        after = batch.feedId;
        for (const ev of batch.events) this.onLogEvent(ev);
        for (const ev of batch.accountEvents) this.onAccountEvent(ev);
      } catch (err) {
        if (this.stopping) return;
        this.log.warn({ err, after }, 'reading the event feed failed; reading on from the same position');
        await new Promise((r) => setTimeout(r, FEED_RETRY_MS));
      }
    }
  }

  private onLogEvent(ev: LogEvent): void {
    try {
      this.m.busMessages.inc({ channel: ev.channel });
      const seen = this.lastLive.get(ev.contest_id);
      if (seen !== undefined && ev.prev && compareStreamIds(ev.prev, seen) > 0) this.eventsMissed(ev.contest_id, seen);
      this.lastLive.set(ev.contest_id, ev.id);
      const delivery = CHANNEL_RULES[ev.channel].delivery;
      if (delivery === 'topic') this.publishTopic(ev);
      else if (delivery === 'direct') this.deliverDirect(ev);
      else return; // account events come as AccountLogEvents (onAccountEvent)
      this.resumeOnLive(ev);
    } catch (err) {
      this.log.error({ err, channel: ev.channel, event_id: ev.id }, 'could not deliver a log event');
    }
  }

  /**
   * The feed was trimmed past this gateway's position (it fell more than the feed's cap behind):
   * some of the contest's events never reached its subscribers. The contest's log still holds
   * them, so every subscriber of the contest is told to resume from its own last event_id.
   */
  private eventsMissed(contestId: string, lastDelivered: string): void {
    this.m.feedGaps.inc();
    this.log.warn({ contest_id: contestId, last_delivered: lastDelivered }, 'the event feed was trimmed past this gateway; subscribers told to resume');
    for (const channel of STREAM_CHANNELS) {
      const e: ProtocolError = {
        code: 'events_missed',
        channel,
        message: `events of contest ${contestId} after event ${lastDelivered} did not reach this connection; subscribe again with resume_from {"${contestId}": <your last event_id>}`,
      };
      const payload = JSON.stringify({ type: 'error', ...e, contest_id: contestId });
      const delivery = CHANNEL_RULES[channel].delivery;
      if (delivery === 'private') continue; // no contest (accountEventsMissed)
      if (delivery === 'topic') {
        this.app.publish(contestTopic(channel, contestId), payload, false);
        this.app.publish(everyContestTopic(channel), payload, false);
      } else if (delivery === 'direct') {
        const ix = this.direct.get(channel)!;
        for (const set of [ix.byContest.get(contestId), ix.every]) for (const conn of set ?? []) if (conn.subs.has(channel)) this.sendRaw(conn, payload);
      }
    }
  }

  /** An orders or balance event: to the account's subscribers (no event id, no resume). */
  private onAccountEvent(ev: AccountLogEvent): void {
    try {
      this.m.busMessages.inc({ channel: ev.channel });
      this.deliverPrivate({ channel: ev.channel, contest_id: null, league_id: null, account_id: ev.account_id, event: ev.event });
    } catch (err) {
      this.log.error({ err, channel: ev.channel }, 'could not deliver an account event');
    }
  }

  /**
   * The feed may have been trimmed past this gateway's position: orders and balance events may
   * never have reached their subscribers, and no log holds them for a resume. Every subscriber of
   * those channels is told to refetch that state over REST (the spec's recipe on reconnect).
   */
  private accountEventsMissed(): void {
    this.m.feedGaps.inc();
    this.log.warn('the event feed was trimmed past this gateway; orders and balance subscribers told to refetch');
    for (const channel of ACCOUNT_CHANNELS) {
      const payload = JSON.stringify({
        type: 'error',
        code: 'events_missed',
        channel,
        message: `some ${channel} events may not have reached this connection (this gateway fell behind the event log); refetch ${channel === 'orders' ? 'your orders' : 'balances'} over REST, then apply the events that follow`,
      });
      const ix = this.priv.get(channel)!;
      const conns = new Set(ix.all);
      for (const set of ix.byAccount.values()) for (const conn of set) conns.add(conn);
      for (const conn of conns) if (conn.subs.has(channel)) this.sendRaw(conn, payload);
    }
  }

  /** The fast path: one native publish per topic. A socket is in the contest topics or the "every contest" topic of a channel, never both. */
  private publishTopic(ev: LogEvent): void {
    const payload = spliceMembers(ev.event, eventIdMember(ev.id));
    this.app.publish(contestTopic(ev.channel, ev.contest_id), payload, false);
    this.app.publish(everyContestTopic(ev.channel), payload, false);
  }

  private deliverDirect(ev: LogEvent): void {
    const ix = this.direct.get(ev.channel)!;
    const byContest = ix.byContest.get(ev.contest_id);
    if (!byContest && ix.every.size === 0) return;
    const bus = new BusEvent(asBusMessage(ev));
    const filter = this.filters[ev.channel];
    // Filtered payloads with event_id spliced in, once per distinct filter (ticks: seq is per connection, so without).
    const memo = new Map<string, string | null>();
    const isTicks = ev.channel === 'ticks';
    const idMember = eventIdMember(ev.id);
    for (const set of [byContest, ix.every]) {
      if (!set) continue;
      for (const conn of set) {
        const sub = conn.subs.get(ev.channel);
        if (!sub) continue;
        if (sub.leagueIds && (ev.league_id === null || !sub.leagueIds.includes(ev.league_id))) continue;
        const k = filter === PASS_THROUGH ? '' : filter.key(sub);
        let payload = memo.get(k);
        if (payload === undefined) {
          const p = filter === PASS_THROUGH ? ev.event : filter.apply(bus, sub);
          payload = p === null || isTicks ? p : spliceMembers(p, idMember);
          memo.set(k, payload);
        }
        if (payload === null) continue;
        if (isTicks) this.sendTicks(conn, payload, idMember);
        else if (this.hasRoom(conn, ev.channel)) this.sendRaw(conn, payload);
      }
    }
  }

  /**
   * seq counts every ticks event routed to the connection, even one dropped under backpressure, so
   * the client sees the gap and refetches (spec).
   */
  private sendTicks(conn: Conn, payload: string, idMember: string): void {
    const n = ++conn.seq;
    if (this.hasRoom(conn, 'ticks')) this.sendRaw(conn, spliceMembers(payload, `"seq":${n},${idMember}`));
  }

  /** One event to one connection outside live delivery (replay, or a contest not attached yet), with the subscription's filters. */
  private deliverOne(conn: Conn, sub: Subscription, ev: LogEvent): void {
    if (!conn.open) return;
    if (sub.leagueIds && (ev.league_id === null || !sub.leagueIds.includes(ev.league_id))) return;
    const filter = CHANNEL_RULES[ev.channel].delivery === 'topic' ? PASS_THROUGH : this.filters[ev.channel];
    const payload = filter === PASS_THROUGH ? ev.event : filter.apply(new BusEvent(asBusMessage(ev)), sub);
    if (payload === null) return;
    if (ev.channel === 'ticks') this.sendTicks(conn, payload, eventIdMember(ev.id));
    else if (this.hasRoom(conn, ev.channel)) this.sendRaw(conn, spliceMembers(payload, eventIdMember(ev.id)));
  }

  // ---- resume ---------------------------------------------------------------------------------

  private beginResume(conn: Conn, sub: Subscription, from: ReadonlyMap<string, string>): Resume {
    const r: Resume = { conn, sub, contests: new Map(), over: false };
    for (const [contestId, id] of from) {
      r.contests.set(contestId, new ContestReplay(sub.channel, id));
      addTo(this.resumesByContest, contestId, r);
    }
    conn.resumes.set(sub.channel, r);
    if (!sub.contestIds) addTo(this.resumesEvery, sub.channel, r);
    return r;
  }

  /** Forgets a channel's resume and whatever it buffered; its reads in flight find it over. */
  private cancelResume(conn: Conn, channel: StreamChannel): void {
    const r = conn.resumes.get(channel);
    if (!r) return;
    r.over = true;
    for (const c of r.contests.keys()) removeFrom(this.resumesByContest, c, r);
    r.contests.clear();
    removeFrom(this.resumesEvery, channel, r);
    conn.resumes.delete(channel);
  }

  /** Some contests were unsubscribed: stop replaying them. */
  private narrowResume(conn: Conn, next: Subscription, dropped: ReadonlySet<string>): void {
    const r = conn.resumes.get(next.channel);
    if (!r) return;
    r.sub = next;
    for (const c of dropped) {
      if (r.contests.delete(c)) removeFrom(this.resumesByContest, c, r);
    }
    if (r.contests.size === 0) this.cancelResume(conn, next.channel);
  }

  /** Live delivery has handled `ev`: hand it to the resumes that keep its contest (or channel) out of live delivery. */
  private resumeOnLive(ev: LogEvent): void {
    // Every-contest resumes first: a contest attached just below must not get this event twice.
    const every = this.resumesEvery.get(ev.channel);
    if (every) for (const r of every) if (!r.contests.has(ev.contest_id)) this.deliverOne(r.conn, r.sub, ev);
    const rs = this.resumesByContest.get(ev.contest_id);
    if (!rs) return;
    for (const r of [...rs]) {
      const replay = r.contests.get(ev.contest_id);
      if (!replay) continue;
      const step = replay.live(ev);
      if (step.send) this.deliverOne(r.conn, r.sub, step.send);
      if (step.attach) this.attach(r, ev.contest_id);
    }
  }

  /** The contest is caught up: live delivery takes over (for an every-contest subscription once all are). */
  private attach(r: Resume, contestId: string): void {
    if (r.over || !r.contests.delete(contestId)) return;
    removeFrom(this.resumesByContest, contestId, r);
    if (r.sub.contestIds && r.conn.open) this.indexContest(r.conn, r.sub.channel, contestId);
    if (r.contests.size > 0) return;
    r.over = true;
    r.conn.resumes.delete(r.sub.channel);
    removeFrom(this.resumesEvery, r.sub.channel, r);
    if (!r.sub.contestIds && r.conn.open) this.index(r.conn, r.sub);
  }

  private track(p: Promise<void>): void {
    this.replays.add(p);
    void p.finally(() => this.replays.delete(p));
  }

  /**
   * Replays one contest: pages of the log after the resume id, paced by the client's send buffer,
   * then the live events buffered meanwhile; then attaches it (at once, or when the tail catches up).
   */
  private async replay(r: Resume, contestId: string, replay: ContestReplay): Promise<void> {
    const current = () => !r.over && r.contests.get(contestId) === replay && r.conn.open;
    let replayed = 0;
    let unavailable: string | null = null;
    for (;;) {
      let page: LogEvent[] | 'unavailable';
      try {
        page = await this.replayReader.eventsAfter(contestId, replay.after, REPLAY_PAGE);
      } catch (err) {
        if (!current()) return;
        this.log.warn({ err, contest_id: contestId }, 'a stream replay read failed');
        page = 'unavailable';
        unavailable = 'the event log could not be read';
      }
      if (!current()) return;
      if (page === 'unavailable') {
        unavailable ??= replay.started ? 'the log no longer holds events this replay had not sent yet' : `the log does not hold event_id ${JSON.stringify(replay.from)} (never issued, or older than the log keeps)`;
        replay.unavailable();
      } else {
        for (const ev of replay.page(page)) {
          await this.roomFor(r.conn);
          if (!current()) return;
          this.deliverOne(r.conn, r.sub, ev);
          replayed++;
        }
        if (page.length === REPLAY_PAGE) continue;
      }
      await this.roomFor(r.conn);
      if (!current()) return;
      // From here to attach nothing awaits: the flushed events must precede any later live one.
      const end = replay.end(this.lastLive.get(contestId));
      if (end.more) continue;
      if (unavailable) {
        this.m.resumes.inc({ result: 'unavailable' });
        this.sendError(r.conn, {
          code: 'resume_unavailable',
          channel: r.sub.channel,
          contest_id: contestId,
          message: `cannot resume ${r.sub.channel} of contest ${contestId}: ${unavailable}; refetch current state over REST, then apply the live events that follow`,
        });
      } else this.m.resumes.inc({ result: 'replayed' });
      for (const ev of end.send) this.deliverOne(r.conn, r.sub, ev);
      this.m.replayed.inc({ channel: r.sub.channel }, replayed + end.send.length);
      if (end.attach) this.attach(r, contestId);
      return;
    }
  }

  /** Resolves when the connection's send buffer has room for more replay (at once when it has, or it closed). */
  private roomFor(conn: Conn): Promise<void> {
    const ws = conn.ws;
    if (!ws || !conn.open || ws.getBufferedAmount() < this.tuning.maxBackpressureBytes / 2) return Promise.resolve();
    return new Promise((resolve) => conn.drainWaiters.push(resolve));
  }

  private wakeReplays(conn: Conn): void {
    for (const w of conn.drainWaiters.splice(0)) w();
  }

  private deliverPrivate(msg: BusMessage): void {
    const acct = msg.account_id;
    if (!acct) return;
    const ix = this.priv.get(msg.channel)!;
    const ev = new BusEvent(msg);
    const filter = this.filters[msg.channel];
    const memo = new Map<string, string | null>();
    const send = (conn: Conn) => {
      const sub = conn.subs.get(msg.channel);
      if (!sub) return;
      const payload = this.filtered(filter, ev, sub, memo);
      if (payload !== null && this.hasRoom(conn, msg.channel)) this.sendRaw(conn, payload);
    };
    const own = ix.byAccount.get(acct);
    if (own) for (const conn of own) send(conn);
    if (ix.all.size === 0) return;
    // `all` needs the account's workspace (a database read on a cache miss); one chain keeps order.
    this.privateChain = this.privateChain
      .then(async () => {
        const owner = await this.accounts.ownerOf(acct, this.deps.clock.now());
        if (!owner) return;
        for (const conn of ix.all) {
          if (conn.open && conn.record.workspace_id === owner.workspace_id && conn.record.environment === owner.environment) send(conn);
        }
      })
      .catch((err) => this.log.error({ err }, 'private stream delivery failed'));
  }

  private filtered(filter: ChannelFilter, ev: BusEvent, sub: Subscription, memo: Map<string, string | null>): string | null {
    if (filter === PASS_THROUGH) return ev.msg.event;
    const k = filter.key(sub);
    let p = memo.get(k);
    if (p === undefined) {
      p = filter.apply(ev, sub);
      memo.set(k, p);
    }
    return p;
  }

  // ---- sending and backpressure ---------------------------------------------------------------

  /**
   * Backpressure policy (docs/stream.md): an event that finds the connection's send buffer at its
   * bound is dropped for that connection only and counted; once the buffer has drained below half,
   * the client gets one {type:'error', code:'backpressure'} saying how many messages it missed.
   */
  private hasRoom(conn: Conn, channel: string): boolean {
    const ws = conn.ws;
    if (!ws || !conn.open) return false;
    if (conn.dropped) this.maybeNotifyDrops(conn);
    if (ws.getBufferedAmount() < this.tuning.maxBackpressureBytes) return true;
    conn.dropped++;
    this.m.dropped.inc({ channel });
    return false;
  }

  private maybeNotifyDrops(conn: Conn): void {
    const ws = conn.ws;
    if (!ws || !conn.open || conn.dropped === 0) return;
    if (ws.getBufferedAmount() >= this.tuning.maxBackpressureBytes / 2) return;
    const n = conn.dropped;
    conn.dropped = 0;
    this.sendJson(conn, {
      type: 'error',
      code: 'backpressure',
      message: `${n} message(s) were dropped because this connection read too slowly; refetch current state over REST (liquidity, ticks and trades resync from their REST reads) and read faster or subscribe to fewer contests`,
      dropped: n,
    });
  }

  private sendRaw(conn: Conn, payload: string): void {
    const ws = conn.ws;
    if (!ws || !conn.open) return;
    ws.cork(() => ws.send(payload, false));
  }

  private sendJson(conn: Conn, obj: unknown): void {
    this.sendRaw(conn, JSON.stringify(obj));
  }

  private sendError(conn: Conn, e: ProtocolError): void {
    this.sendJson(conn, { type: 'error', ...e });
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  // ---- lifecycle: liveness, key checks, slots -----------------------------------------------

  /** Pings one slice of the connections: every connection once per pingIntervalMs. */
  private pingTick(): void {
    const slice = this.pingSlices[this.pingRound++ % this.pingSlices.length]!;
    for (const conn of slice) {
      const ws = conn.ws;
      if (!ws) continue;
      if (conn.awaitingPong) {
        this.log.debug({ conn: conn.id }, 'terminating a stream connection that did not pong');
        this.m.closed.inc({ reason: 'ping_timeout' });
        ws.close(); // terminate: no close handshake with a peer that stopped answering
        continue;
      }
      conn.awaitingPong = true;
      this.maybeNotifyDrops(conn);
      if (ws.getBufferedAmount() >= this.tuning.maxBackpressureBytes) conn.pingPending = true; // sent on drain
      else ws.cork(() => ws.ping());
    }
  }

  private onKeyRevoked(raw: string): void {
    let hash: string | undefined;
    try {
      hash = (JSON.parse(raw) as { key_hash?: string }).key_hash;
    } catch {
      return;
    }
    if (!hash) return;
    const now = this.deps.clock.now();
    for (const [h, until] of this.recentlyRevoked) if (until <= now) this.recentlyRevoked.delete(h);
    this.recentlyRevoked.set(hash, now + RECENTLY_REVOKED_MS);
    for (const conn of [...(this.byKey.get(hash) ?? [])]) this.invalidate(conn, 'revoked');
  }

  private invalidate(conn: Conn, reason: 'revoked' | 'unknown'): void {
    if (!conn.open || !conn.ws) return;
    this.sendJson(conn, {
      type: 'error',
      code: 'key_invalid',
      message: reason === 'revoked' ? 'this API key was revoked; do not reconnect with it' : 'this API key is no longer valid; do not reconnect with it',
    });
    this.m.closed.inc({ reason: 'key_invalid' });
    conn.ws.end(CLOSE_KEY_INVALID, 'key_invalid');
  }

  /** Re-reads every connected key from PostgreSQL: revocations and entitlement changes apply. */
  private async checkKeys(): Promise<void> {
    if (this.checkingKeys || this.stopping) return;
    this.checkingKeys = true;
    try {
      for (const hash of [...this.byKey.keys()]) {
        const rec = await loadPrincipalRecord(this.deps.gate, this.deps.pool, { kind: 'key', id: hash });
        const conns = [...(this.byKey.get(hash) ?? [])];
        if ('invalid' in rec && rec.invalid) {
          for (const c of conns) this.invalidate(c, rec.invalid);
          continue;
        }
        const record = rec as PrincipalRecord;
        for (const c of conns) {
          c.record = record;
          c.held = new Set(record.entitlements);
          this.dropUnentitled(c);
        }
      }
    } catch (err) {
      this.log.warn({ err }, 'stream key re-check failed; retrying next interval');
    } finally {
      this.checkingKeys = false;
    }
  }

  private dropUnentitled(conn: Conn): void {
    for (const sub of [...conn.subs.values()]) {
      const need = [...CHANNEL_RULES[sub.channel].requires];
      if (sub.accounts && sub.accounts.kind !== 'own') need.push(OTHER_ACCOUNTS_ENTITLEMENT);
      const missing = missingEntitlements(conn.held, need);
      if (!missing.length) continue;
      this.unindex(conn, sub);
      conn.subs.delete(sub.channel);
      this.cancelResume(conn, sub.channel);
      this.sendError(conn, {
        code: 'entitlement_required',
        channel: sub.channel,
        missing,
        message: `this key no longer holds ${missing.join(', ')}; the ${sub.channel} subscription was removed`,
      });
    }
  }

  private slotHeartbeat(): void {
    const entries = [...this.conns].map((c) => ({ keyId: c.record.key_id!, connId: c.id }));
    this.slots.refresh(entries, this.deps.clock.now()).catch((err) => this.log.warn({ err }, 'stream slot heartbeat failed'));
  }

  /** Drops the bus subscription and ends the feed tail (call with `stopping` set: a disconnected read then ends the loop). */
  private async closeSubscriber(): Promise<void> {
    try {
      await this.unsubscribeBus?.();
    } catch {
      /* the connection may already be gone */
    }
    this.subscriber?.disconnect();
    this.subscriber = null;
    this.feedConn?.disconnect();
    this.feedConn = null;
    await this.tail;
  }

  private async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.closeSubscriber();
    if (this.listenSocket) uws.us_listen_socket_close(this.listenSocket);
    this.listenSocket = null;
    for (const conn of [...this.conns]) conn.ws?.end(1001, 'server shutting down');
    await Promise.allSettled([...this.pendingReleases, this.privateChain, ...this.replays]);
    // The close handshakes get a moment; then every socket still open (a client that never answers
    // the close frame, an idle HTTP keep-alive) is cut. Until then the event loop stays alive: a
    // gateway thread could not end, and its owner could not start the next one (cli/roles/gateway-thread.ts).
    const until = Date.now() + CLOSE_GRACE_MS;
    while (this.conns.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    this.app.close();
    this.log.info({ role: 'gateway' }, 'stream gateway stopped');
  }
}

/** Starts a stream gateway on config.host:config.streamPort (0 = an ephemeral port). */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  return new StreamGateway(deps).start();
}
