import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { SessionStore } from '@ctxmesh/stores';
import { LuaScript, RedisSessionStore, sessionKeys } from '../src/stores/redis-session-store';
import { describeSessionStoreContract } from '../src/stores/__tests__/session-store-contract';
import { describeWorkspaceStoreContract } from '../src/stores/__tests__/workspace-store-contract';
import { connectRedis, dropPrefix, testPrefix } from './redis-fixture';

let redis: Redis;
const prefixes = new WeakMap<SessionStore, string>();

beforeAll(() => {
  redis = connectRedis();
});
afterAll(async () => {
  await redis.quit();
});

describeSessionStoreContract('redis', {
  async make() {
    const prefix = testPrefix();
    const store = new RedisSessionStore({ redis, keyPrefix: prefix });
    prefixes.set(store, prefix);
    return store;
  },
  async cleanup(store) {
    await dropPrefix(redis, prefixes.get(store)!);
  },
  async ttlSeconds(store, key, kind, id) {
    const k = sessionKeys(key, prefixes.get(store)!);
    return redis.ttl(kind === 'budget' ? k.budget(id) : k.idem(id));
  },
});

const wsPrefixes = new WeakMap<object, string>();
describeWorkspaceStoreContract('redis', {
  async make() {
    const prefix = testPrefix();
    const store = new RedisSessionStore({ redis, keyPrefix: prefix });
    wsPrefixes.set(store, prefix);
    return store;
  },
  async cleanup(store) {
    await dropPrefix(redis, wsPrefixes.get(store)!);
  },
});

describe('RedisSessionStore', () => {
  it('LuaScript.run - script unknown to the server - falls back to EVAL and caches it', async () => {
    // A body no server has seen (unique comment), instead of SCRIPT FLUSH on a shared server.
    const script = new LuaScript(`-- ${randomUUID()}\nreturn ARGV[1] .. KEYS[1]`);
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    expect(await script.run(redis, ['{t}k'], ['v:'])).toBe('v:{t}k');
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    expect(await script.run(redis, ['{t}k'], ['w:'])).toBe('w:{t}k');
  });

  it('SessionStore.keys - one session - every key carries the same hash tag first', async () => {
    const k = sessionKeys({ account: 'acct:1', user: 'u{2}', sessionId: 's%3' }, 'p:');
    const tags = [k.meta, k.log, k.surface, k.ledger, k.budgets, k.budget('agent:x'), k.idem('req}1'), k.unused].map((s) => /\{([^}]*)\}/.exec(s)![1]);
    expect(new Set(tags).size).toBe(1);
    expect(tags[0]).toBe('s:acct%3A1:u%7B2%7D:s%253');
  });

  it('SessionStore.constructor - prefix with braces - throws', () => {
    expect(() => new RedisSessionStore({ redis, keyPrefix: 'x{y}' })).toThrow(/must not contain/);
  });
});
