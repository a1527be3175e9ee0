/**
 * Tells a store's connection failure from any other error, so every caller can answer 503
 * (StoreUnavailable) for an outage and keep 500 for bugs. Knows the shapes the two clients use.
 */
import { StoreUnavailable } from '../errors.js';

// SQLSTATE class 08 (connection exception), 57P01-57P03 (the server is shutting down, crashed or
// starting), 53300 (too many connections).
const PG_UNAVAILABLE_STATE = /^(08...|57P0[123]|53300)$/;
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
// node-postgres: a connection lost mid-query, a client already broken.
const PG_MESSAGES = /Connection terminated|connection error and is not queryable|Client was closed and is not queryable/i;
// node-postgres's pool gave up waiting for a connection: the server may be down, or every
// connection of the pool may be busy (load beyond capacity). The answer must not claim the first.
const PG_POOL_TIMEOUT = /timeout exceeded when trying to connect/i;
// ioredis (src/store/redis/client.ts fails fast): queue flushed on a lost connection, no offline
// queue, a hung connection's timeout, a client closed for good.
const REDIS_MESSAGES = /Reached the max retries per request limit|Connection is closed|Stream isn't writeable|Command timed out/;

/** The StoreUnavailable this error means, or null when it is not a store outage. */
export function asStoreUnavailable(err: unknown, what?: string): StoreUnavailable | null {
  if (err instanceof StoreUnavailable) return err;
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  if (err.name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.test(err.message)) return new StoreUnavailable('redis', what);
  if (typeof code === 'string' && (PG_UNAVAILABLE_STATE.test(code) || SOCKET_CODES.has(code))) return new StoreUnavailable('postgres', what);
  if (PG_POOL_TIMEOUT.test(err.message)) return new StoreUnavailable('postgres', what, 1, 'no_answer');
  if (PG_MESSAGES.test(err.message)) return new StoreUnavailable('postgres', what);
  return null;
}
