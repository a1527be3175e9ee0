/** Runs autocannon against a server and returns the figures every bench prints. */
import autocannon from 'autocannon';

export interface LoadResult {
  name: string;
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

export interface LoadOptions {
  seconds: number;
  connections: number;
  headers?: Record<string, string>;
  /** Paths to spread the requests over, each request picking one at random (a fixed order would march every connection through the same keys together). */
  paths?: readonly string[];
}

/** `url` is the full URL, or the origin when `paths` is given. */
export async function load(name: string, url: string, opts: LoadOptions): Promise<LoadResult> {
  const paths = opts.paths;
  const r = await autocannon({
    url,
    duration: opts.seconds,
    connections: opts.connections,
    headers: opts.headers,
    pipelining: 1,
    ...(paths && paths.length > 0 ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, path: paths[Math.floor(Math.random() * paths.length)]! }) }] } : {}),
  });
  return {
    name,
    rps: r.requests.average,
    requests: r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    non2xx: r.non2xx,
  };
}

export function printTable(rows: (LoadResult & { extra?: string })[], extraHeader = ''): void {
  const pad = (s: string, n: number) => s.padEnd(n);
  console.log(pad('run', 48) + pad('req/s', 10) + pad('p50 ms', 9) + pad('p99 ms', 9) + pad('errors/non2xx', 15) + extraHeader);
  for (const r of rows) {
    console.log(pad(r.name, 48) + pad(r.rps.toFixed(0), 10) + pad(String(r.p50), 9) + pad(String(r.p99), 9) + pad(`${r.errors}/${r.non2xx}`, 15) + (r.extra ?? ''));
  }
}
