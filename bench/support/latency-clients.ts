/**
 * WebSocket clients for bench/stream-latency.ts, in child processes (as bench/ws-fanout.ts runs its
 * clients) so the service and the baseline server do not share an event loop with their readers.
 * Each client notes when it first received each tracked change (bench/support/latency-score.ts);
 * after the run the parent sends the send times and each process scores its own clients.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connectWs, type WsClient } from './ws-client.js';
import { carriedChange, mergeScores, scoreReceipts, type Score, type Track } from './latency-score.js';
import { isMain } from './main.js';
import { ClientProcess } from './client-process.js';

/** Milliseconds on a clock every process of the bench shares (as bench/ws-fanout.ts times). */
export const nowMs = (): number => performance.timeOrigin + performance.now();

type ToChild =
  | { cmd: 'connect'; url: string; count: number; contestId: string | null }
  | { cmd: 'track'; track: Track; discardEvery: number }
  | { cmd: 'score'; sent: number[] }
  | { cmd: 'close' };
type FromChild =
  | { ev: 'ready'; connected: number; ms: number }
  | { ev: 'tracking' }
  | { ev: 'scored'; score: Score }
  | { ev: 'closed' }
  | { ev: 'error'; message: string };

class ClientProc extends ClientProcess<ToChild, FromChild> {}

/** Client processes driven as one: connect splits the clients between them, scores are merged. */
export class LatencyClients {
  private constructor(private readonly procs: ClientProc[]) {}

  static spawn(procs: number): LatencyClients {
    const self = fileURLToPath(import.meta.url);
    return new LatencyClients(
      Array.from({ length: procs }, () => new ClientProc(spawn(process.execPath, ['--import', 'tsx', self], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: process.env }))),
    );
  }

  get pids(): number[] {
    return this.procs.map((p) => p.child.pid ?? -1);
  }

  /** Opens `count` clients on url; each waits for the greeting and, given a contest, subscribes to its liquidity. */
  async connect(url: string, count: number, contestId: string | null): Promise<{ connected: number; ms: number }> {
    const n = this.procs.length;
    const res = await Promise.all(
      this.procs.map((p, i) => p.request<Extract<FromChild, { ev: 'ready' }>>({ cmd: 'connect', url, count: Math.floor(count / n) + (i < count % n ? 1 : 0), contestId })),
    );
    return { connected: res.reduce((s, r) => s + r.connected, 0), ms: Math.max(...res.map((r) => r.ms)) };
  }

  /**
   * Starts recording receipts of these changes, forgetting earlier ones. discardEvery > 0: the first
   * client of each process ignores every that-many-th change it receives (shows the loss target fail).
   */
  async track(track: Track, discardEvery = 0): Promise<void> {
    await Promise.all(this.procs.map((p) => p.request({ cmd: 'track', track, discardEvery })));
  }

  /** sent[i]: when change i was sent (nowMs clock). */
  async score(sent: number[]): Promise<Score> {
    const res = await Promise.all(this.procs.map((p) => p.request<Extract<FromChild, { ev: 'scored' }>>({ cmd: 'score', sent })));
    return mergeScores(res.map((r) => r.score));
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map((p) => p.request({ cmd: 'close' })));
  }

  kill(): void {
    for (const p of this.procs) p.child.kill('SIGTERM');
  }
}

// ---- client process ------------------------------------------------------------------------

interface Client {
  socket: WsClient;
  /** First receipt time of each tracked change (NaN: not received); replaced by each track. */
  receipts: Float64Array;
  received: number;
  discardEvery: number;
}

function clientProcess(): void {
  const send = (m: FromChild) => process.send!(m);
  let clients: Client[] = [];
  let track: Track | null = null;
  let hashBytes = Buffer.alloc(0);
  let stray = 0;

  const onChange = (c: Client, b: Buffer) => {
    if (!track) return;
    const i = carriedChange(b, track, hashBytes);
    if (i === 'stray') stray++;
    if (typeof i !== 'number' || !Number.isNaN(c.receipts[i]!)) return;
    c.received++;
    if (c.discardEvery > 0 && c.received % c.discardEvery === 0) return;
    c.receipts[i] = nowMs();
  };

  async function open(url: string, contestId: string | null): Promise<Client> {
    let greeted: () => void = () => undefined;
    const greeting = new Promise<void>((r) => (greeted = r));
    let subscribed: () => void = () => undefined;
    const acked = new Promise<void>((r) => (subscribed = r));
    const client: Client = { socket: null as unknown as WsClient, receipts: new Float64Array(0), received: 0, discardEvery: 0 };
    client.socket = await connectWs(url, {
      onPayload: (b) => {
        if (b[9] === 0x63 && b.toString('latin1', 0, 19) === '{"type":"connected"') return greeted();
        if (b[9] === 0x73 && b.toString('latin1', 0, 20) === '{"type":"subscribed"') return subscribed();
        onChange(client, b);
      },
    });
    await greeting;
    if (contestId) {
      client.socket.send({ action: 'subscribe', channel: 'liquidity', contest_ids: [contestId] });
      await acked;
    }
    return client;
  }

  async function connectAll(url: string, count: number, contestId: string | null): Promise<number> {
    const batch = 50;
    for (let i = 0; i < count; i += batch) {
      clients.push(...(await Promise.all(Array.from({ length: Math.min(batch, count - i) }, () => open(url, contestId)))));
    }
    return clients.length;
  }

  process.on('message', (m: ToChild) => {
    void (async () => {
      try {
        if (m.cmd === 'connect') {
          const t0 = nowMs();
          send({ ev: 'ready', connected: await connectAll(m.url, m.count, m.contestId), ms: nowMs() - t0 });
        } else if (m.cmd === 'track') {
          track = m.track;
          hashBytes = Buffer.from(JSON.stringify(m.track.liquidityHash));
          stray = 0;
          clients.forEach((c, k) => {
            c.receipts = new Float64Array(m.track.count).fill(Number.NaN);
            c.received = 0;
            c.discardEvery = k === 0 ? m.discardEvery : 0;
          });
          send({ ev: 'tracking' });
        } else if (m.cmd === 'score') {
          send({
            ev: 'scored',
            score: scoreReceipts(
              clients.map((c) => c.receipts),
              m.sent,
              stray,
            ),
          });
        } else if (m.cmd === 'close') {
          await Promise.all(clients.map((c) => c.socket.close().catch(() => undefined)));
          clients = [];
          track = null;
          send({ ev: 'closed' });
        }
      } catch (err) {
        send({ ev: 'error', message: err instanceof Error ? err.message : String(err) });
      }
    })();
  });
}

if (isMain(import.meta.url)) clientProcess();
