/**
 * A real stack (PostgreSQL database + Redis prefix of its own) with stream gateways on ephemeral
 * ports, keys per plan, event-log appenders (orders and balance: as the account-event relay
 * appends them) and WebSocket clients that are all closed after each test.
 */
import { startGateway, type Gateway, type GatewayDeps, type GatewayTuning } from '../../../api/gateway/index.js';
import { spliceMembers } from '../../../api/gateway/resume.js';
import { CHANNEL_RULES } from '../../../api/gateway/channels.js';
import type { Plan } from '../../../src/domain/plans.js';
import type { AccountChannel, BusMessage, StreamChannel } from '../../../src/domain/stream.js';
import { createKey, type CreatedKey } from '../../../src/store/pg/keys.js';
import { createRedis } from '../../../src/store/redis/client.js';
import { AccountEventLog } from '../../../src/store/redis/eventlog.js';
import { HotState } from '../../../src/store/redis/hot.js';
import { REDIS_URL, startStack, type TestStack } from '../../support/stack.js';
import { connectWs, type ConnectOptions, type WsClient } from '../../../bench/support/ws-client.js';

export interface Harness {
  s: TestStack;
  gw: Gateway;
  accountLog: AccountEventLog;
  hot: HotState;
  /** Starts one more gateway against the same stores (scale-out). Stopped by close(). */
  startGateway(tuning?: Partial<GatewayTuning>, deps?: Pick<GatewayDeps, 'replayReader'>): Promise<Gateway>;
  key(plan: Plan, extra?: { entitlements?: string[]; workspaceId?: string }): Promise<CreatedKey>;
  url(apiKey: string | null, gw?: Gateway): string;
  /** Connects and consumes the `connected` greeting. */
  connect(apiKey: string, opts?: ConnectOptions & { gw?: Gateway }): Promise<WsClient>;
  /** Connects without waiting for anything (refusals, raw greeting checks). */
  open(apiKey: string | null, opts?: ConnectOptions & { gw?: Gateway }): Promise<WsClient>;
  /**
   * Appends the event to the contest's log (orders and balance: to the feed with extra.account_id,
   * as the account-event relay does). Returns the text a client receives (event_id spliced in; ticks
   * also get seq, so tests read those parsed; orders and balance verbatim).
   */
  publish(channel: StreamChannel, contestId: string | null, event: object, extra?: Partial<BusMessage>): Promise<string>;
  /** As publish, for a log channel: the event's id and the text a client receives. */
  append(channel: StreamChannel, contestId: string, event: object, leagueId?: string | null): Promise<{ id: string; text: string }>;
  closeClients(): Promise<void>;
  close(): Promise<void>;
}

/** `stack`: gateways over a stack the caller made (and closes); by default one of its own. */
export async function startHarness(tuning: Partial<GatewayTuning> = {}, opts: { stack?: TestStack } = {}): Promise<Harness> {
  const s = opts.stack ?? (await startStack({ catalog: null }));
  const gateways: Gateway[] = [];
  const clients = new Set<WsClient>();
  const config = { ...s.config, streamPort: 0 };
  const start = async (t: Partial<GatewayTuning> = tuning, extra: Pick<GatewayDeps, 'replayReader'> = {}) => {
    const gw = await startGateway({
      ...extra,
      config,
      log: s.rt.log,
      pool: s.rt.pool,
      redis: s.rt.redis,
      ks: s.rt.ks,
      gate: s.rt.gate,
      clock: s.rt.clock,
      metrics: s.rt.metrics,
      createSubscriber: () => createRedis(REDIS_URL, { name: 'flow-test-gateway-sub' }),
      tuning: t,
    });
    gateways.push(gw);
    return gw;
  };
  const gw = await start();
  const accountLog = new AccountEventLog(s.rt.redis, s.rt.ks);
  const hot = new HotState(s.rt.redis, s.rt.ks);
  const append = async (channel: StreamChannel, contestId: string, event: object, leagueId: string | null = null) => {
    const text = JSON.stringify(event);
    const id = await hot.append(contestId, [{ channel, league_id: leagueId, event: text }]);
    if (!id) throw new Error(`appending to contest ${contestId} stored nothing`);
    return { id, text: spliceMembers(text, `"event_id":"${id}"`) };
  };
  const url = (apiKey: string | null, g: Gateway = gw) =>
    `ws://127.0.0.1:${g.port}/flow/v1/stream${apiKey === null ? '' : `?api_key=${encodeURIComponent(apiKey)}`}`;
  const open = async (apiKey: string | null, opts: ConnectOptions & { gw?: Gateway } = {}) => {
    const c = await connectWs(url(apiKey, opts.gw), opts);
    clients.add(c);
    return c;
  };
  const closeClients = async () => {
    await Promise.all([...clients].map((c) => c.close().catch(() => undefined)));
    clients.clear();
  };
  return {
    s,
    gw,
    accountLog,
    hot,
    startGateway: (t, deps) => start(t, deps),
    key: (plan, extra = {}) =>
      createKey(s.rt.pool, s.rt.gate, { plan, keyType: 'data', environment: 'test', workspaceId: extra.workspaceId, entitlements: extra.entitlements }),
    url,
    open,
    async connect(apiKey, opts = {}) {
      const c = await open(apiKey, opts);
      await c.next((m) => m.type === 'connected');
      return c;
    },
    async publish(channel, contestId, event, extra = {}) {
      if (CHANNEL_RULES[channel].delivery !== 'private') {
        if (contestId === null) throw new Error(`${channel} events belong to a contest`);
        return (await append(channel, contestId, event, extra.league_id ?? null)).text;
      }
      if (!extra.account_id) throw new Error(`${channel} events belong to an account: pass extra.account_id`);
      const text = JSON.stringify(event);
      await accountLog.append([{ account_id: extra.account_id, channel: channel as AccountChannel, event: text }]);
      return text;
    },
    append,
    closeClients,
    async close() {
      await closeClients();
      for (const g of gateways) await g.stop();
      if (!opts.stack) await s.close();
    },
  };
}

let seq = 0;
/** A liquidity.update with a marker so tests can tell events apart. */
export function liquidityEvent(contestId: string, marker = `m${++seq}`) {
  return {
    type: 'liquidity.update',
    contest_id: contestId,
    changed_entries: [{ liquidity_hash: `sim:${contestId}:${marker}`, partner_id: 'sim', price: 0.5, available: 100 }],
    refresh_required: false,
    timestamp: new Date().toISOString(),
  };
}

export function ticksEvent(contestId: string, marker = `t${++seq}`, pad = 0) {
  return {
    type: 'ticks',
    contest_id: contestId,
    ticks: [
      {
        position_hash: `${contestId}:ml:home:0:p1:ft`,
        partner_id: 'sim',
        partner_name: 'Sim',
        price: 0.52,
        american_odds: '-108',
        available: 250,
        liquidity_hash: `sim:${marker}`,
        fee_packet: null,
        actionable: true,
        buy_id: marker + 'x'.repeat(pad),
        source: 'streaming',
        outlier: false,
        median: null,
        as_of: new Date().toISOString(),
      },
    ],
    timestamp: new Date().toISOString(),
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries fn until it resolves or the deadline passes (for effects that land asynchronously). */
export async function eventually<T>(fn: () => Promise<T>, ms = 3000, step = 50): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > until) throw err;
      await sleep(step);
    }
  }
}
