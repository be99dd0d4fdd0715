import type { LedgerEntry, LedgerKey, LedgerStore, LedgerTurn } from '@ctxmesh/stores';
import {
  beginTurn,
  cooledUris,
  dedupStats,
  LedgerRequestError,
  recordServed,
  type BeginTurnOutcome,
  type LedgerLog,
} from './ledger';

/** Sequential in-memory store with the port's read/clock semantics (eviction is the adapters' job). */
class MemoryStore implements LedgerStore {
  readonly clocks = new Map<string, number>();
  readonly data = new Map<string, Map<string, string>>();
  readonly writes: Array<{ turn: number; dedupTurns: number; entries: LedgerEntry[]; max: number }> = [];
  failBegin: Error | null = null;
  failRecord: Error | null = null;
  hang = false;

  private id(k: LedgerKey): string {
    return JSON.stringify([k.account, k.user, k.sessionId]);
  }

  async beginTurn(key: LedgerKey): Promise<LedgerTurn> {
    if (this.hang) return new Promise<LedgerTurn>(() => undefined);
    if (this.failBegin) throw this.failBegin;
    const id = this.id(key);
    const fresh = !this.clocks.has(id);
    const turn = this.clocks.get(id) ?? 0;
    this.clocks.set(id, turn + 1);
    const records = Object.create(null) as Record<string, string>;
    for (const [uri, raw] of this.data.get(id) ?? []) records[uri] = raw;
    return { turn, fresh, records };
  }

  async record(key: LedgerKey, turn: number, dedupTurns: number, entries: LedgerEntry[], max: number): Promise<void> {
    if (this.failRecord) throw this.failRecord;
    this.writes.push({ turn, dedupTurns, entries, max });
    const id = this.id(key);
    const m = this.data.get(id) ?? new Map<string, string>();
    for (const e of entries) m.set(e.uri, JSON.stringify({ turn, detail: e.detail }));
    this.data.set(id, m);
    this.clocks.set(id, Math.max(this.clocks.get(id) ?? 0, turn + 1));
  }

  async putRaw(key: LedgerKey, uri: string, raw: string): Promise<void> {
    const id = this.id(key);
    const m = this.data.get(id) ?? new Map<string, string>();
    m.set(uri, raw);
    this.data.set(id, m);
    if (!this.clocks.has(id)) this.clocks.set(id, 0);
  }

