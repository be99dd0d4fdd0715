/** Redis test fixture: a real client on REDIS_URL and per-test key prefixes with cleanup. */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';

/** A client on REDIS_URL (the test command guarantees it is set; fail loudly otherwise). */
export function connectRedis(): Redis {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run integration tests through scripts/test.mjs');
  return new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2 });
}

/** A fresh key prefix for one test. */
export function testPrefix(): string {
  return `test:sessions:${randomUUID()}:`;
}

/** Delete every key under a prefix. */
export async function dropPrefix(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== '0');
}
