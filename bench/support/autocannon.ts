/** Runs autocannon against a URL and returns the figures every bench prints. */
import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export async function load(name: string, url: string, opts: { seconds: number; connections: number; headers?: Record<string, string> }): Promise<LoadResult> {
  const r = await autocannon({ url, duration: opts.seconds, connections: opts.connections, headers: opts.headers, pipelining: 1 });
  return {
    name,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export function printTable(rows: LoadResult[]): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(pad('scenario', 60) + pad('req/s', 12) + pad('p50 ms', 9) + pad('p99 ms', 9) + 'errors/non2xx');
  for (const r of rows) {
    console.log(pad(r.name, 60) + pad(r.rps.toFixed(0), 12) + pad(String(r.p50), 9) + pad(String(r.p99), 9) + `${r.errors}/${r.non2xx}`);
  }
}