  async ping(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {}
}

const key: LedgerKey = { account: 'acme', user: 'alice', sessionId: 'cc-s1' };

/** One context request: begin, then record what it "returned". */
async function request(store: LedgerStore, dedupTurns: number, served: LedgerEntry[]): Promise<BeginTurnOutcome> {
  const begun = await beginTurn(store, { key, dedupTurns });
  if (begun.turn !== null) await recordServed(store, { key, turn: begun.turn, dedupTurns, entries: served });
  return begun;
}

describe('cooledUris', () => {
  const records = (m: Record<string, string>) => Object.assign(Object.create(null) as Record<string, string>, m);

  it('cools usable records served less than dedupTurns requests ago and not ahead of the clock', () => {
    const got = cooledUris(
      records({
        fresh: '{"turn": 10, "detail": "full"}',
        last: '{"turn": 8, "detail": "abstract"}',
        expired: '{"turn": 7, "detail": "full"}',
        ahead: '{"turn": 11, "detail": "full"}',
        bare: '{"turn": 10, "detail": "uri"}',
        text: '{"turn": "9", "detail": "overview"}',
        float: '{"turn": 9.7}',
        noturn: '{"detail": "full"}',
        bad: '{"turn": "x"}',
        list: '[10]',
        str: '"full"',
      }),
      10,
      3,
    );
    expect(got).toEqual(['float', 'fresh', 'last', 'text']);
  });

  it('cools a record with no turn only while clock < dedupTurns', () => {
    expect(cooledUris(records({ u: '{}' }), 2, 3)).toEqual(['u']);
    expect(cooledUris(records({ u: '{}' }), 3, 3)).toEqual([]);
  });

  it('cools nothing when dedupTurns is 0', () => {
    expect(cooledUris(records({ u: '{"turn": 5, "detail": "full"}' }), 5, 0)).toEqual([]);
  });
});

describe('beginTurn', () => {
  it('reports new for a session without a ledger, then ok with the clock counting requests', async () => {
    const store = new MemoryStore();
    const first = await beginTurn(store, { key, dedupTurns: 3 });
    const second = await beginTurn(store, { key, dedupTurns: 3 });
    expect(first).toEqual({ status: 'new', turn: 0, cooledUris: [], cooledTurns: [] });
    expect(second).toEqual({ status: 'ok', turn: 1, cooledUris: [], cooledTurns: [] });
  });

  it('reports off with dedupTurns 0 but still advances the clock', async () => {
    const store = new MemoryStore();
    await store.putRaw(key, 'viking://resources/a.md', '{"turn": 0, "detail": "full"}');
    expect(await beginTurn(store, { key, dedupTurns: 0 })).toEqual({ status: 'off', turn: 0, cooledUris: [], cooledTurns: [] });
    expect((await beginTurn(store, { key, dedupTurns: 5 })).turn).toBe(1);
  });

  it('degrades to unavailable when the store fails, and logs why', async () => {
    const store = new MemoryStore();
    store.failBegin = new Error('ECONNREFUSED');
    const warnings: string[] = [];
    const log: LedgerLog = { warn: (_o, msg) => warnings.push(msg) };
    expect(await beginTurn(store, { key, dedupTurns: 5 }, { log })).toEqual({ status: 'unavailable', turn: null, cooledUris: [], cooledTurns: [] });
    expect(await beginTurn(store, { key, dedupTurns: 0 }, { log })).toEqual({ status: 'off', turn: null, cooledUris: [], cooledTurns: [] });
    expect(warnings).toHaveLength(2);
  });

  it('degrades to unavailable when the signal fires before a hanging store answers', async () => {
    const store = new MemoryStore();
    store.hang = true;
    const ctl = new AbortController();
    const pending = beginTurn(store, { key, dedupTurns: 5 }, { signal: ctl.signal });
    ctl.abort(new Error('deadline'));
    await expect(pending).resolves.toEqual({ status: 'unavailable', turn: null, cooledUris: [], cooledTurns: [] });
  });

  it('rejects an empty session id and dedupTurns outside 0..100', async () => {
    const store = new MemoryStore();
    await expect(beginTurn(store, { key: { ...key, sessionId: ' ' }, dedupTurns: 1 })).rejects.toBeInstanceOf(LedgerRequestError);
    await expect(beginTurn(store, { key, dedupTurns: 101 })).rejects.toThrow(/dedup_turns/);
    await expect(beginTurn(store, { key, dedupTurns: 1.5 })).rejects.toThrow(/dedup_turns/);
    await expect(beginTurn(store, { key, dedupTurns: -1 })).rejects.toMatchObject({ name: 'LedgerRequestError', field: 'dedup_turns' });
    expect(store.clocks.size).toBe(0);
  });
});

describe('recordServed', () => {
  const a = { uri: 'viking://resources/a.md', detail: 'full' };
  const b = { uri: 'viking://resources/b.md', detail: 'uri' };

  it('holds an entry served at turn T back from the next dedupTurns − 1 requests', async () => {
    const store = new MemoryStore();
    await request(store, 3, [a]);
    const cooledAt = [];
    for (let i = 1; i <= 4; i++) cooledAt.push((await request(store, 3, [])).cooledUris);
    expect(cooledAt).toEqual([[a.uri], [a.uri], [], []]);
  });

  it('counts requests with dedupTurns 0 on the clock', async () => {
    const store = new MemoryStore();
    await request(store, 3, [a]);
    await request(store, 0, [b]);
    expect((await request(store, 3, [])).cooledUris).toEqual([a.uri]);
    expect((await request(store, 3, [])).cooledUris).toEqual([]);
  });

  it('records uri-tier entries without ever cooling them', async () => {
    const store = new MemoryStore();
    await request(store, 5, [a, b]);
    expect(store.writes[0]!.entries).toEqual([a, b]);
    expect((await request(store, 5, [])).cooledUris).toEqual([a.uri]);
  });

  it('writes {turn, detail} with the 500-entry cap and counts distinct URIs', async () => {
    const store = new MemoryStore();
    const got = await recordServed(store, { key, turn: 4, dedupTurns: 2, entries: [a, b, { ...a, detail: 'overview' }] });
    expect(got).toEqual({ status: 'ok', recorded: 2 });
    expect(store.writes).toEqual([{ turn: 4, dedupTurns: 2, entries: [a, b, { ...a, detail: 'overview' }], max: 500 }]);
  });

  it('writes nothing for no_relevant, for no entries, or with dedupTurns 0', async () => {
    const store = new MemoryStore();
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 3, entries: [a], rewrite: 'no_relevant' })).toEqual({ status: 'skipped', recorded: 0 });
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 3, entries: [] })).toEqual({ status: 'skipped', recorded: 0 });
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 0, entries: [a] })).toEqual({ status: 'skipped', recorded: 0 });
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 3, entries: [a], rewrite: 'ok' })).toEqual({ status: 'ok', recorded: 1 });
    expect(store.writes).toHaveLength(1);
  });

  it('reports write_failed when the store fails or the signal fires first', async () => {
    const store = new MemoryStore();
    store.failRecord = new Error('READONLY');
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 3, entries: [a] })).toEqual({ status: 'write_failed', recorded: 0 });
    const ctl = new AbortController();
    ctl.abort();
    store.failRecord = null;
    expect(await recordServed(store, { key, turn: 0, dedupTurns: 3, entries: [a] }, { signal: ctl.signal })).toEqual({ status: 'write_failed', recorded: 0 });
    expect(store.writes).toHaveLength(0);
  });

  it('rejects a negative or fractional turn and an entry without a URI', async () => {
    const store = new MemoryStore();
    await expect(recordServed(store, { key, turn: -1, dedupTurns: 3, entries: [a] })).rejects.toMatchObject({ field: 'turn' });
    await expect(recordServed(store, { key, turn: 1.5, dedupTurns: 3, entries: [a] })).rejects.toMatchObject({ field: 'turn' });
    await expect(recordServed(store, { key, turn: 1, dedupTurns: 3, entries: [{ uri: '', detail: 'full' }] })).rejects.toMatchObject({ field: 'entries' });
  });
});

