/**
 * Kalshi request signing (docs.kalshi.com/getting_started/api_keys and
 * quick_start_authenticated_requests): every authenticated request, and the WebSocket handshake,
 * carries
 *   KALSHI-ACCESS-KEY        the API key id
 *   KALSHI-ACCESS-TIMESTAMP  unix time in milliseconds
 *   KALSHI-ACCESS-SIGNATURE  base64( RSA-PSS( SHA-256, MGF1-SHA-256, salt = digest length )
 *                                    over  timestamp + METHOD + path )
 * where path is the full request path without the query string ("/trade-api/v2/portfolio/orders"
 * for "/trade-api/v2/portfolio/orders?limit=5"; "/trade-api/ws/v2" for the socket).
 */
import { constants, createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';

export const HEADER_KEY = 'KALSHI-ACCESS-KEY';
export const HEADER_TIMESTAMP = 'KALSHI-ACCESS-TIMESTAMP';
export const HEADER_SIGNATURE = 'KALSHI-ACCESS-SIGNATURE';

export interface KalshiCredentials {
  keyId: string;
  /** The RSA private key (PEM, PKCS#1 or PKCS#8) as Kalshi issued it. */
  privateKeyPem: string;
}

const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST };

/** The signed message: timestamp + METHOD + path without query. */
export function signingPayload(timestampMs: number, method: string, path: string): string {
  const q = path.indexOf('?');
  return `${timestampMs}${method.toUpperCase()}${q >= 0 ? path.slice(0, q) : path}`;
}

export class KalshiSigner {
  readonly keyId: string;
  private readonly key: KeyObject;

  constructor(creds: KalshiCredentials) {
    if (!creds.keyId) throw new Error('kalshi: an API key id is required');
    this.keyId = creds.keyId;
    // Parse once: a bad key fails at start-up, not on the first order.
    this.key = createPrivateKey(creds.privateKeyPem);
    if (this.key.asymmetricKeyType !== 'rsa') throw new Error(`kalshi: the private key must be RSA, got ${this.key.asymmetricKeyType}`);
  }

  /** The three headers for one request. */
  headers(method: string, path: string, timestampMs: number): Record<string, string> {
    const sig = sign('sha256', Buffer.from(signingPayload(timestampMs, method, path)), { key: this.key, ...PSS });
    return {
      [HEADER_KEY]: this.keyId,
      [HEADER_TIMESTAMP]: String(timestampMs),
      [HEADER_SIGNATURE]: sig.toString('base64'),
    };
  }
}

/** Checks a signature with the public key (what Kalshi does; used by tests and the fake venue). */
export function verifyKalshiSignature(publicKeyPem: string, method: string, path: string, headers: Record<string, string | string[] | undefined>): boolean {
  const get = (k: string) => {
    const v = headers[k] ?? headers[k.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  const ts = get(HEADER_TIMESTAMP);
  const sig = get(HEADER_SIGNATURE);
  if (!ts || !sig || !/^\d+$/.test(ts)) return false;
  return verify('sha256', Buffer.from(signingPayload(Number(ts), method, path)), { key: publicKeyPem, ...PSS }, Buffer.from(sig, 'base64'));
}
