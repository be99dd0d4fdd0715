import { createHash } from 'node:crypto';
import type Redis from 'ioredis';

/** A Lua script with its SHA1, run with EVALSHA and loaded on first NOSCRIPT. */
export interface LuaScript {
  /** Script source. */
  readonly source: string;
  /** SHA1 hex of the source. */
  readonly sha: string;
}

/** Wrap a Lua source for {@link runLua}. */
export function luaScript(source: string): LuaScript {
  return { source, sha: createHash('sha1').update(source).digest('hex') };
}

/**
 * Run a script atomically on one key set: EVALSHA first, EVAL when the server does not know the
 * script yet (after a restart or SCRIPT FLUSH). Does not add commands to the shared client.
 */
export async function runLua(redis: Redis, script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!String((err as Error).message).includes('NOSCRIPT')) throw err;
    return await redis.eval(script.source, keys.length, ...keys, ...args);
  }
}
