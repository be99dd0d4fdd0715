/**
 * LedgerStore contract (context-contract §7 storage side). Every adapter runs this suite:
 * Redis in `test/ledger-store.redis.int.test.ts`, SQLite in `inproc/sqlite-ledger-store.test.ts`.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseLedgerRecord, type LedgerKey, type LedgerStore } from '../ports/ledger-store';

/** What an adapter's test provides to the suite. */
export interface LedgerStoreHarness {
  /** The adapter under test. */
  store: LedgerStore;
  /** Make one ledger expire now, exactly as its TTL would. */
  expire(key: LedgerKey): Promise<void>;
  /** Release everything the harness created (keys, handles). */
  dispose(): Promise<void>;
}

/**
 * Raw records and whether §7's coercion calls them usable; the adapters' eviction must agree
 * with {@link parseLedgerRecord} on every one (the Redis adapter re-implements it in Lua).
 */
export const LEDGER_COERCION_CASES: ReadonlyArray<readonly [raw: string, usable: boolean]> = [
  ['{"turn": 3, "detail": "full"}', true],
  ['{"turn": "3", "detail": "full"}', true],
  ['{"turn": " 3 "}', true],
  ['{"turn": "+3"}', true],
  ['{"turn": "1_0"}', true],
  ['{"turn": 3.7}', true],
  ['{"turn": -0.5}', true],
  ['{"turn": true}', true],
  ['{"detail": "full"}', true],
  ['{}', true],
  ['{"turn": "x"}', false],
  ['{"turn": "3.5"}', false],
  ['{"turn": ""}', false],
  ['{"turn": "1__0"}', false],
  ['{"turn": "_1"}', false],
  ['{"turn": "1_"}', false],
  ['{"turn": null}', false],
  ['{"turn": [1]}', false],
  ['{"turn": {"n": 1}}', false],
  ['{"turn": 1e400}', false],
  ['{"turn": 0x10}', false],
  ['{"turn": NaN}', false],
  ['[1, 2]', false],
  ['[]', false],
  ['"turn"', false],
  ['7', false],
  ['null', false],
  ['not json', false],
  ['{"turn": 1} trailing', false],
  ['', false],
];

/**
 * Register the LedgerStore contract tests.
 * @param name adapter name shown in test titles
 * @param make builds a harness once for the file (each test uses its own session ids)
 */
