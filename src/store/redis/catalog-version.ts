/** A counter bumped on every catalog write; readers drop cached catalog responses when it moves. */
import type { Keyspace, Redis } from './client.js';

export async function bumpCatalogVersion(redis: Redis, ks: Keyspace): Promise<number> {
  return redis.incr(ks.k('catalog', 'version'));
}

export async function readCatalogVersion(redis: Redis, ks: Keyspace): Promise<number> {
  return Number((await redis.get(ks.k('catalog', 'version'))) ?? 0);
}
