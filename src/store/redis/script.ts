/**
 * A Lua script called by SHA (EVALSHA), loaded with EVAL when Redis does not know it (first use,
 * or after a restart emptied its script cache). Unlike ioredis' defineCommand, this needs no
 * per-connection registration: defining a command while an auto-pipeline is being filled in the
 * same event-loop turn makes ioredis misalign that pipeline's replies and crash the process
 * (redis/ioredis#1931; HotState objects are created at different times on a shared connection).
 * EVALSHA and EVAL are ordinary commands, safe with auto-pipelining.
 */
import { createHash } from 'node:crypto';
import type { Redis } from './client.js';

export type ScriptCall<R> = (keys: readonly string[], args: readonly (string | number)[]) => Promise<R>;

export function luaScript<R>(redis: Redis, lua: string): ScriptCall<R> {
  const sha = createHash('sha1').update(lua).digest('hex');
  return async (keys, args) => {
    try {
      return (await redis.evalsha(sha, keys.length, ...keys, ...args)) as R;
    } catch (err) {
      // NOSCRIPT: the script did not run, so sending it whole cannot apply it twice.
      if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
      return (await redis.eval(lua, keys.length, ...keys, ...args)) as R;
    }
  };
}

/** Script definitions by name, as ioredis' defineCommand takes them. */
export type LuaDefinitions = Record<string, { numberOfKeys: number; lua: string }>;

/**
 * Named scripts called as `cmd.name(...keys, ...args)`, like commands ioredis' defineCommand would
 * add, but by EVALSHA (see luaScript): safe to build at any time on a shared connection.
 */
export function luaCommands<D extends LuaDefinitions>(redis: Redis, defs: D): { [K in keyof D]: (...keysThenArgs: (string | number)[]) => Promise<unknown> } {
  const out = {} as { [K in keyof D]: (...keysThenArgs: (string | number)[]) => Promise<unknown> };
  for (const name of Object.keys(defs) as (keyof D)[]) {
    const { numberOfKeys, lua } = defs[name]!;
    const call = luaScript<unknown>(redis, lua);
    out[name] = (...a) => call(a.slice(0, numberOfKeys) as string[], a.slice(numberOfKeys));
  }
  return out;
}
