/**
 * The SessionStore contract suite, run against every adapter (embedded as a unit test, Redis
 * as an integration test against REDIS_URL).
 */
import type { SessionKey, SessionMutation, SessionStore } from '@ctxmesh/stores';

/** What an adapter's test file provides. */
export interface ContractHarness {
  /** A fresh store over an empty namespace. */
  make(): Promise<SessionStore>;
  /** Release what `make` created (keys, connections). */
  cleanup(store: SessionStore): Promise<void>;
  /** Remaining time to live of a budget or idempotency record, in seconds. */
  ttlSeconds(store: SessionStore, key: SessionKey, kind: 'budget' | 'idem', id: string): Promise<number>;
}

const KEY: SessionKey = { account: 'acct', user: 'u1', sessionId: 'sess-1' };
const OTHER: SessionKey = { account: 'acct', user: 'u1', sessionId: 'sess-2' };
const CREATE = { estimatorId: 'ctxmesh-claim-v1', createdAt: 1_700_000_000_123, epoch: 'epoch-1' };

const ev = (i: number) => JSON.stringify({ type: 'user/message', content: [{ type: 'text', text: `m${i} — ünïcödé 你好` }] });

/** A first commit creating a session with `n` pushed events. */
function createMutation(n: number): SessionMutation {
  const events = Array.from({ length: n }, (_, i) => ev(i));
  return {
    expect: { head: -1, generation: 0 },
    events,
    surfaceOps: events.map((_, i) => ({ op: 'push' as const, seq: i })),
    generation: 0,
    create: CREATE,
  };
}

