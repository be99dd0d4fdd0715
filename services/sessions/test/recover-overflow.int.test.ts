import type Redis from 'ioredis';
import { SessionLog } from '../src/domain/session-log';
import { CONTEXT_WINDOW_EXCEEDED } from '../src/domain/recovery';
import { RedisSessionStore, sessionKeys } from '../src/stores/redis-session-store';
import { assistant, conversation, counterIds, KEY, user } from '../src/domain/__tests__/fixtures';
import { connectRedis, dropPrefix, testPrefix } from './redis-fixture';

let redis: Redis;
let prefix: string;

beforeAll(() => {
  redis = connectRedis();
});
afterAll(async () => {
  await redis.quit();
});
beforeEach(() => {
  prefix = testPrefix();
});
afterEach(async () => {
  await dropPrefix(redis, prefix);
});

/** A SessionLog as one service replica sees it: its own store object and projection cache. */
function replica(name: string, opts: { maxOverflowRetries?: number } = {}): SessionLog {
  return new SessionLog({ store: new RedisSessionStore({ redis, keyPrefix: prefix }), newId: counterIds(`${name}0000-0000-4000-8000-`), ...opts });
}

const overflow = (requestId: string, agentId = 'agent-1') => ({ requestId, agentId, failure: { code: CONTEXT_WINDOW_EXCEEDED }, route: { provider: 'p', model: 'm' } });

