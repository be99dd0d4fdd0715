import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { EmbeddedVectorIndex, LexicalIndex, openEmbeddedDb, type EmbeddedDb } from '@ctxmesh/stores';
import { buildQueries } from './corpus';
import { BENCH_VISIBILITY } from './latency';
import { bulkLoad } from './load';
import { Fts5Lexical, LEG_RUN_DEPTH, LexicalLegs, measureLexicalLegs, swapLexicalLeg } from './search-engines';

// FTS5 fed the ranking's own terms must rank as the block-max index does: same selection, same
// BM25 (so the same top-k, ties aside), whichever engine runs the leg of a hybrid search.
describe('Fts5Lexical', () => {
  const embedder = new LexicalEmbedder({ dimension: 64 });
  let dir: string;
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  let fts: Fts5Lexical;
  const queries = buildQueries(40, { pool: 300 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ctxmesh-fts5-'));
    db = openEmbeddedDb(join(dir, 'store.db'));
    index = new EmbeddedVectorIndex(db, { dimension: embedder.dimension, ann: false });
    await bulkLoad(index, embedder, null, 0, 300);
    fts = new Fts5Lexical(join(dir, 'fts5.db'));
  });

  afterAll(async () => {
    fts.close();
    await index.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('holds the store rows with its statistics and terms, not re-segmented', () => {
    const sync = fts.sync(db, true);
    expect(sync.added).toBeGreaterThan(300);
    const store = new LexicalIndex(db).rowStats(BENCH_VISIBILITY.account);
    expect(fts.rowStats(BENCH_VISIBILITY.account)).toEqual(store);
    const terms = db.prepare('SELECT COUNT(*) FROM vi_lex_terms WHERE account = ? AND df > 0').pluck().get(BENCH_VISIBILITY.account);
    expect(fts.termCount(BENCH_VISIBILITY.account)).toBe(terms);
    expect(fts.sync(db).added).toBe(0);
  });

  it('selects the same terms and returns the block-max top-k with the same BM25', () => {
    fts.sync(db);
    const legs = new LexicalLegs(db, new LexicalIndex(db), fts);
    let compared = 0;
    for (const q of queries) {
      const b = legs.blockMax(BENCH_VISIBILITY.account, q.text, LEG_RUN_DEPTH);
      const f = legs.fts5(BENCH_VISIBILITY.account, q.text, LEG_RUN_DEPTH);
      expect(f.selected).toEqual(b.selected);
      expect(f.hits.length).toBe(b.hits.length);
      // Equal scores rank by id in both; float sums may differ in the last bits, so compare scores by rank.
      f.hits.forEach((h, i) => expect(h.score).toBeCloseTo(b.hits[i]!.score, 9));
      compared += f.hits.length;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('stands in for the block-max leg of a hybrid search, and follows writes', async () => {
    const [vector] = await embedder.embed([queries[0]!.text]);
    const q = { visibility: BENCH_VISIBILITY, vector: vector!, text: queries[0]!.text, targets: [], filter: null, limit: 10 };
    const [own] = await index.search([q]);
    let undo = swapLexicalLeg(index, fts);
    try {
      const [swapped] = await index.search([q]);
      expect(swapped!.map((h) => h.node.uri)).toEqual(own!.map((h) => h.node.uri));
    } finally {
      undo();
    }
    // Documents written meanwhile reach the FTS5 leg at its next search (the mirror syncs on the version).
    await bulkLoad(index, embedder, null, 300, 310);
    const [ownAfter] = await index.search([q]);
    undo = swapLexicalLeg(index, fts);
    try {
      const [swappedAfter] = await index.search([q]);
      expect(swappedAfter!.map((h) => h.node.uri)).toEqual(ownAfter!.map((h) => h.node.uri));
      expect(fts.rowStats(BENCH_VISIBILITY.account)).toEqual(new LexicalIndex(db).rowStats(BENCH_VISIBILITY.account));
    } finally {
      undo();
    }
  });

  it('measures both legs side by side', async () => {
    const m = await measureLexicalLegs(join(dir, 'store.db'), index, fts, queries.slice(0, 10));
    expect(m.engines.map((e) => e.engine)).toEqual(['block-max', 'fts5']);
    expect(m.agreement.sameSelection).toBe(1);
    expect(m.agreement.overlap10).toBe(1);
    expect(m.fts5.rows).toBe(m.fts5.storeRows);
    expect(m.engines[1]!.leg.n).toBe(10);
  });
});
