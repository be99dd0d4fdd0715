import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import { LexicalIndex, type LexicalRow } from './lexical-index';
import { lexicalTerms } from '@ctxmesh/embedder';
import { bm25Idf, bm25Tf } from '../ranking/bm25';
import { QueryScorer, QueryTerms, dfKey } from '../ranking/query';
import { DocTerms, termCounts } from '../ranking/terms';
import { DEFAULT_TUNING } from '../tuning';
import { BLOCK_SIZE, decodeBlock, encodeBlock } from './postings';

const dbs: EmbeddedDb[] = [];
afterAll(() => {
  for (const db of dbs) db.close();
});

function freshIndex(): { db: EmbeddedDb; lex: LexicalIndex } {
  const db = openEmbeddedDb(':memory:');
  dbs.push(db);
  return { db, lex: new LexicalIndex(db) };
}

function row(id: number, main: Record<string, number>, minor: Record<string, number> = {}, account = 'a'): LexicalRow {
  return { id, account, main: new Map(Object.entries(main)), minor: new Map(Object.entries(minor)) };
}

/** BM25 of every row, computed directly from the rows (the definition the index must reproduce). */
function exhaustive(rows: LexicalRow[], q: Array<{ cls: 0 | 1; term: string; repeat: number }>, minorWeight: number, accept: (id: number) => boolean) {
  const len = (r: LexicalRow) => 1 + [...r.main.values(), ...r.minor.values()].reduce((a, b) => a + b, 0);
  const avg = rows.reduce((s, r) => s + len(r), 0) / rows.length;
  const scores: Array<{ id: number; score: number }> = [];
  for (const r of rows) {
    if (!accept(r.id)) continue;
    let s = 0;
    let hit = false;
    for (const t of q) {
      const tf = (t.cls === 0 ? r.main : r.minor).get(t.term);
      if (!tf) continue;
      hit = true;
      const df = rows.filter((x) => (t.cls === 0 ? x.main : x.minor).has(t.term)).length;
      s += t.repeat * bm25Idf(df, rows.length) * bm25Tf((t.cls === 0 ? 1 : minorWeight) * Math.min(255, tf), len(r), avg);
    }
    if (hit) scores.push({ id: r.id, score: s });
  }
  return scores.sort((a, b) => b.score - a.score || a.id - b.id);
}

describe('postings blocks', () => {
  it('round-trip ids, frequencies and lengths (varint deltas, capped values)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 2 ** 30 }), { minLength: 1, maxLength: 300 }), (raw) => {
        const ids = [...raw].sort((a, b) => a - b);
        const tfs = ids.map((id) => (id % 300) + 1);
        const lens = ids.map((id) => (id % 70_000) + 1);
        const b = decodeBlock(encodeBlock(ids, tfs, lens), ids[0]!, ids.length);
        expect([...b.ids]).toEqual(ids);
        expect([...b.tfs]).toEqual(tfs.map((t) => Math.min(255, t)));
        expect([...b.lens]).toEqual(lens.map((l) => Math.min(65_535, l)));
      }),
    );
  });

  it('refuses ids that are not ascending', () => {
    expect(() => encodeBlock([3, 2], [1, 1], [1, 1])).toThrow(RangeError);
  });
});

