import { openEmbeddedDb, type EmbeddedDb } from '../embedded/db';
import { SqliteTraceStore } from './sqlite-trace-store';
import { describeTraceStoreContract } from './trace-store.contract';

describeTraceStoreContract('sqlite', async () => {
  const db = openEmbeddedDb(':memory:');
  return {
    store: new SqliteTraceStore(db),
    dispose: async () => {
      db.close();
    },
  };
});

describe('SqliteTraceStore', () => {
  let db: EmbeddedDb;
  beforeEach(() => {
    db = openEmbeddedDb(':memory:');
  });
  afterEach(() => db.close());

  it('hides rows past the retention and deletes them on a later append', async () => {
    let now = 1_000_000;
    const store = new SqliteTraceStore(db, { maxAgeMs: 1000, now: () => now, pruneEvery: 1 });
    await store.append({ id: 'old', account: 'acme', createdAt: now, data: { q: 1 } });
    expect(await store.get('old', 'acme')).not.toBeNull();
    now += 1001;
    expect(await store.get('old', 'acme')).toBeNull();
    await store.append({ id: 'new', account: 'acme', createdAt: now, data: { q: 2 } });
    const ids = (db.prepare('SELECT id FROM trace_rows').all() as Array<{ id: string }>).map((r) => r.id);
    expect(ids).toEqual(['new']);
  });

  it('shares the file with other adapters and survives a second instance on the same handle', async () => {
    const a = new SqliteTraceStore(db);
    await a.append({ id: 'one', account: 'acme', createdAt: Date.now(), data: {} });
    const b = new SqliteTraceStore(db);
    expect((await b.get('one', 'acme'))?.id).toBe('one');
  });

  it('refuses to work after close and reports not ready', async () => {
    const s = new SqliteTraceStore(db);
    await s.close();
    expect(await s.ping()).toBe(false);
    await expect(s.append({ id: 'x', account: 'a', createdAt: 0, data: {} })).rejects.toThrow('closed');
  });
});