export function describeLedgerStoreContract(name: string, make: () => Promise<LedgerStoreHarness>): void {
  describe(`LedgerStore contract: ${name}`, () => {
    let h: LedgerStoreHarness;
    let store: LedgerStore;
    beforeAll(async () => {
      h = await make();
      store = h.store;
    });
    afterAll(async () => {
      await h.store.close();
      await h.dispose();
    });

    const newKey = (over: Partial<LedgerKey> = {}): LedgerKey => ({
      account: 'acct',
      user: 'alice',
      sessionId: `s-${randomUUID()}`,
      ...over,
    });
    const turnsOf = async (key: LedgerKey): Promise<Record<string, number | null>> => {
      const { records } = await store.beginTurn(key);
      const out: Record<string, number | null> = {};
      for (const [uri, raw] of Object.entries(records)) out[uri] = parseLedgerRecord(raw)?.turn ?? null;
      return out;
    };

    it('starts a session without a ledger at clock 0, fresh, with no records', async () => {
      const t = await store.beginTurn(newKey());
      expect(t).toEqual({ turn: 0, fresh: true, records: {} });
    });

    it('advances the clock by one per beginTurn and reports the ledger as existing after the first', async () => {
      const key = newKey();
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push(await store.beginTurn(key));
      expect(seen.map((t) => t.turn)).toEqual([0, 1, 2, 3]);
      expect(seen.map((t) => t.fresh)).toEqual([true, false, false, false]);
    });

    it('keeps separate clocks per account, user and session, even when ids contain the separator', async () => {
      const sid = `s-${randomUUID()}`;
      const a = newKey({ account: 'a:b', user: 'c', sessionId: sid });
      const b = newKey({ account: 'a', user: 'b:c', sessionId: sid });
      const c = newKey({ account: 'a', user: 'b', sessionId: `c:${sid}` });
      await store.beginTurn(a);
      await store.beginTurn(a);
      expect((await store.beginTurn(b)).turn).toBe(0);
      expect((await store.beginTurn(c)).turn).toBe(0);
      expect((await store.beginTurn(a)).turn).toBe(2);
    });

    it('returns recorded entries as {turn, detail} JSON on the next beginTurn', async () => {
      const key = newKey();
      const t0 = await store.beginTurn(key);
      await store.record(key, t0.turn, 3, [
        { uri: 'viking://resources/a.md', detail: 'full' },
        { uri: 'viking://resources/b.md', detail: 'uri' },
      ], 500);
      const t1 = await store.beginTurn(key);
      expect(t1.turn).toBe(1);
      expect(Object.keys(t1.records).sort()).toEqual(['viking://resources/a.md', 'viking://resources/b.md']);
      expect(JSON.parse(t1.records['viking://resources/a.md']!)).toEqual({ turn: 0, detail: 'full' });
      expect(JSON.parse(t1.records['viking://resources/b.md']!)).toEqual({ turn: 0, detail: 'uri' });
    });

    it('overwrites the turn and detail of a URI recorded again', async () => {
      const key = newKey();
      await store.record(key, (await store.beginTurn(key)).turn, 5, [{ uri: 'u1', detail: 'abstract' }], 500);
      await store.beginTurn(key);
      await store.record(key, (await store.beginTurn(key)).turn, 5, [{ uri: 'u1', detail: 'overview' }], 500);
      const { records } = await store.beginTurn(key);
      expect(JSON.parse(records['u1']!)).toEqual({ turn: 2, detail: 'overview' });
    });

    it('evicts records older than turn − 4·dedupTurns and keeps the boundary', async () => {
      const key = newKey();
      for (let i = 0; i < 10; i++) await store.beginTurn(key);
      await store.putRaw(key, 'old', '{"turn": 1, "detail": "full"}');
      await store.putRaw(key, 'edge', '{"turn": 2, "detail": "full"}');
      await store.putRaw(key, 'mid', '{"turn": "6", "detail": "full"}');
      await store.record(key, 10, 2, [{ uri: 'now', detail: 'full' }], 500);
      expect(await turnsOf(key)).toEqual({ edge: 2, mid: 6, now: 10 });
    });

    it('drops malformed records and records ahead of the clock on the next write', async () => {
      const key = newKey();
      for (let i = 0; i < 3; i++) await store.beginTurn(key);
      await store.putRaw(key, 'bad-turn', '{"turn": "x"}');
      await store.putRaw(key, 'list', '[1, 2]');
      await store.putRaw(key, 'text', 'garbage');
      await store.putRaw(key, 'ahead', '{"turn": 99, "detail": "full"}');
      await store.putRaw(key, 'fine', '{"turn": 1, "detail": "abstract"}');
      const before = await store.beginTurn(key);
      expect(Object.keys(before.records).sort()).toEqual(['ahead', 'bad-turn', 'fine', 'list', 'text']);
      await store.record(key, before.turn, 5, [{ uri: 'served', detail: 'full' }], 500);
      expect(await turnsOf(key)).toEqual({ fine: 1, served: 3 });
    });

    it('agrees with parseLedgerRecord on which raw records are usable', async () => {
      const key = newKey();
      for (let i = 0; i < 12; i++) await store.beginTurn(key);
      LEDGER_COERCION_CASES.forEach(([raw, usable]) => expect(parseLedgerRecord(raw) !== null).toBe(usable));
      for (const [i, [raw]] of LEDGER_COERCION_CASES.entries()) await store.putRaw(key, `case-${i}`, raw);
      await store.record(key, 11, 50, [], 500);
      const { records } = await store.beginTurn(key);
      const kept = LEDGER_COERCION_CASES.flatMap(([, usable], i) => (usable ? [`case-${i}`] : []));
      expect(Object.keys(records).sort()).toEqual(kept.sort());
    });

    it('keeps the maxEntries records with the highest turn, first written winning ties', async () => {
      const key = newKey();
      for (let i = 0; i < 6; i++) await store.beginTurn(key);
      await store.putRaw(key, 't1', '{"turn": 1}');
      await store.putRaw(key, 't4-first', '{"turn": 4}');
      await store.putRaw(key, 't3', '{"turn": 3}');
      await store.putRaw(key, 't4-second', '{"turn": 4}');
      await store.putRaw(key, 't4-third', '{"turn": 4}');
      await store.record(key, 5, 10, [{ uri: 't5', detail: 'full' }], 3);
      expect(await turnsOf(key)).toEqual({ t5: 5, 't4-first': 4, 't4-second': 4 });
    });

    it('keeps a record its original write position when it is upserted', async () => {
      const key = newKey();
      for (let i = 0; i < 3; i++) await store.beginTurn(key);
      await store.putRaw(key, 'a', '{"turn": 1}');
      await store.putRaw(key, 'b', '{"turn": 1}');
      await store.putRaw(key, 'a', '{"turn": 2}');
      await store.putRaw(key, 'a', '{"turn": 1}');
      await store.record(key, 2, 10, [], 1);
      expect(await turnsOf(key)).toEqual({ a: 1 });
    });

    it('raises the clock past a turn recorded into a missing ledger', async () => {
      const key = newKey();
      await store.record(key, 5, 3, [{ uri: 'u', detail: 'full' }], 500);
      const t = await store.beginTurn(key);
      expect(t.turn).toBe(6);
      expect(t.fresh).toBe(false);
      expect(parseLedgerRecord(t.records['u']!)?.turn).toBe(5);
    });

    it('creates a ledger with putRaw and returns the raw text unchanged', async () => {
      const key = newKey();
      await store.putRaw(key, 'viking://x', ' {"turn" : "2" } ');
      const t = await store.beginTurn(key);
      expect(t).toEqual({ turn: 0, fresh: false, records: { 'viking://x': ' {"turn" : "2" } ' } });
    });

    it('forgets a ledger once it expires', async () => {
      const key = newKey();
      await store.beginTurn(key);
      await store.record(key, 0, 3, [{ uri: 'u', detail: 'full' }], 500);
      await h.expire(key);
      expect(await store.beginTurn(key)).toEqual({ turn: 0, fresh: true, records: {} });
    });

    it('hands out distinct clocks and loses no record under concurrent requests of one session', async () => {
      const key = newKey();
      const n = 24;
      const turns = await Promise.all(Array.from({ length: n }, () => store.beginTurn(key)));
      expect(turns.map((t) => t.turn).sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      // Later turns write first, so an earlier request's write must not evict later records.
      const order = [...turns].sort((a, b) => b.turn - a.turn);
      await Promise.all(
        order.map((t) => store.record(key, t.turn, 100, [{ uri: `a${t.turn}`, detail: 'full' }, { uri: `b${t.turn}`, detail: 'abstract' }], 500)),
      );
      const final = await store.beginTurn(key);
      expect(final.turn).toBe(n);
      const expected: Record<string, number> = {};
      for (let i = 0; i < n; i++) Object.assign(expected, { [`a${i}`]: i, [`b${i}`]: i });
      const got: Record<string, number | null> = {};
      for (const [uri, raw] of Object.entries(final.records)) got[uri] = parseLedgerRecord(raw)?.turn ?? null;
      expect(got).toEqual(expected);
    });

    it('keeps a later request\'s records when an earlier request of the session writes last', async () => {
      const key = newKey();
      const a = await store.beginTurn(key);
      const b = await store.beginTurn(key);
      await store.record(key, b.turn, 1, [{ uri: 'from-b', detail: 'full' }], 500);
      await store.record(key, a.turn, 1, [{ uri: 'from-a', detail: 'full' }], 500);
      expect(await turnsOf(key)).toEqual({ 'from-a': 0, 'from-b': 1 });
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBe(true);
    });
  });
}
