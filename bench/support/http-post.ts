/** One JSON POST over a keep-alive agent, for the benches' closed loops (bench wallet, bench orders). */
import http from 'node:http';

const REQUEST_TIMEOUT_MS = 30_000;

/** POSTs `body` to 127.0.0.1:`port``path`; resolves the status and body (errors, and no answer in 30 s, reject). */
export function postJson(agent: http.Agent, port: number, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.on('error', reject);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => req.destroy(new Error(`no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}
