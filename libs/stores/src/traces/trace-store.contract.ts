/**
 * TraceStore contract. Every adapter runs this suite: SQLite in `./sqlite-trace-store.test.ts`,
 * NATS JetStream in `test/trace-store.nats.int.test.ts`. Each test uses fresh ids.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InvalidTraceIdError, type TraceRow, type TraceStore } from './trace-store';

/** What an adapter's test provides to the suite. */
export interface TraceStoreHarness {
  /** The store under test. */
  store: TraceStore;
  /** Release what the harness created (streams, handles). */
  dispose(): Promise<void>;
}

const freshId = () => `t_${randomUUID().replace(/-/g, '')}`;

function row(over: Partial<TraceRow> = {}): TraceRow {
  return {
    id: freshId(),
    account: 'acme',
    createdAt: Date.now(),
    data: { query: 'rollback', stages: [{ stage: 'gather', ms: 3.5 }], dropped: [{ id: 'p2', reason: 'token_budget' }], nested: { n: null, ok: true } },
    ...over,
  };
}

/**
 * Register the TraceStore contract tests.
 * @param name adapter name shown in test titles
 * @param make builds a harness once for the file
 */
export function describeTraceStoreContract(name: string, make: () => Promise<TraceStoreHarness>): void {
  describe(`TraceStore contract: ${name}`, () => {
    let h: TraceStoreHarness;
    beforeAll(async () => {
      h = await make();
    }, 30_000);
    afterAll(async () => {
      await h.store.close();
      await h.dispose();
    }, 30_000);

    it('reads back exactly the row it wrote', async () => {
      const r = row();
      await h.store.append(r);
      expect(await h.store.get(r.id, 'acme')).toEqual(r);
    });

    it('answers null for an id never written', async () => {
      expect(await h.store.get(freshId(), 'acme')).toBeNull();
    });

    it('never returns a row to another account', async () => {
      const r = row({ account: 'acme' });
      await h.store.append(r);
      expect(await h.store.get(r.id, 'globex')).toBeNull();
      expect((await h.store.get(r.id, 'acme'))?.id).toBe(r.id);
    });

    it('keeps one row per id when the same id is written twice', async () => {
      const r = row();
      await h.store.append(r);
      await h.store.append({ ...r, data: { query: 'second' } });
      const got = await h.store.get(r.id, 'acme');
      expect(got?.data).toEqual(r.data);
    });

    it('keeps rows apart by id', async () => {
      const a = row({ data: { query: 'a' } });
      const b = row({ data: { query: 'b' } });
      await h.store.append(a);
      await h.store.append(b);
      expect((await h.store.get(a.id, 'acme'))?.data).toEqual({ query: 'a' });
      expect((await h.store.get(b.id, 'acme'))?.data).toEqual({ query: 'b' });
    });

    it('refuses malformed ids on write and read', async () => {
      await expect(h.store.append(row({ id: 'has space' }))).rejects.toBeInstanceOf(InvalidTraceIdError);
      await expect(h.store.append(row({ id: 'a.b' }))).rejects.toBeInstanceOf(InvalidTraceIdError);
      await expect(h.store.get('', 'acme')).rejects.toBeInstanceOf(InvalidTraceIdError);
      await expect(h.store.get('x'.repeat(65), 'acme')).rejects.toBeInstanceOf(InvalidTraceIdError);
    });

    it('answers its readiness probe', async () => {
      expect(await h.store.ping()).toBe(true);
    });
  });
}
