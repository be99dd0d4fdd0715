import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { describeLedgerStoreContract } from '../src/contract/ledger-store.contract';
import { luaScript, runLua } from '../src/redis/lua';
import { RedisLedgerStore } from '../src/redis/redis-ledger-store';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) throw new Error('REDIS_URL must point at a real Redis for this test');

/** Delete every key under a prefix (SCAN, never KEYS, so a shared Redis is not blocked). */
async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}

describeLedgerStoreContract('redis', async () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `test:${randomUUID()}:ledger:`;
  const store = new RedisLedgerStore(redis, { keyPrefix: prefix, ttlMs: 60_000 });
  return {
    store,
    expire: async (key) => {
      await redis.del(store.keyOf(key));
    },
    dispose: async () => {
      await dropPrefix(redis, prefix);
      await redis.quit();
    },
  };
});

describe('RedisLedgerStore', () => {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
  const prefix = `test:${randomUUID()}:ledger:`;
  const store = new RedisLedgerStore(redis, { keyPrefix: prefix, ttlMs: 90_000 });
  afterAll(async () => {
    await dropPrefix(redis, prefix);
    await redis.quit();
  });

  it('keeps one hash per session under ledger:{account}:{user}:{session} with the TTL refreshed by every call', async () => {
    const key = { account: 'acme', user: 'bob', sessionId: 'cc-1' };
    expect(store.keyOf(key)).toBe(`${prefix}acme:bob:cc-1`);
    await store.beginTurn(key);
    await redis.pexpire(store.keyOf(key), 5_000);
    await store.record(key, 0, 2, [{ uri: 'viking://resources/a.md', detail: 'full' }], 500);
    const ttl = await redis.pttl(store.keyOf(key));
    expect(ttl).toBeGreaterThan(5_000);
    expect(ttl).toBeLessThanOrEqual(90_000);
    const hash = await redis.hgetall(store.keyOf(key));
    expect(hash.clock).toBe('1');
    expect(hash['u:viking://resources/a.md']).toBe('0|{"turn":0,"detail":"full"}');
  });

  it('runs a script the server has not cached yet, then by its SHA', async () => {
    // A fresh source (unique comment) is never in the script cache, so the EVAL fallback runs;
    // flushing the shared server's cache instead would disturb other tests.
    const script = luaScript(`-- ${randomUUID()}\nreturn redis.call('INCR', KEYS[1])`);
    const key = `${prefix}lua`;
    expect(await redis.script('EXISTS', script.sha)).toEqual([0]);
    expect(await runLua(redis, script, [key], [])).toBe(1);
    expect(await redis.script('EXISTS', script.sha)).toEqual([1]);
    expect(await runLua(redis, script, [key], [])).toBe(2);
  });

  it('leaves the server\'s cjson number parsing as it found it', async () => {
    const key = { account: 'acme', user: 'bob', sessionId: `cjson-${randomUUID()}` };
    await store.record(key, 0, 1, [{ uri: 'u', detail: 'full' }], 500);
    const lenient = await redis.eval("local ok = pcall(cjson.decode, '0x10'); return ok and 1 or 0", 0);
    expect(lenient).toBe(1);
  });

  it('reports ping false once its client is disconnected', async () => {
    const lone = new Redis(REDIS_URL, { maxRetriesPerRequest: 0, enableOfflineQueue: false, lazyConnect: true });
    const s = new RedisLedgerStore(lone, { keyPrefix: prefix });
    expect(await s.ping()).toBe(false);
    lone.disconnect();
  });
});