describe('LexicalIndex', () => {
  it('top-k equals exhaustive BM25 over any corpus, k and scope filter', () => {
    const vocab = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
    fc.assert(
      fc.property(
        fc.array(fc.dictionary(fc.constantFrom(...vocab), fc.integer({ min: 1, max: 6 }), { minKeys: 1, maxKeys: 5 }), { minLength: 1, maxLength: 400 }),
        fc.uniqueArray(fc.constantFrom(...vocab), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        (docs, qterms, k, mod) => {
          const { lex } = freshIndex();
          const rows = docs.map((m, i) => row(i + 1, m, i % 3 === 0 ? { [Object.keys(m)[0]!]: 1 } : {}));
          // Written in several batches, as a stream of transactions would.
          for (let at = 0; at < rows.length; at += 97) lex.add(rows.slice(at, at + 97));
          const q = qterms.map((term, i) => ({ cls: (i === 3 ? 1 : 0) as 0 | 1, term, repeat: i === 0 ? 2 : 1 }));
          const accept = (id: number) => id % mod !== 0 || mod === 1;
          const prepared = lex.prepare('a', q, 0.6);
          const want = exhaustive(rows, q, 0.6, accept).slice(0, k);
          const got = prepared ? lex.topK(prepared, k, accept) : [];
          expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
          got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 9));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('scores as the shared ranking does from the rows’ term counts: one BM25 for every engine', () => {
    const words = ['lighthouse', 'keeper', 'Harbor', 'lantern', 'quartz', 'danced', '魔术表演', '猫', '小猫咪', '圣诞节晚会', '晚会', 'Redis', '连接超时'];
    const text = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 12 }).map((xs) => xs.join(' '));
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 60 }), text, fc.integer({ min: 1, max: 30 }), (texts, q, k) => {
        const { lex } = freshIndex();
        const counts = texts.map((t) => termCounts(lexicalTerms(t)));
        lex.add(counts.map((c, i) => ({ id: i + 1, account: 'a', ...c })));
        const docs = counts.map((c) => new DocTerms(c, DEFAULT_TUNING.minorWeight));
        const { rows, tokens } = lex.rowStats('a');
        const stats = {
          docs: rows,
          tokens,
          df: (key: string) => {
            const term = key.slice(2);
            if (key[0] === '*') return counts.filter((c) => c.main.has(term) || c.minor.has(term)).length;
            return lex.term('a', key[0] === '0' ? 0 : 1, term)?.df ?? 0;
          },
        };
        expect(tokens).toBe(docs.reduce((s, d) => s + d.length, 0));
        const scorer = new QueryScorer(new QueryTerms(q, DEFAULT_TUNING), stats, DEFAULT_TUNING);
        for (const t of scorer.selected) expect(t.df).toBe(stats.df(dfKey(t.cls, t.term)));
        const prepared = lex.resolve(
          scorer.selected.map((t) => ({ row: lex.term('a', t.cls, t.term)!, w: t.w, colWeight: t.colWeight })),
          scorer.avgLen,
        );
        const want = docs.map((d, i) => ({ id: i + 1, score: scorer.bm25(d) })).filter((h) => h.score > 0);
        want.sort((a, b) => b.score - a.score || a.id - b.id);
        const got = prepared ? lex.topK(prepared, k) : [];
        expect(got.length).toBe(Math.min(k, want.length));
        got.forEach((h, i) => {
          expect(h.score).toBeCloseTo(want[i]!.score, 9);
          expect(h.score).toBeCloseTo(scorer.bm25(docs[h.id - 1]!), 9);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('reads the blocks of the rare terms, not every posting of the common ones', () => {
    const { lex } = freshIndex();
    const rows: LexicalRow[] = [];
    for (let i = 1; i <= 20_000; i++) {
      const m: Record<string, number> = { common: 1 + (i % 3), filler: 1 };
      if (i % 2 === 0) m.half = 1;
      if (i % 997 === 0) m.rare = 2;
      rows.push(row(i, m));
    }
    lex.add(rows);
    // The blocks' bounds are what this is about: every row merged into them.
    lex.mergeAll();
    const prepared = lex.prepare('a', [{ cls: 0, term: 'rare', repeat: 1 }, { cls: 0, term: 'half', repeat: 1 }, { cls: 0, term: 'common', repeat: 1 }], 0.6)!;
    const stats = { blocks: 0, blocksDecoded: 0, postings: 0, postingsScored: 0 };
    const top = lex.topK(prepared, 10, () => true, stats);
    expect(top).toHaveLength(10);
    expect(top.every((h) => h.id % 997 === 0)).toBe(true);
    expect(stats.postings).toBeGreaterThan(30_000);
    // 20 rare postings, and for each top candidate the one block of every other term that holds it.
    expect(stats.postingsScored).toBeLessThan(stats.postings / 20);
    expect(stats.blocksDecoded).toBeLessThan(stats.blocks / 5);
  });

  it('keeps postings, document frequencies and row counts exact through removals and re-adds', () => {
    const { db, lex } = freshIndex();
    const rows = Array.from({ length: 3 * BLOCK_SIZE + 7 }, (_, i) => row(i + 1, { x: 1 + (i % 4), ...(i % 2 ? { y: 1 } : {}) }));
    lex.add(rows);
    // Removed from the blocks (a pending row's removal is the property test's).
    lex.mergeAll();
    const gone = rows.filter((r) => r.id % 5 === 0);
    lex.remove(gone);
    const kept = rows.filter((r) => r.id % 5 !== 0);
    const df = (t: string) => (db.prepare('SELECT df FROM vi_lex_terms WHERE term = ?').get(t) as { df: number } | undefined)?.df;
    expect(df('x')).toBe(kept.length);
    expect(df('y')).toBe(kept.filter((r) => r.main.has('y')).length);
    expect(lex.size().postings).toBe(kept.length + kept.filter((r) => r.main.has('y')).length);
    expect(db.prepare("SELECT rows FROM vi_lex_rows WHERE account = 'a'").get()).toEqual({ rows: kept.length });
    const q = lex.prepare('a', [{ cls: 0, term: 'x', repeat: 1 }], 0.6)!;
    expect(lex.topK(q, 1000, () => true).map((h) => h.id).sort((a, b) => a - b)).toEqual(kept.map((r) => r.id));
    // A removed id written again (SQLite reuses the largest id) comes back with its new terms only.
    const last = rows[rows.length - 1]!;
    lex.remove([last]);
    lex.add([row(last.id, { z: 3 })]);
    lex.mergeAll();
    const qz = lex.prepare('a', [{ cls: 0, term: 'z', repeat: 1 }], 0.6)!;
    expect(lex.topK(qz, 5, () => true).map((h) => h.id)).toEqual([last.id]);
    const qx = lex.prepare('a', [{ cls: 0, term: 'x', repeat: 1 }], 0.6)!;
    expect(lex.topK(qx, 1000, () => true).some((h) => h.id === last.id)).toBe(false);
    // A term whose last posting goes is dropped.
    lex.remove([row(last.id, { z: 3 })]);
    expect(df('z')).toBeUndefined();
  });

  it('never answers from stale in-memory blocks: another connection’s writes show at the next query', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-lex-'));
    const a = openEmbeddedDb(join(dir, 'x.db'));
    const b = openEmbeddedDb(join(dir, 'x.db'));
    dbs.push(a, b);
    try {
      const writer = new LexicalIndex(a);
      const reader = new LexicalIndex(b);
      writer.add(Array.from({ length: 10 }, (_, i) => row(i + 1, { kelp: 1 })));
      writer.mergeAll();
      const ids = () => reader.topK(reader.prepare('a', [{ cls: 0, term: 'kelp', repeat: 1 }], 0.6)!, 50, () => true).map((h) => h.id);
      expect(ids()).toHaveLength(10);
      // Same block, same first id: only its version tells the reader it changed.
      writer.remove([row(3, { kelp: 1 })]);
      writer.add([row(11, { kelp: 5 })]);
      expect(ids()).toEqual([11, 1, 2, 4, 5, 6, 7, 8, 9, 10]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps accounts apart: statistics and postings of one never answer another', () => {
    const { lex } = freshIndex();
    lex.add([row(1, { apple: 1 }, {}, 'a'), row(2, { apple: 1 }, {}, 'b'), row(3, { pear: 1 }, {}, 'b')]);
    const qa = lex.prepare('a', [{ cls: 0, term: 'apple', repeat: 1 }], 0.6)!;
    expect(lex.topK(qa, 10, () => true).map((h) => h.id)).toEqual([1]);
    expect(lex.prepare('a', [{ cls: 0, term: 'pear', repeat: 1 }], 0.6)).toBeNull();
  });

  it('leaves out a term in most rows when a rarer one exists', () => {
    const { lex } = freshIndex();
    lex.add(Array.from({ length: 10 }, (_, i) => row(i + 1, { the: 1, ...(i === 4 ? { lighthouse: 1 } : {}) })));
    const q = lex.prepare('a', [{ cls: 0, term: 'the', repeat: 1 }, { cls: 0, term: 'lighthouse', repeat: 1 }], 0.6, 0.5)!;
    expect(lex.topK(q, 10, () => true).map((h) => h.id)).toEqual([5]);
  });
});

describe('LexicalIndex tail (pending rows, merges)', () => {
  type Op =
    | { kind: 'write'; conn: number; remove: number[]; add: Array<{ main: Record<string, number>; minor: Record<string, number>; account: string; reuse: number }> }
    | { kind: 'merge'; conn: number; maxWork: number; minRows: number }
    | { kind: 'query'; conn: number; account: string; terms: Array<{ cls: 0 | 1; term: string; repeat: number }>; k: number; mod: number };
  const vocab = ['amber', 'birch', 'cedar', 'dune', 'elm'];
  const counts = fc.dictionary(fc.constantFrom(...vocab), fc.integer({ min: 1, max: 6 }), { maxKeys: 4 });
  // A filler term makes rows long (impact tiers by length) and its frequency passes the 255 cap.
  const rowArb = fc.record({
    main: fc.tuple(counts, fc.constantFrom(0, 1, 70, 300)).map(([m, pad]) => (pad > 0 ? { ...m, pad } : m)),
    minor: fc.dictionary(fc.constantFrom('x', 'y'), fc.integer({ min: 1, max: 3 }), { maxKeys: 2 }),
    account: fc.constantFrom('a', 'a', 'b'),
    reuse: fc.integer({ min: 0, max: 3 }),
  });
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    { weight: 4, arbitrary: fc.record({ kind: fc.constant('write' as const), conn: fc.integer({ min: 0, max: 1 }), remove: fc.array(fc.nat(), { maxLength: 4 }), add: fc.array(rowArb, { maxLength: 40 }) }) },
    // Short steps on either connection: merges are often half done, and taken over by the other.
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('merge' as const), conn: fc.integer({ min: 0, max: 1 }), maxWork: fc.integer({ min: 1, max: 4 }), minRows: fc.integer({ min: 1, max: 30 }) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('query' as const),
        conn: fc.integer({ min: 0, max: 1 }),
        account: fc.constantFrom('a', 'b'),
        terms: fc.uniqueArray(
          fc.record({ cls: fc.constant(0 as const), term: fc.constantFrom(...vocab, 'pad'), repeat: fc.integer({ min: 1, max: 2 }) }),
          { minLength: 1, maxLength: 3, selector: (t) => t.term },
        ).chain((main) => fc.subarray([{ cls: 1 as const, term: 'x', repeat: 1 }]).map((minor) => [...main, ...minor])),
        k: fc.integer({ min: 1, max: 30 }),
        mod: fc.integer({ min: 1, max: 4 }),
      }),
    },
  );

  it('never moves a posting twice when two connections take turns at one merge (each with its own work list)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-lex-turns-'));
    const a = openEmbeddedDb(join(dir, 'x.db'));
    const b = openEmbeddedDb(join(dir, 'x.db'));
    dbs.push(a, b);
    try {
      const [la, lb] = [new LexicalIndex(a), new LexicalIndex(b)];
      const terms = Array.from({ length: 20 }, (_, i) => `t${i}`);
      const rows = (from: number, n: number) => Array.from({ length: n }, (_, i) => row(from + i, Object.fromEntries(terms.filter((_, j) => (from + i + j) % 3 === 0).map((t) => [t, 1 + ((from + i) % 4)]))));
      const first = rows(1, 50);
      la.add(first);
      la.mergeAll();
      // The second merge finds its terms in the index (phase 1): both connections look them up and walk them.
      const second = rows(51, 50);
      la.add(second);
      let more = true;
      for (let turn = 0; more; turn++) {
        const [mine, other] = turn % 2 === 0 ? [la, lb] : [lb, la];
        more = mine.mergeStep({ maxWork: 1 });
        more = other.mergeStep({ maxWork: 1 }) || more;
      }
      expect(la.pendingRows()).toBe(0);
      const all = [...first, ...second];
      const df = (t: string) => (a.prepare('SELECT df FROM vi_lex_terms WHERE term = ?').get(t) as { df: number }).df;
      for (const t of terms) expect(df(t)).toBe(all.filter((r) => r.main.has(t)).length);
      expect(lb.size().postings).toBe(all.reduce((n, r) => n + r.main.size, 0));
      const q = terms.slice(0, 3).map((term) => ({ cls: 0 as const, term, repeat: 1 }));
      expect(lb.topK(lb.prepare('a', q, 0.6)!, 20, null).map((h) => h.id)).toEqual(exhaustive(all, q, 0.6, () => true).slice(0, 20).map((h) => h.id));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('merges every term when another connection moves the merge on to its next phase meanwhile', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-lex-phase-'));
    const a = openEmbeddedDb(join(dir, 'x.db'));
    const b = openEmbeddedDb(join(dir, 'x.db'));
    dbs.push(a, b);
    try {
      const [la, lb] = [new LexicalIndex(a), new LexicalIndex(b)];
      const old = Array.from({ length: 12 }, (_, i) => `old${i}`);
      const fresh = Array.from({ length: 12 }, (_, i) => `new${i}`);
      const rowOf = (id: number, terms: string[]) => row(id, Object.fromEntries(terms.map((t) => [t, 1])));
      const first = [rowOf(1, old)];
      la.add(first);
      la.mergeAll();
      // The second merge: twelve terms the index holds (phase 1), twelve new ones (phase 2).
      const second = [rowOf(2, [...fresh, ...old]), rowOf(3, fresh)];
      la.add(second);
      la.mergeStep({ maxWork: 5 });
      // The other connection does the rest of phase 1 and the start of phase 2.
      lb.mergeStep({ maxWork: 9 });
      while (la.mergeStep({ maxWork: 1 }));
      expect(lb.pendingRows()).toBe(0);
      const all = [...first, ...second];
      const df = (t: string) => (a.prepare('SELECT df FROM vi_lex_terms WHERE term = ?').get(t) as { df: number } | undefined)?.df;
      for (const t of [...old, ...fresh]) expect([t, df(t)]).toEqual([t, all.filter((r) => r.main.has(t)).length]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers every query exactly as BM25 over the live rows, through any mix of writes, removals, merge steps and two connections', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-lex-tail-'));
    let run = 0;
    try {
      fc.assert(
        fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
          const path = join(dir, `t${run++}.db`);
          const conns = [openEmbeddedDb(path), openEmbeddedDb(path)];
          try {
            const lexes = conns.map((db) => new LexicalIndex(db));
            const live = new Map<number, LexicalRow>();
            const removed: number[] = [];
            let nextId = 1;
            const check = (conn: number, account: string, q: Array<{ cls: 0 | 1; term: string; repeat: number }>, k: number, mod: number) => {
              const rows = [...live.values()].filter((r) => r.account === account);
              const accept = (id: number) => mod === 1 || id % mod !== 0;
              const want = rows.length > 0 ? exhaustive(rows, q, 0.6, accept).slice(0, k) : [];
              const prepared = lexes[conn]!.prepare(account, q, 0.6);
              const got = prepared ? lexes[conn]!.topK(prepared, k, accept) : [];
              expect(got.map((h) => h.id)).toEqual(want.map((h) => h.id));
              got.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 9));
            };
            for (const op of ops) {
              if (op.kind === 'write') {
                const ids = [...live.keys()];
                const gone = [...new Set(op.remove.filter(() => ids.length > 0).map((i) => ids[i % ids.length]!))].map((id) => live.get(id)!);
                const fresh = op.add.map((a) => {
                  // SQLite hands a deleted id out again: sometimes one removed earlier (or in this write) comes back.
                  const reusable = [...removed, ...gone.map((g) => g.id)].filter((id) => !live.has(id) || gone.some((g) => g.id === id));
                  const id = a.reuse === 0 && reusable.length > 0 ? reusable.pop()! : nextId++;
                  const i = removed.indexOf(id);
                  if (i >= 0) removed.splice(i, 1);
                  return row(id, a.main, a.minor, a.account);
                });
                // Ids given out twice in one write stand for one row each: keep the first.
                const seen = new Set<number>();
                const adds = fresh.filter((r) => !seen.has(r.id) && (seen.add(r.id), true));
                conns[op.conn]!.transaction(() => {
                  lexes[op.conn]!.remove(gone);
                  lexes[op.conn]!.add(adds);
                }).immediate();
                for (const g of gone) {
                  live.delete(g.id);
                  removed.push(g.id);
                }
                for (const r of adds) {
                  live.set(r.id, r);
                  const i = removed.indexOf(r.id);
                  if (i >= 0) removed.splice(i, 1);
                }
              } else if (op.kind === 'merge') {
                lexes[op.conn]!.mergeStep({ budgetMs: 1000, maxWork: op.maxWork, minRows: op.minRows });
              } else check(op.conn, op.account, op.terms, op.k, op.mod);
            }
            // The whole index, from either connection: as a from-scratch build of the live rows, before and after merging.
            const scratchDb = openEmbeddedDb(':memory:');
            try {
              const scratch = new LexicalIndex(scratchDb);
              scratch.addMerged([...live.values()]);
              const { terms, postings } = scratch.size();
              for (const lex of lexes) expect(lex.size()).toMatchObject({ terms, postings });
              lexes[1]!.mergeAll();
              expect(lexes[0]!.pendingRows()).toBe(0);
              for (const lex of lexes) expect(lex.size()).toMatchObject({ terms, postings, blocks: expect.any(Number) });
              for (const account of ['a', 'b']) for (const conn of [0, 1]) check(conn, account, vocab.map((term) => ({ cls: 0, term, repeat: 1 })), 50, 1);
            } finally {
              scratchDb.close();
            }
          } finally {
            for (const c of conns) c.close();
          }
        }),
        { numRuns: 80 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
