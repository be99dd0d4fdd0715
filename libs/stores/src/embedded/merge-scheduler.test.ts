import { type EmbeddedDb, openEmbeddedDb } from './db';
import { LexicalIndex, type LexicalRow } from './lexical-index';
import { DEFAULT_TAIL_MERGE, MergeScheduler } from './merge-scheduler';

const dbs: EmbeddedDb[] = [];
afterAll(() => {
  for (const db of dbs) db.close();
});

function rows(n: number): LexicalRow[] {
  return Array.from({ length: n }, (_, i) => ({ id: i + 1, account: 'a', main: new Map([['kelp', 1 + (i % 3)], [`t${i % 7}`, 1]]), minor: new Map() }));
}

describe('MergeScheduler', () => {
  it('keeps the process alive while a drain runs, and never for background steps', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const lex = new LexicalIndex(db);
    db.transaction(() => lex.add(rows(40)))();
    const merger = new MergeScheduler(db, lex, { ...DEFAULT_TAIL_MERGE, mergeAt: 10, idleMs: 1e9 });
    const spy = jest.spyOn(global, 'setImmediate');
    try {
      const last = () => spy.mock.results[spy.mock.results.length - 1]!.value as NodeJS.Immediate;
      // A background step is due (40 rows ≥ mergeAt): unreferenced.
      merger.wrote();
      expect(last().hasRef()).toBe(false);
      // Awaited, the drain's steps hold the event loop open (a CLI that awaits optimize() must not exit first).
      const drained = merger.drain();
      expect(last().hasRef()).toBe(true);
      await drained;
      expect(lex.pendingRows()).toBe(0);
    } finally {
      spy.mockRestore();
      merger.close();
    }
  });

  it('runs no step after close, and resolves a drain in progress', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const lex = new LexicalIndex(db);
    db.transaction(() => lex.add(rows(5)))();
    const merger = new MergeScheduler(db, lex, { ...DEFAULT_TAIL_MERGE, idleMs: 1e9 });
    const drained = merger.drain();
    merger.close();
    await drained;
    await new Promise((r) => setImmediate(r));
    expect(lex.pendingRows()).toBe(5);
  });
});
