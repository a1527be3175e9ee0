/**
 * One HTTP/1.1 exchange over a plain socket, bytes sent as given: no client-side encoding, checks or
 * header limits, so tests can send what a hostile client sends (over-long lines, broken encodings).
 */
import { connect } from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, or the text when it is not JSON. */
  body: any;
  /** The server closed the connection after answering. */
  closed: boolean;
}

export function rawRequest(port: number, request: string, timeoutMs = 3_000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let closed = false;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('utf8');
      const at = text.indexOf('\r\n\r\n');
      const lines = (at >= 0 ? text.slice(0, at) : text).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines.slice(1)) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      const bodyText = at >= 0 ? text.slice(at + 4) : '';
      let body: any = bodyText;
      try {
        body = JSON.parse(bodyText);
      } catch {
        /* kept as text */
      }
      resolve({ status: Number(lines[0]!.split(' ')[1]), headers, body, closed });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (d) => {
      chunks.push(d);
      // One complete answer is enough on a keep-alive socket.
      const t = Buffer.concat(chunks);
      const at = t.indexOf('\r\n\r\n');
      const m = /content-length: *(\d+)/i.exec(t.subarray(0, Math.max(at, 0)).toString('latin1'));
      if (m && at >= 0 && t.length - (at + 4) >= Number(m[1])) setTimeout(finish, 20);
    });
    socket.on('end', () => {
      closed = true;
      finish();
    });
    socket.on('error', (err) => (chunks.length ? finish() : reject(err)));
    socket.write(request);
  });
}

/** A GET with the given headers, the path sent verbatim. */
export const rawGet = (port: number, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  rawRequest(port, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`);
