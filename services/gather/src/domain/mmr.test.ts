import fc from 'fast-check';
import { capPerDocument, cosine, mmrSelect } from './mmr';

const v = (...xs: number[]) => Float32Array.from(xs);
const item = (id: string, docUri: string, score: number) => ({ id, docUri, score });
const ids = (xs: Array<{ id: string }>) => xs.map((x) => x.id);

describe('capPerDocument', () => {
  const ranked = [item('a1', 'A', 0.9), item('a2', 'A', 0.8), item('a3', 'A', 0.7), item('b1', 'B', 0.6), item('a4', 'A', 0.5), item('c1', 'C', 0.4)];

  it('keeps at most two passages per document with a cap of 2, in rank order', () => {
    expect(ids(capPerDocument(ranked, 2, 10))).toEqual(['a1', 'a2', 'b1', 'c1']);
  });

  it('forces one passage per document with a cap of 1', () => {
    expect(ids(capPerDocument(ranked, 1, 10))).toEqual(['a1', 'b1', 'c1']);
  });

  it('fills the limit from later documents once a document is full', () => {
    expect(ids(capPerDocument(ranked, 1, 2))).toEqual(['a1', 'b1']);
    expect(ids(capPerDocument(ranked, 3, 4))).toEqual(['a1', 'a2', 'a3', 'b1']);
  });

  it('treats a cap below 1 as 1 and a limit of 0 as none', () => {
    expect(ids(capPerDocument(ranked, 0, 10))).toEqual(['a1', 'b1', 'c1']);
    expect(capPerDocument(ranked, 2, 0)).toEqual([]);
  });
});

describe('cosine', () => {
  it('is 1 for parallel vectors, 0 for orthogonal, missing or mismatched ones', () => {
    expect(cosine(v(1, 0), v(2, 0))).toBeCloseTo(1);
    expect(cosine(v(1, 0), v(0, 3))).toBe(0);
    expect(cosine(null, v(1))).toBe(0);
    expect(cosine(v(1, 0), v(1))).toBe(0);
    expect(cosine(v(0, 0), v(1, 0))).toBe(0);
  });
});

describe('mmrSelect', () => {
  // Three near-duplicates of one idea (A1..A3, each its own document), then a different idea.
  const corpus = [item('dup1', 'D1', 0.95), item('dup2', 'D2', 0.94), item('dup3', 'D3', 0.93), item('other', 'D4', 0.7), item('third', 'D5', 0.5)];
  const vecs = [v(1, 0, 0), v(0.99, 0.1, 0), v(0.98, 0.12, 0.05), v(0, 1, 0), v(0, 0, 1)];

  it('reproduces the rank order at lambda 1 (pure relevance)', () => {
    expect(ids(mmrSelect(corpus, vecs, { lambda: 1, limit: 5, maxPerDocument: 2 }))).toEqual(['dup1', 'dup2', 'dup3', 'other', 'third']);
  });

  it('moves a different passage ahead of near-duplicates at a diversity-leaning lambda', () => {
    expect(ids(mmrSelect(corpus, vecs, { lambda: 0.5, limit: 3, maxPerDocument: 2 }))).toEqual(['dup1', 'other', 'third']);
  });

  it('always starts from the best-scored passage, even at lambda 0 (pure diversity)', () => {
    const out = ids(mmrSelect(corpus, vecs, { lambda: 0, limit: 3, maxPerDocument: 2 }));
    expect(out[0]).toBe('dup1');
    expect(out.slice(1).sort()).toEqual(['other', 'third']);
  });

  it('honours the per-document cap while selecting', () => {
    const sameDoc = [item('p1', 'A', 0.9), item('p2', 'A', 0.85), item('p3', 'A', 0.8), item('q1', 'B', 0.2)];
    const vv = [v(1, 0), v(0, 1), v(0.7, 0.7), v(1, 0)];
    expect(ids(mmrSelect(sameDoc, vv, { lambda: 1, limit: 4, maxPerDocument: 1 }))).toEqual(['p1', 'q1']);
    expect(ids(mmrSelect(sameDoc, vv, { lambda: 1, limit: 4, maxPerDocument: 2 }))).toEqual(['p1', 'p2', 'q1']);
  });

  it('treats a passage without a vector as similar to nothing', () => {
    const out = mmrSelect([item('a', 'A', 0.9), item('b', 'B', 0.8), item('c', 'C', 0.7)], [v(1, 0), v(1, 0), null], { lambda: 0.3, limit: 2, maxPerDocument: 2 });
    expect(ids(out)).toEqual(['a', 'c']);
  });

  it('property: a selection is prefix-consistent, unique, capped and never longer than asked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ doc: fc.constantFrom('A', 'B', 'C', 'D'), score: fc.double({ min: 0, max: 1, noNaN: true }), x: fc.double({ min: -1, max: 1, noNaN: true }), y: fc.double({ min: -1, max: 1, noNaN: true }) }), { maxLength: 25 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 0, max: 12 }),
        (raw, lambda, cap, k) => {
          const items = raw.map((r, i) => item(`i${i}`, r.doc, r.score)).sort((a, b) => b.score - a.score);
          const vectors = items.map((it) => {
            const r = raw[Number(it.id.slice(1))];
            return v(r.x, r.y);
          });
          const full = mmrSelect(items, vectors, { lambda, limit: k, maxPerDocument: cap });
          expect(full.length).toBeLessThanOrEqual(k);
          expect(new Set(ids(full)).size).toBe(full.length);
          const perDoc = new Map<string, number>();
          for (const x of full) perDoc.set(x.docUri, (perDoc.get(x.docUri) ?? 0) + 1);
          for (const n of perDoc.values()) expect(n).toBeLessThanOrEqual(cap);
          for (let j = 0; j <= full.length; j++) expect(ids(mmrSelect(items, vectors, { lambda, limit: j, maxPerDocument: cap }))).toEqual(ids(full.slice(0, j)));
          if (lambda === 1) expect(ids(full)).toEqual(ids(capPerDocument(items, cap, k)));
        },
      ),
    );
  });
});
