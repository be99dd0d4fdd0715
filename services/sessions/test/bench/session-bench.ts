/**
 * Benchmark (not a test): range computation at 1k, 10k and 100k events, and one overflow
 * recovery on a 2,000-event session on Redis, in process and through the gRPC service.
 *
 *   npx tsc -p services/sessions/test/bench/tsconfig.json
 *   REDIS_URL=redis://127.0.0.1:6379 NODE_PATH=$PWD/node_modules \
 *     node /tmp/ctxmesh-sessions-bench/services/sessions/test/bench/session-bench.js
 *
 * Prints one JSON line per measurement. Numbers are medians of several repetitions.
 */
import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import Redis from 'ioredis';
import { sessions } from '@ctxmesh/proto';
import { Budget, callUnary, connect, startServer } from '@ctxmesh/rpc';
import pino from 'pino';
import { syntheticSession } from '../../src/domain/synthetic';
import { buildView } from '../../src/domain/projection';
import { computeCompressibleRanges } from '../../src/domain/ranges';
import { CONTEXT_WINDOW_EXCEEDED } from '../../src/domain/recovery';
import { SessionLog } from '../../src/domain/session-log';
import { Workspaces } from '../../src/domain/workspaces';
import { createServer } from '../../src/server';
import { EmbeddedSessionStore } from '../../src/stores/embedded-session-store';
import { RedisSessionStore } from '../../src/stores/redis-session-store';

/** `n` events: a system prompt, then turns of user / call / result / answer, an instruction row every 50 turns. */
const session = syntheticSession;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time<T>(fn: () => T): [number, T] {
  const t0 = process.hrtime.bigint();
  const v = fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, v];
}

async function timeAsync<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = process.hrtime.bigint();
  const v = await fn();
  return [Number(process.hrtime.bigint() - t0) / 1e6, v];
}

function rangesBench(): void {
  // Warm the JIT so the 1k row measures the algorithm, not compilation.
  for (let i = 0; i < 20; i++) computeCompressibleRanges(new SessionLog({ store: new EmbeddedSessionStore(new Database(':memory:')) }).viewOf(session(1_000)), 5);
  for (const n of [1_000, 10_000, 100_000]) {
    const events = session(n);
    const reps = n >= 100_000 ? 5 : 9;
    const build: number[] = [];
    const ranges: number[] = [];
    const warm: number[] = [];
    let count = 0;
    for (let r = 0; r < reps; r++) {
      // A fresh SessionLog per repetition: node facts are memoised per instance, so this
      // measures the cold projection (what a process pays the first time it sees a session).
      const log = new SessionLog({ store: new EmbeddedSessionStore(new Database(':memory:')) });
      const [tb, view] = time(() => log.viewOf(events));
      const [tr, rows] = time(() => computeCompressibleRanges(view, 5));
      // Warm: node facts already memoised (a process that has seen the session before).
      const [tw] = time(() => computeCompressibleRanges(buildView(events, events.length - 1, view.infoSource), 5));
      build.push(tb);
      ranges.push(tr);
      warm.push(tw);
      count = rows.length;
    }
    const msBuild = median(build);
    const msRanges = median(ranges);
    console.log(
      JSON.stringify({ bench: 'ranges', events: n, ranges: count, buildViewMs: +msBuild.toFixed(2), rangesMs: +msRanges.toFixed(2), warmRangesMs: +median(warm).toFixed(2), rangesUsPerEvent: +((msRanges * 1000) / n).toFixed(3) }),
    );
  }
}

