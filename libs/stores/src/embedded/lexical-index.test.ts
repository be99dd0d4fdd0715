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
