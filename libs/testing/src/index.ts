/**
 * Test fixtures: real gRPC servers on port 0 with owned teardown, and the real Redis/NATS
 * the test command provides (never skipped: a missing server fails loudly).
 */
import { randomUUID } from 'node:crypto';
import { startServer, type MountedService, type RunningServer } from '@ctxmesh/rpc';
import pino from 'pino';

/** A server started for a test. */
export interface TestServer {
  /** `127.0.0.1:port`. */
  address: string;
  /** The running server. */
  running: RunningServer;
  /** Drain (waits for in-flight calls) and stop. */
  close(): Promise<void>;
}

/** Start services on a free loopback port. */
export async function startTestServer(
  services: MountedService[],
  opts: { checkReady?: () => Promise<boolean>; shutdownGraceMs?: number; shutdownController?: AbortController } = {},
): Promise<TestServer> {
  const running = await startServer({
    domain: 'test',
    services,
    port: 0,
    log: pino({ level: 'silent' }),
    checkReady: opts.checkReady,
    readyPollMs: 50,
    shutdownGraceMs: opts.shutdownGraceMs ?? 2000,
    shutdownController: opts.shutdownController,
  });
  return { address: running.address, running, close: () => running.shutdown() };
}

/** REDIS_URL provided by the test command; throws (never skips) when absent. */
export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through `npm test`, which finds or starts redis-server');
  return url;
}

/** NATS_URL provided by the test command; throws (never skips) when absent. */
export function natsUrl(): string {
  const url = process.env.NATS_URL;
  if (!url) throw new Error('NATS_URL is not set: run the tests through `npm test`, which finds or starts nats-server -js');
  return url;
}

/** A unique name for keys, streams and subjects of one test run. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** The error `fn` throws (the test fails when it returns instead), for asserting on its fields. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

/** Resolve after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Poll `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000, stepMs = 20): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await sleep(stepMs);
  }
}
