import fc from 'fast-check';
import { compileFilter, isUnderPrefix } from './filter';
import { type CacheRow, ScanCache } from './scan-cache';
import { VectorRows } from './simd-dot';

function row(id: number, uri: string, vector: Float32Array): CacheRow {
  return {
    id, uri, docUri: uri, contextType: 'resource', category: 'resources', level: 2, account: 'a', owner: '', peer: '', workspace: 'default',
    subject: '', tags: [], createdAt: 0, updatedAt: 0, validFrom: null, validTo: null, vector,
  };
}

describe('VectorRows', () => {
  it('computes the same dot products with the SIMD kernel and the JavaScript fallback', () => {
    const dim = 64;
    const simd = new VectorRows(dim, true);
    const js = new VectorRows(dim, false);
    expect(simd.accelerated).toBe(true);
    expect(js.accelerated).toBe(false);
    const n = 5000; // more than one kernel call (4096 rows) and more than the initial capacity
    simd.ensure(n);
    js.ensure(n);
    let seed = 7;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
    for (let r = 0; r < n; r++) {
      const v = Float32Array.from({ length: dim }, rnd);
      simd.set(r, v);
      js.set(r, v);
    }
    const q = Float32Array.from({ length: dim }, rnd);
    const a = new Float32Array(n);
    const b = new Float32Array(n);
    simd.dots(q, 3, n, a);
    js.dots(q, 3, n, b);
    expect(a[0]).toBe(0);
    for (let r = 3; r < n; r++) expect(a[r]).toBeCloseTo(b[r], 4);
    expect(Array.from(simd.get(42))).toEqual(Array.from(js.get(42)));
  });

  it('approximates unit-vector dot products from the int8 copies within a few thousandths, across kernel calls and growth', () => {
    const dim = 256;
    const rows = new VectorRows(dim, true);
    expect(rows.quantized).toBe(true);
    let seed = 11;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
    const unitVec = () => {
      // Sparse-ish and signed, like the hashed lexical vectors, or dense.
      const v = Float32Array.from({ length: dim }, () => (rnd() > 0.3 ? 0 : rnd()));
      const n = Math.hypot(...v) || 1;
      return v.map((x) => x / n);
    };
    const n = 9000;
    for (let r = 0; r < n; r++) {
      rows.ensure(r + 1);
      rows.set(r, unitVec());
    }
    rows.set(17, new Float32Array(dim)); // a zero vector scores 0
    const exact = new Float32Array(n);
    const approx = new Float32Array(n);
    for (let t = 0; t < 5; t++) {
      const q = unitVec();
      rows.dots(q, 0, n, exact);
      rows.approxDots(q, 5, n, approx);
      let worst = 0;
      for (let r = 5; r < n; r++) worst = Math.max(worst, Math.abs(approx[r]! - exact[r]!));
      expect(worst).toBeLessThan(0.01);
      expect(approx[17]).toBe(0);
      expect(approx[0]).toBe(0); // outside [lo, hi): untouched
    }
  });

  it('scans exactly where the int8 kernel does not apply (no SIMD, or a dimension that is not a multiple of 16)', () => {
    for (const rows of [new VectorRows(32, false), new VectorRows(20, true)]) {
      expect(rows.quantized).toBe(false);
      const v = Float32Array.from({ length: rows.dim }, (_, i) => (i % 3) - 1);
      rows.set(0, v);
      const exact = new Float32Array(1);
      const approx = new Float32Array(1);
      rows.dots(v, 0, 1, exact);
      rows.approxDots(v, 0, 1, approx);
      expect(approx[0]).toBe(exact[0]);
    }
  });

  it('falls back to JavaScript for a dimension that is not a multiple of 4', () => {
    const rows = new VectorRows(6, true);
    expect(rows.accelerated).toBe(false);
    rows.set(0, Float32Array.from([1, 2, 3, 4, 5, 6]));
    const out = new Float32Array(1);
    rows.dots(Float32Array.from([1, 1, 1, 1, 1, 1]), 0, 1, out);
    expect(out[0]).toBe(21);
  });
});

