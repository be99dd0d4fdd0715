/**
 * Connection factories for the production stores. Nothing here falls back to an embedded
 * store: a configured store that cannot be reached is an error at start-up.
 */
import Redis from 'ioredis';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { QdrantClient } from '@qdrant/js-client-rest';

/** Connect to Redis and verify it answers PING within `timeoutMs`. */
export async function connectRedis(url: string, timeoutMs = 5000): Promise<Redis> {
  // No offline queue: while the connection is down (ioredis reconnects on its own, backing off
  // to 2 s between attempts) a command fails at once instead of waiting to be replayed, so a
  // Redis outage is a fast `unavailable` / 503 rather than a second of waiting per request,
  // and requests are served normally again as soon as the connection is back.
  const redis = new Redis(url, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 2, connectTimeout: timeoutMs, enableAutoPipelining: true });
  // Connection errors during an outage surface where they matter (commands fail fast, readiness
  // goes false); without a listener ioredis would print each reconnect attempt as unhandled.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${url}: ${(err as Error).message}`, { cause: err });
  }
  return redis;
}

/** Connect to NATS (JetStream must be enabled on the server for the bus). */
export async function connectNats(url: string, name: string, timeoutMs = 5000): Promise<NatsConnection> {
  try {
    return await natsConnect({ servers: url.split(',').map((s) => s.trim()), name, timeout: timeoutMs, maxReconnectAttempts: -1 });
  } catch (err) {
    throw new Error(`cannot reach NATS at ${url}: ${(err as Error).message}`, { cause: err });
  }
}

/** A Qdrant REST client (connectivity is checked by the adapter's ping). */
export function qdrantClient(url: string, apiKey?: string): QdrantClient {
  return new QdrantClient({ url, apiKey, checkCompatibility: false });
}
