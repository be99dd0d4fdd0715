import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { type LedgerKey } from '@ctxmesh/stores';
import { beginTurn, dedupStats, recordServed } from '../src/domain/ledger';
import { createLedgerStore } from '../src/stores/ledger-store';

const REDIS_URL = process.env.REDIS_URL;
if (!REDIS_URL) throw new Error('REDIS_URL must point at a real Redis for this test');

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const prefix = `test:${randomUUID()}:ledger:`;
const store = createLedgerStore({ kind: 'redis', redis, keyPrefix: prefix, ttlMs: 60_000 });
const key = (): LedgerKey => ({ account: 'acme', user: 'alice', sessionId: `cc-${randomUUID()}` });

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await redis.quit();
});

describe('ledger domain on Redis', () => {
  it('LedgerService.BeginTurn - entry served at turn T - held back from the next dedup_turns − 1 requests', async () => {
    const k = key();
    const served = { uri: 'viking://resources/deploy.md', detail: 'full' };
    const cooled: string[][] = [];
    const statuses: string[] = [];
    for (let i = 0; i < 5; i++) {
      const begun = await beginTurn(store, { key: k, dedupTurns: 3 });
      cooled.push(begun.cooledUris);
      statuses.push(begun.status);
      const entries = i === 0 || i === 3 ? [served, { uri: 'viking://resources/bare.md', detail: 'uri' }] : [];
      await recordServed(store, { key: k, turn: begun.turn!, dedupTurns: 3, entries });
    }
    expect(statuses).toEqual(['new', 'ok', 'ok', 'ok', 'ok']);
    expect(cooled).toEqual([[], [served.uri], [served.uri], [], [served.uri]]);
  });

  it('LedgerService.RecordServed - no_relevant rewrite - nothing recorded', async () => {
    const k = key();
    const begun = await beginTurn(store, { key: k, dedupTurns: 3 });
    await recordServed(store, { key: k, turn: begun.turn!, dedupTurns: 3, entries: [{ uri: 'u', detail: 'full' }], rewrite: 'no_relevant' });
    expect(await beginTurn(store, { key: k, dedupTurns: 3 })).toEqual({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
  });

  it('LedgerService.BeginTurn - concurrent requests of one session - distinct clocks and every record kept', async () => {
    const k = key();
    const begun = await Promise.all(Array.from({ length: 12 }, () => beginTurn(store, { key: k, dedupTurns: 50 })));
    expect(begun.map((b) => b.turn).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 12 }, (_, i) => i));
    await Promise.all(begun.map((b) => recordServed(store, { key: k, turn: b.turn!, dedupTurns: 50, entries: [{ uri: `doc-${b.turn}`, detail: 'abstract' }] })));
    const next = await beginTurn(store, { key: k, dedupTurns: 50 });
    expect(next.turn).toBe(12);
    expect(next.cooledUris).toEqual(Array.from({ length: 12 }, (_, i) => `doc-${i}`).sort());
  });

  it('LedgerService.RecordServed - malformed records stored - never cooled and dropped on the next write', async () => {
    const k = key();
    await beginTurn(store, { key: k, dedupTurns: 4 });
    await store.putRaw(k, 'bad', '{"turn": "x"}');
    await store.putRaw(k, 'null-turn', '{"turn": null}');
    await store.putRaw(k, 'good', '{"turn": "0", "detail": "overview"}');
    const begun = await beginTurn(store, { key: k, dedupTurns: 4 });
    expect(begun.cooledUris).toEqual(['good']);
    await recordServed(store, { key: k, turn: begun.turn!, dedupTurns: 4, entries: [{ uri: 'new', detail: 'full' }] });
    const fields = Object.keys(await redis.hgetall(`${prefix}acme:alice:${k.sessionId}`)).sort();
    expect(fields).toEqual(['clock', 'ord', 'u:good', 'u:new']);
  });

  it('LedgerService.BeginTurn - Redis unreachable - status unavailable and stats say so', async () => {
    const down = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    const broken = createLedgerStore({ kind: 'redis', redis: down, keyPrefix: prefix });
    const k = key();
    const begun = await beginTurn(broken, { key: k, dedupTurns: 5 });
    expect(begun).toEqual({ status: 'unavailable', turn: null, cooledUris: [], cooledTurns: [] });
    expect(dedupStats(5, begun)).toEqual({ turns: 5, status: 'unavailable', cooled: 0, turn: null });
    const written = await recordServed(broken, { key: k, turn: 0, dedupTurns: 5, entries: [{ uri: 'u', detail: 'full' }] });
    expect(dedupStats(5, { status: 'ok', turn: 0, cooledUris: [], cooledTurns: [] }, written)).toEqual({ turns: 5, status: 'write_failed', cooled: 0, turn: 0 });
    down.disconnect();
  });
});