describe('SessionsService.RecoverOverflow on Redis', () => {
  it('SessionsService.RecoverOverflow - two concurrent calls on two replicas - exactly one block', async () => {
    const a = replica('aaaa');
    const b = replica('bbbb');
    await a.appendEvents(KEY, { events: conversation(12) });
    // Warm both caches so both compute from the same snapshot.
    await Promise.all([a.listCompressibleRanges(KEY), b.listCompressibleRanges(KEY)]);
    const [ra, rb] = await Promise.all([a.recoverOverflow(KEY, overflow('r-a')), b.recoverOverflow(KEY, overflow('r-b'))]);
    const status = await a.getStatus(KEY);
    expect(status.blocks).toHaveLength(1);
    // Overlapping, both answer retry with the one block; when one finishes before the other
    // reads the budget (a loaded machine serialises them), the other finds it spent.
    const winners = [ra, rb].filter((r) => r.action === 'retry');
    expect(winners.length).toBeGreaterThanOrEqual(1);
    for (const r of winners) expect(r.block!.blockId).toBe(status.blocks[0]!.blockId);
    for (const r of [ra, rb].filter((x) => x.action !== 'retry')) expect([r.action, r.reason]).toEqual(['surface_error', 'budget_spent']);
    expect(status.budgets).toEqual([{ agentId: 'agent-1', used: 1, max: 1 }]);
  });

  it('SessionsService.RecoverOverflow - five concurrent calls from different agents - exactly one block', async () => {
    const logs = ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee'].map((n) => replica(n));
    await logs[0]!.appendEvents(KEY, { events: conversation(12) });
    const results = await Promise.all(logs.map((l, i) => l.recoverOverflow(KEY, overflow(`r${i}`, `agent-${i}`))));
    expect((await logs[0]!.getStatus(KEY)).blocks).toHaveLength(1);
    expect(new Set(results.filter((r) => r.block).map((r) => r.block!.blockId)).size).toBe(1);
    const events = await redis.lrange(sessionKeys(KEY, prefix).log, 0, -1);
    expect(events.filter((e) => e.includes('"compaction/start"'))).toHaveLength(1);
    expect(events.filter((e) => e.includes('"compaction/end"'))).toHaveLength(1);
  });

  it('SessionsService.RecoverOverflow - budget lifecycle - retry, budget_spent with no writes, reset by progress and idle', async () => {
    const log = replica('aaaa');
    const k = sessionKeys(KEY, prefix);
    await log.appendEvents(KEY, { events: conversation(12) });
    expect((await log.recoverOverflow(KEY, overflow('r1'))).reason).toBe('compacted');
    const ttl = await redis.ttl(k.budget('agent-1'));
    expect(ttl).toBeGreaterThan(24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);
    const idemTtl = await redis.ttl(k.idem('r1'));
    expect(idemTtl).toBeGreaterThan(3600 - 60);
    expect(idemTtl).toBeLessThanOrEqual(3600);

    const len = await redis.llen(k.log);
    expect((await log.recoverOverflow(KEY, overflow('r2'))).reason).toBe('budget_spent');
    expect(await redis.llen(k.log)).toBe(len);

    await log.appendEvents(KEY, { agentId: 'agent-1', events: [assistant('progress'), user('and more'), ...conversation(3).slice(1)] });
    expect(await redis.exists(k.budget('agent-1'))).toBe(0);
    expect((await log.recoverOverflow(KEY, overflow('r3'))).reason).toBe('compacted');
    expect((await log.recoverOverflow(KEY, overflow('r4'))).reason).toBe('budget_spent');
    await log.reportAgentStatus(KEY, { agentId: 'agent-1', status: 'idle' });
    await log.appendEvents(KEY, { events: conversation(3).slice(1) });
    expect((await log.recoverOverflow(KEY, overflow('r5'))).reason).toBe('compacted');
    expect((await log.getStatus(KEY)).blocks).toHaveLength(3);
    // The same request id replays its first answer.
    expect(await log.recoverOverflow(KEY, overflow('r1'))).toMatchObject({ reason: 'compacted', budget: { used: 1, max: 1 } });
  });

  it('SessionsService.RecoverOverflow - maxOverflowRetries 0 - never writes', async () => {
    const log = replica('aaaa', { maxOverflowRetries: 0 });
    await log.appendEvents(KEY, { events: conversation(8) });
    const len = await redis.llen(sessionKeys(KEY, prefix).log);
    expect((await log.recoverOverflow(KEY, overflow('r1'))).reason).toBe('budget_spent');
    expect(await redis.llen(sessionKeys(KEY, prefix).log)).toBe(len);
  });

  it('SessionsService.RecoverOverflow - unknown session - NOT_FOUND', async () => {
    await expect(replica('aaaa').recoverOverflow(KEY, overflow('r1'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('SessionsService.AppendEvents - stale expected head - ABORTED with the current head', async () => {
    const log = replica('aaaa');
    await log.appendEvents(KEY, { events: [user('a'), assistant('b')] });
    await expect(log.appendEvents(KEY, { expectedHead: 0, events: [user('c')] })).rejects.toMatchObject({ code: 'ABORTED', head: 1, generation: 0 });
  });

  it('SessionsService.Compress - surface cache and ledger follow the log - projections agree', async () => {
    const a = replica('aaaa');
    const b = replica('bbbb');
    await a.appendEvents(KEY, { events: [...conversation(8), { type: 'assistant/message', content: [{ type: 'tool-call', callId: 'z', name: 'x' }] }] });
    await b.appendEvents(KEY, { events: [user('interrupt')] }); // prunes the unanswered call
    const res = await a.compress(KEY, { requestId: 'c1', author: 'model', ranges: [{ startSeq: 1, endSeq: 8, summary: 'first part' }] });
    expect(res.results[0]!.status).toBe('landed');
    await b.recoverOverflow(KEY, overflow('r1'));
    const store = new RedisSessionStore({ redis, keyPrefix: prefix });
    const projected = (await b.projectSurface(KEY)).messages.map((m) => m.seq);
    expect(await store.readSurface(KEY)).toEqual([...new Set(projected)]);
    const ledger = await store.readLedger(KEY);
    const status = await a.getStatus(KEY);
    expect(Object.keys(ledger).sort()).toEqual(status.blocks.map((x) => x.blockId).sort());
    expect((await a.projectSurface(KEY)).messages).toEqual((await b.projectSurface(KEY)).messages);
    // Every key of the session lives under one hash tag.
    const keys = await redis.keys(`${prefix}*`);
    expect(new Set(keys.map((x) => /\{[^}]*\}/.exec(x)![0])).size).toBe(1);
  });
});