describe('dedupStats', () => {
  const ok: BeginTurnOutcome = { status: 'ok', turn: 7, cooledUris: ['a', 'b'], cooledTurns: [5, 6] };

  it.each([
    ['no session loaded', null, null, { turns: 5, status: 'off', cooled: 0, turn: null }],
    ['off', { status: 'off', turn: 3, cooledUris: [], cooledTurns: [] }, null, { turns: 5, status: 'off', cooled: 0, turn: null }],
    ['unavailable', { status: 'unavailable', turn: null, cooledUris: [], cooledTurns: [] }, null, { turns: 5, status: 'unavailable', cooled: 0, turn: null }],
    ['new, written', { status: 'new', turn: 0, cooledUris: [], cooledTurns: [] }, { status: 'ok', recorded: 2 }, { turns: 5, status: 'new', cooled: 0, turn: 0 }],
    ['ok, skipped', ok, { status: 'skipped', recorded: 0 }, { turns: 5, status: 'ok', cooled: 2, turn: 7 }],
    ['ok, write failed', ok, { status: 'write_failed', recorded: 0 }, { turns: 5, status: 'write_failed', cooled: 2, turn: 7 }],
  ] as const)('maps %s', (_name, begun, recorded, want) => {
    expect(dedupStats(5, begun as BeginTurnOutcome | null, recorded)).toEqual(want);
  });
});