describe('Shard', () => {
  const segs = ['viking://resources', 'viking://resources/a', 'viking://resources/a/b', 'viking://resources/ab', 'viking://user/u', 'viking://user/u/memories'];
  const arbUri = fc.tuple(fc.constantFrom(...segs), fc.constantFrom('', '/x.md', '/y', '/z/w.md', '-old/q.md')).map(([a, b]) => a + b);

  it('finds exactly the live slots under a prefix, sorted part and tail, before and after reorganising', () => {
    fc.assert(
      fc.property(fc.uniqueArray(arbUri, { minLength: 1, maxLength: 120 }), fc.array(fc.nat(), { maxLength: 20 }), fc.constantFrom(...segs), (uris, kills, prefix) => {
        const cache = new ScanCache(4, false);
        uris.forEach((u, i) => cache.upsert(row(i + 1, u, Float32Array.from([1, 0, 0, 0]))));
        const half = Math.floor(uris.length / 2);
        cache.reorganize(true);
        // Re-add the second half so it sits in the tail, then delete a few rows.
        uris.slice(half).forEach((u, i) => cache.upsert(row(half + i + 1, u, Float32Array.from([0, 1, 0, 0]))));
        for (const k of kills) cache.remove((k % uris.length) + 1);
        const check = (): void => {
          const sh = cache.shards.get('a');
          const want = uris.filter((u, i) => cache.where.has(i + 1) && isUnderPrefix(u, prefix)).sort();
          if (!sh) {
            expect(want).toEqual([]);
            return;
          }
          const got: string[] = [];
          for (const [lo, hi] of sh.rangesUnder([prefix])) for (let s = lo; s < hi; s++) if (sh.live[s]) got.push(sh.uri[s]);
          for (const s of sh.tailUnder([prefix])) got.push(sh.uri[s]);
          expect(got.sort()).toEqual(want);
        };
        check();
        cache.reorganize(true);
        check();
        for (const [id, w] of cache.where) expect(w.shard.ids[w.slot]).toBe(id);
      }),
      { numRuns: 150 },
    );
  });

  it('shares one copy of a document URI and of equal tags between consecutive rows, and filters each row by its own', () => {
    const cache = new ScanCache(4, false);
    const v = () => Float32Array.from([1, 0, 0, 0]);
    const doc = 'viking://resources/d.md';
    const rows: CacheRow[] = [
      { ...row(1, doc, v()), tags: ['x', 'y'] },
      { ...row(2, `${doc}#p1`, v()), docUri: doc, tags: ['x', 'y'] },
      { ...row(3, `${doc}#p2`, v()), docUri: doc, tags: ['x'] },
      { ...row(4, 'viking://resources/e.md', v()), tags: [] },
      { ...row(5, 'viking://resources/e.md#p1', v()), docUri: 'viking://resources/e.md', tags: [] },
      { ...row(6, 'viking://resources/f.md', v()), tags: ['y', 'x'] },
    ];
    for (const r of rows) cache.upsert(r);
    const sh = cache.shards.get('a')!;
    const slot = (id: number) => cache.where.get(id)!.slot;
    expect(sh.tags[slot(2)]).toBe(sh.tags[slot(1)]);
    expect(sh.tags[slot(3)]).not.toBe(sh.tags[slot(2)]);
    expect(sh.tags[slot(5)]).toBe(sh.tags[slot(4)]);
    expect(sh.tags[slot(4)]!.length).toBe(0);
    expect(sh.docUri[slot(2)]).toBe(doc);
    const tagged = (t: string) =>
      rows.filter((r) => compileFilter({ op: 'must', field: 'tags', conds: [t] }, cache.dict, sh)(slot(r.id))).map((r) => r.id);
    expect(tagged('x')).toEqual([1, 2, 3, 6]);
    expect(tagged('y')).toEqual([1, 2, 6]);
    const inDoc = compileFilter({ op: 'must', field: 'doc_uri', conds: [doc] }, cache.dict, sh);
    expect(rows.filter((r) => inDoc(slot(r.id))).map((r) => r.id)).toEqual([1, 2, 3]);
    // Reorganised (re-sorted by URI), every row keeps its own.
    cache.reorganize(true);
    expect(tagged('y')).toEqual([1, 2, 6]);
  });
});