async function recoveryBench(): Promise<void> {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is required for the recovery benchmark');
  const redis = new Redis(url);
  const prefix = `bench:sessions:${randomUUID()}:`;
  try {
    const events = session(2_000);
    const cold: number[] = [];
    const warm: number[] = [];
    for (let r = 0; r < 7; r++) {
      const key = { account: 'bench', user: 'u', sessionId: `s${r}` };
      const writer = new SessionLog({ store: new RedisSessionStore({ redis, keyPrefix: prefix }) });
      for (let i = 0; i < events.length; i += 500) await writer.appendEvents(key, { events: events.slice(i, i + 500) });
      // Cold: a replica that has never read the session (loads and parses 2,000 events).
      const coldLog = new SessionLog({ store: new RedisSessionStore({ redis, keyPrefix: prefix }) });
      const [tc, res] = await timeAsync(() => coldLog.recoverOverflow(key, { requestId: 'a', agentId: 'x', failure: { code: CONTEXT_WINDOW_EXCEEDED } }));
      if (res.reason !== 'compacted') throw new Error(`unexpected ${res.reason}`);
      cold.push(tc);
      // Warm: the same replica, cache up to date, a second agent's overflow.
      await coldLog.listCompressibleRanges(key);
      const [tw, res2] = await timeAsync(() => coldLog.recoverOverflow(key, { requestId: 'b', agentId: 'y', failure: { code: CONTEXT_WINDOW_EXCEEDED } }));
      if (res2.reason !== 'compacted') throw new Error(`unexpected ${res2.reason}`);
      warm.push(tw);
    }
    console.log(JSON.stringify({ bench: 'recover-overflow-redis', events: 2_000, coldMs: +median(cold).toFixed(2), warmMs: +median(warm).toFixed(2) }));
  } finally {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    await redis.quit();
  }
}

/**
 * RecoverOverflow through the RPC (client → gRPC → handler → domain → Redis Lua → back) on a
 * 2,000-event session. Cold: a freshly started server (channel already open) that has never
 * read the session. Warm: further agents' overflows on the same server, cache up to date.
 */
async function recoveryRpcBench(): Promise<void> {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is required for the recovery benchmark');
  const redis = new Redis(url);
  const prefix = `bench:sessions:${randomUUID()}:`;
  const log = pino({ level: 'silent' });
  const store = new RedisSessionStore({ redis, keyPrefix: prefix });
  try {
    const events = session(2_000);
    const cold: number[] = [];
    const warm: number[] = [];
    for (let r = 0; r < 7; r++) {
      const sessionId = `rpc${r}`;
      const key = { account: 'bench', user: 'u', sessionId };
      const writer = new SessionLog({ store });
      for (let i = 0; i < events.length; i += 500) await writer.appendEvents(key, { events: events.slice(i, i + 500) });
      const server = await startServer({
        domain: 'sessions',
        services: [createServer({ sessions: new SessionLog({ store }), workspaces: new Workspaces(store), log })],
        port: 0,
        log,
      });
      const client = connect(sessions.SessionsServiceClient, server.address);
      const identity = { accountId: 'bench', userId: 'u', role: 0, actorPeerId: '', workspace: '', requestId: '' };
      const recover = (requestId: string, agentId: string) =>
        callUnary(
          client.recoverOverflow.bind(client),
          sessions.RecoverOverflowRequest.fromPartial({ identity, sessionId, requestId, agentId, failure: { code: CONTEXT_WINDOW_EXCEEDED } }),
          Budget.ofMs(30_000),
          { domain: 'sessions' },
        );
      try {
        // Open the channel first: the cold number is the session's first load, not TCP + HTTP/2 setup.
        await callUnary(client.getActiveWorkspace.bind(client), sessions.GetActiveWorkspaceRequest.fromPartial({ identity }), Budget.ofMs(30_000), { domain: 'sessions' });
        const [tc, res] = await timeAsync(() => recover('a', 'x'));
        if (res.reason !== 'compacted') throw new Error(`unexpected ${res.reason}`);
        cold.push(tc);
        // Warm: further agents' overflows on the same server (cache current, code paths hot).
        for (let w = 0; w < 5; w++) {
          const [tw, res2] = await timeAsync(() => recover(`w${w}`, `agent-${w}`));
          if (res2.reason !== 'compacted') throw new Error(`unexpected ${res2.reason}`);
          warm.push(tw);
        }
      } finally {
        client.close();
        await server.shutdown();
      }
    }
    console.log(JSON.stringify({ bench: 'recover-overflow-redis-rpc', events: 2_000, coldMs: +median(cold).toFixed(2), warmMs: +median(warm).toFixed(2) }));
  } finally {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
    await redis.quit();
  }
}

async function main(): Promise<void> {
  rangesBench();
  await recoveryBench();
  await recoveryRpcBench();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