/** Register the contract tests for one adapter. */
export function describeSessionStoreContract(name: string, h: ContractHarness): void {
  describe(`SessionStore contract: ${name}`, () => {
    let store: SessionStore;
    beforeEach(async () => {
      store = await h.make();
    });
    afterEach(async () => {
      await h.cleanup(store);
    });

    it('reports an unknown session as null and empty', async () => {
      expect(await store.snapshot(KEY, -1)).toBeNull();
      expect(await store.readSurface(KEY)).toEqual([]);
      expect(await store.readLedger(KEY)).toEqual({});
      expect(await store.readBudget(KEY, 'a')).toBeNull();
      expect(await store.listBudgets(KEY)).toEqual([]);
      expect(await store.getIdempotent(KEY, 'r')).toBeNull();
      expect(await store.ping()).toBe(true);
    });

    it('creates a session on the first commit and returns the exact bytes', async () => {
      const m = createMutation(3);
      expect(await store.commit(KEY, m)).toEqual({ status: 'ok', head: 2, generation: 0 });
      const snap = await store.snapshot(KEY, -1);
      expect(snap?.meta).toEqual({ head: 2, generation: 0, estimatorId: CREATE.estimatorId, createdAt: CREATE.createdAt, epoch: CREATE.epoch });
      expect(snap?.events).toEqual(m.events);
      expect(await store.readSurface(KEY)).toEqual([0, 1, 2]);
    });

    it('creates an empty session (no events) that a later append extends', async () => {
      expect(await store.commit(KEY, createMutation(0))).toEqual({ status: 'ok', head: -1, generation: 0 });
      const snap = await store.snapshot(KEY, -1);
      expect(snap).toEqual({ meta: { head: -1, generation: 0, estimatorId: CREATE.estimatorId, createdAt: CREATE.createdAt, epoch: CREATE.epoch }, events: [] });
      // A racing second creation matches the expectation, so it lands as a no-op that keeps
      // the first metadata: the epoch tells the racers apart.
      expect(await store.commit(KEY, { ...createMutation(0), create: { ...CREATE, epoch: 'epoch-2' } })).toEqual({ status: 'ok', head: -1, generation: 0 });
      expect((await store.snapshot(KEY, -1))?.meta.epoch).toBe(CREATE.epoch);
      const { create: _omit, ...append } = createMutation(2);
      expect(await store.commit(KEY, append)).toEqual({ status: 'ok', head: 1, generation: 0 });
      expect(await store.readSurface(KEY)).toEqual([0, 1]);
    });

    it('refuses to create a session without create metadata', async () => {
      const { create: _omit, ...m } = createMutation(1);
      expect(await store.commit(KEY, m)).toEqual({ status: 'stale', head: -1, generation: 0 });
      expect(await store.snapshot(KEY, -1)).toBeNull();
    });

    it('reads only the events after afterSeq', async () => {
      const m = createMutation(5);
      await store.commit(KEY, m);
      const snap = await store.snapshot(KEY, 2);
      expect(snap?.meta.head).toBe(4);
      expect(snap?.events).toEqual(m.events.slice(3));
      expect((await store.snapshot(KEY, 4))?.events).toEqual([]);
    });

    it('answers stale with the current head and generation and writes nothing', async () => {
      await store.commit(KEY, createMutation(2));
      const res = await store.commit(KEY, {
        expect: { head: 0, generation: 0 },
        events: [ev(9)],
        surfaceOps: [{ op: 'push', seq: 1 }],
        generation: 0,
        ledger: { b: '{}' },
        budgetCharge: { agentId: 'a', max: 1, ttlSeconds: 60 },
        idempotency: { requestId: 'r1', value: 'v', ttlSeconds: 60 },
      });
      expect(res).toEqual({ status: 'stale', head: 1, generation: 0 });
      expect((await store.snapshot(KEY, -1))?.events).toHaveLength(2);
      expect(await store.readLedger(KEY)).toEqual({});
      expect(await store.readBudget(KEY, 'a')).toBeNull();
      expect(await store.getIdempotent(KEY, 'r1')).toBeNull();
    });

    it('also compares the generation', async () => {
      await store.commit(KEY, createMutation(2));
      const res = await store.commit(KEY, { expect: { head: 1, generation: 7 }, events: [ev(2)], surfaceOps: [], generation: 7 });
      expect(res).toEqual({ status: 'stale', head: 1, generation: 0 });
    });

    it('splices the surface cache positionally and bumps the generation', async () => {
      await store.commit(KEY, createMutation(5));
      const res = await store.commit(KEY, {
        expect: { head: 4, generation: 0 },
        events: [ev(5), ev(6)],
        surfaceOps: [
          { op: 'replace', startSeq: 1, endSeq: 3, seq: 5, count: 3 },
          { op: 'push', seq: 6 },
        ],
        generation: 1,
        ledger: { 'block-1': '{"blockId":"block-1"}' },
      });
      expect(res).toEqual({ status: 'ok', head: 6, generation: 1 });
      expect(await store.readSurface(KEY)).toEqual([0, 5, 4, 6]);
      expect(await store.readLedger(KEY)).toEqual({ 'block-1': '{"blockId":"block-1"}' });
      expect((await store.snapshot(KEY, -1))?.meta.generation).toBe(1);
    });

    it('fails a replace that does not match the surface cache without writing anything', async () => {
      await store.commit(KEY, createMutation(4));
      await expect(
        store.commit(KEY, {
          expect: { head: 3, generation: 0 },
          events: [ev(4)],
          surfaceOps: [{ op: 'replace', startSeq: 1, endSeq: 2, seq: 4, count: 3 }],
          generation: 1,
        }),
      ).rejects.toThrow(/does not match the surface/);
      const snap = await store.snapshot(KEY, -1);
      expect(snap?.meta).toMatchObject({ head: 3, generation: 0 });
      expect(snap?.events).toHaveLength(4);
      expect(await store.readSurface(KEY)).toEqual([0, 1, 2, 3]);
    });

    it('charges a budget atomically and refuses a spent one', async () => {
      await store.commit(KEY, createMutation(1));
      const charge = (head: number, gen: number) =>
        store.commit(KEY, {
          expect: { head, generation: gen },
          events: [ev(head + 1)],
          surfaceOps: [{ op: 'push', seq: head + 1 }],
          generation: gen,
          budgetCharge: { agentId: 'agent-a', max: 2, ttlSeconds: 86400 },
        });
      expect(await charge(0, 0)).toMatchObject({ status: 'ok' });
      expect(await store.readBudget(KEY, 'agent-a')).toEqual({ agentId: 'agent-a', used: 1, max: 2, lastGeneration: 0 });
      expect(await charge(1, 0)).toMatchObject({ status: 'ok' });
      expect(await charge(2, 0)).toEqual({ status: 'budget_spent', used: 2 });
      expect((await store.snapshot(KEY, -1))?.meta.head).toBe(2);
      const ttl = await h.ttlSeconds(store, KEY, 'budget', 'agent-a');
      expect(ttl).toBeGreaterThan(86400 - 120);
      expect(ttl).toBeLessThanOrEqual(86400);
    });

    it('lists, resets in a commit, and resets alone', async () => {
      await store.commit(KEY, createMutation(1));
      let head = 0;
      for (const agent of ['b', 'a', 'c']) {
        await store.commit(KEY, {
          expect: { head, generation: 0 },
          events: [ev(head + 1)],
          surfaceOps: [],
          generation: 0,
          budgetCharge: { agentId: agent, max: 5, ttlSeconds: 60 },
        });
        head++;
      }
      expect((await store.listBudgets(KEY)).map((b) => b.agentId)).toEqual(['a', 'b', 'c']);
      await store.commit(KEY, { expect: { head, generation: 0 }, events: [ev(9)], surfaceOps: [], generation: 0, budgetResets: ['b'] });
      expect(await store.readBudget(KEY, 'b')).toBeNull();
      await store.resetBudget(KEY, 'a');
      await store.resetBudget(KEY, 'never-charged');
      expect((await store.listBudgets(KEY)).map((b) => b.agentId)).toEqual(['c']);
    });

    it('writes an idempotency record with a mutation and refuses a duplicate', async () => {
      await store.commit(KEY, createMutation(1));
      const m: SessionMutation = {
        expect: { head: 0, generation: 0 },
        events: [ev(1)],
        surfaceOps: [{ op: 'push', seq: 1 }],
        generation: 0,
        idempotency: { requestId: 'req-1', value: '{"first":true}', ttlSeconds: 3600 },
      };
      expect(await store.commit(KEY, m)).toMatchObject({ status: 'ok' });
      expect(await store.getIdempotent(KEY, 'req-1')).toBe('{"first":true}');
      const again = await store.commit(KEY, { ...m, expect: { head: 1, generation: 0 }, idempotency: { ...m.idempotency!, value: 'x' } });
      expect(again).toEqual({ status: 'duplicate', value: '{"first":true}' });
      expect((await store.snapshot(KEY, -1))?.meta.head).toBe(1);
      const ttl = await h.ttlSeconds(store, KEY, 'idem', 'req-1');
      expect(ttl).toBeGreaterThan(3600 - 120);
      expect(ttl).toBeLessThanOrEqual(3600);
    });

    it('puts a standalone idempotency record only once', async () => {
      expect(await store.putIdempotent(KEY, { requestId: 'r', value: 'one', ttlSeconds: 3600 })).toBeNull();
      expect(await store.putIdempotent(KEY, { requestId: 'r', value: 'two', ttlSeconds: 3600 })).toBe('one');
      expect(await store.getIdempotent(KEY, 'r')).toBe('one');
    });

    it('lets exactly one of two concurrent commits with the same expectation land', async () => {
      await store.commit(KEY, createMutation(1));
      const mk = (i: number): SessionMutation => ({
        expect: { head: 0, generation: 0 },
        events: [ev(100 + i)],
        surfaceOps: [{ op: 'push', seq: 1 }],
        generation: 0,
      });
      const results = await Promise.all([store.commit(KEY, mk(1)), store.commit(KEY, mk(2))]);
      expect(results.filter((r) => r.status === 'ok')).toHaveLength(1);
      expect(results.filter((r) => r.status === 'stale')).toHaveLength(1);
      expect((await store.snapshot(KEY, -1))?.events).toHaveLength(2);
    });

    it('keeps sessions apart, including ids that contain separators', async () => {
      await store.commit(KEY, createMutation(2));
      await store.commit(OTHER, createMutation(1));
      expect((await store.snapshot(KEY, -1))?.meta.head).toBe(1);
      expect((await store.snapshot(OTHER, -1))?.meta.head).toBe(0);
      const k1: SessionKey = { account: 'a:b', user: 'c', sessionId: 'd' };
      const k2: SessionKey = { account: 'a', user: 'b:c', sessionId: 'd' };
      await store.commit(k1, createMutation(3));
      expect(await store.snapshot(k2, -1)).toBeNull();
      const k3: SessionKey = { account: 'x{y}', user: 'u', sessionId: 's}{' };
      await store.commit(k3, createMutation(1));
      expect((await store.snapshot(k3, -1))?.meta.head).toBe(0);
    });
  });
}
