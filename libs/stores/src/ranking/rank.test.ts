import fc from 'fast-check';
import { DEFAULT_TUNING, type HybridTuning } from '../tuning';
import { type CorpusStats, type DfKey, QueryScorer, QueryTerms } from './query';
import { type Candidate, type DenseCandidate, type RankedHit, calibrate, documentPool, fuse, legDepth, rank, takeDocuments } from './rank';
import { NOISE_FLOOR_SCORE, relevanceScore } from './relevance';
import { DocTerms } from './terms';

const T: HybridTuning = { ...DEFAULT_TUNING };

/** A corpus of texts with cosines: its statistics, as any engine would report them. */
function corpus(texts: readonly string[], tuning: HybridTuning = T) {
  const docs = texts.map((t) => DocTerms.ofText(t, tuning.minorWeight));
  const stats: CorpusStats = {
    docs: docs.length,
    tokens: docs.reduce((s, d) => s + d.length, 0),
    df: (key: DfKey) => {
      const term = key.slice(2);
      const has = (d: DocTerms) => (key[0] === '0' ? d.counts.main.has(term) : key[0] === '1' ? d.counts.minor.has(term) : d.counts.main.has(term) || d.counts.minor.has(term));
      return docs.filter(has).length;
    },
  };
  return { docs, stats };
}

/** A search over a corpus with every row a candidate of both legs (keys are indexes, URIs by index). */
function search(texts: readonly string[], cosines: readonly number[], q: string, opts: { limit?: number; threshold?: number | null; tuning?: HybridTuning } = {}) {
  const tuning = opts.tuning ?? T;
  const { docs, stats } = corpus(texts, tuning);
  const query = new QueryTerms(q, tuning);
  const scorer = query.empty ? null : new QueryScorer(query, stats, tuning);
  const uri = (i: number) => `viking://r/${String(i).padStart(3, '0')}`;
  const dense: Array<DenseCandidate<number>> = texts.map((_, i) => ({ key: i, uri: uri(i), cosine: cosines[i]! }));
  const lexical: Array<Candidate<number>> = texts.map((_, i) => ({ key: i, uri: uri(i) }));
  const terms = (keys: readonly number[]) => new Map(keys.map((k) => [k, docs[k]!] as const));
  return {
    docs,
    scorer,
    uri,
    input: { limit: opts.limit ?? 10, dense, lexical, scorer, terms, cosine: (k: number) => cosines[k]!, threshold: opts.threshold ?? null },
    tuning,
  };
}

const WORDS = ['lighthouse', 'keeper', 'harbor', 'harbor', 'notes', 'notes', 'notes', 'Redis', 'timeout', 'pipeline', '魔术', '晚会', '猫', '小猫咪', '奶奶', '苹果派'];
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 8 }).map((xs) => xs.join(' '));
const world = fc
  .record({
    texts: fc.array(text, { minLength: 1, maxLength: 40 }),
    q: text,
    limit: fc.integer({ min: 1, max: 12 }),
    threshold: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
  })
  .chain((w) => fc.record({ w: fc.constant(w), cosines: fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: w.texts.length, maxLength: w.texts.length }) }));

const view = (hits: ReadonlyArray<RankedHit<unknown>>) => hits.map((h) => [h.uri, h.score]);

describe('rank (the shared ranking)', () => {
  it('depends on candidates and features only: not on the order engines list them in, nor on their keys', () => {
    fc.assert(
      fc.property(world, fc.integer(), ({ w, cosines }, seed) => {
        const s = search(w.texts, cosines, w.q, w);
        const want = view(rank(s.input, s.tuning));
        // Another engine: candidates in another order, keyed by strings.
        const shuffle = <X>(xs: X[]) => xs.map((x, i) => ({ x, r: Math.sin(seed + i * 7919) })).sort((a, b) => a.r - b.r).map((p) => p.x);
        const key = (k: number) => `point${(k * 7 + seed) % 1000}:${k}`;
        const index = (k: string) => Number(k.slice(k.indexOf(':') + 1));
        const other = {
          ...s.input,
          dense: shuffle(s.input.dense.map((c) => ({ ...c, key: key(c.key) }))),
          lexical: shuffle(s.input.lexical.map((c) => ({ ...c, key: key(c.key) }))),
          terms: (keys: readonly string[]) => new Map(keys.map((k) => [k, s.docs[index(k)]!] as const)),
          cosine: (k: string) => cosines[index(k)]!,
        };
        expect(view(rank(other, s.tuning))).toEqual(want);
      }),
    );
  });

  it('returns at most `limit` hits, one per URI, scores in [0, 1], non-increasing and at or above the threshold', () => {
    fc.assert(
      fc.property(world, ({ w, cosines }) => {
        const s = search(w.texts, cosines, w.q, w);
        const hits = rank(s.input, s.tuning);
        expect(hits.length).toBeLessThanOrEqual(w.limit);
        expect(new Set(hits.map((h) => h.uri)).size).toBe(hits.length);
        hits.forEach((h, i) => {
          expect(h.score).toBeGreaterThanOrEqual(0);
          expect(h.score).toBeLessThanOrEqual(1);
          if (i > 0) expect(h.score).toBeLessThanOrEqual(hits[i - 1]!.score);
          if (w.threshold !== null) expect(h.score).toBeGreaterThanOrEqual(w.threshold);
        });
        // The threshold only cuts: the hits are the unthresholded hits' first ones.
        const all = rank({ ...s.input, threshold: null }, s.tuning);
        expect(view(hits)).toEqual(view(all.slice(0, hits.length)));
      }),
    );
  });

  it('ranks alike whether the engine supplies the BM25 it computed (summed in its own order) or the ranking computes it from term counts', () => {
    fc.assert(
      fc.property(world, fc.integer({ min: -3, max: 3 }), ({ w, cosines }, ulps) => {
        const s = search(w.texts, cosines, w.q, w);
        if (!s.scorer) return;
        const want = view(rank(s.input, s.tuning));
        // Another summation order moves a score by a few units in the last place.
        const lexical = s.input.lexical.map((c) => ({ ...c, bm25: s.scorer!.bm25(s.docs[c.key]!) * (1 + ulps * Number.EPSILON) }));
        let read = 0;
        const terms = (keys: readonly number[]) => {
          read += keys.length;
          return s.input.terms(keys);
        };
        expect(view(rank({ ...s.input, lexical: lexical.filter((c) => c.bm25 > 0), terms }, s.tuning))).toEqual(want);
        // Term counts are read only for the TF-IDF head and the hits.
        expect(read).toBeLessThanOrEqual(Math.max(10, w.limit * T.legFactor) + w.limit);
      }),
    );
  });

  it('ignores lexical candidates that hold none of the query’s selected terms (an engine may over-generate)', () => {
    fc.assert(
      fc.property(world, ({ w, cosines }) => {
        const s = search(w.texts, cosines, w.q, w);
        const want = view(rank(s.input, s.tuning));
        if (!s.scorer) return;
        const strangers = s.input.lexical.filter((c) => s.scorer!.bm25(s.docs[c.key]!) === 0);
        const without = s.input.lexical.filter((c) => s.scorer!.bm25(s.docs[c.key]!) > 0);
        expect(view(rank({ ...s.input, lexical: [...without, ...strangers, ...strangers] }, s.tuning))).toEqual(want);
        expect(view(rank({ ...s.input, lexical: without }, s.tuning))).toEqual(want);
      }),
    );
  });

  it('keeps each leg to its depth: candidates below the legDepth-th of a leg change nothing', () => {
    const texts = Array.from({ length: 80 }, (_, i) => (i < 60 ? `lighthouse ${'notes '.repeat(1 + (i % 7))}` : 'lighthouse'));
    const cosines = texts.map((_, i) => 1 - i / 100);
    const s = search(texts, cosines, 'lighthouse', { limit: 5 });
    expect(legDepth(5, T)).toBe(50);
    const full = rank(s.input, s.tuning);
    // The 50 best of each leg are the same rows with or without the others.
    const bestLex = [...s.input.lexical].sort((a, b) => s.scorer!.bm25(s.docs[b.key]!) - s.scorer!.bm25(s.docs[a.key]!) || (a.uri < b.uri ? -1 : 1)).slice(0, 50);
    const cut = rank({ ...s.input, dense: s.input.dense.slice(0, 50), lexical: bestLex }, s.tuning);
    expect(view(cut)).toEqual(view(full));
  });

  it('makes one hit of a URI that two keys carry (a document caught mid-swap), keeping the better', () => {
    const s = search(['lighthouse keeper', 'lighthouse keeper notes', 'harbor'], [0.9, 0.8, 0.1], 'lighthouse keeper');
    const dup = { ...s.input, dense: [...s.input.dense, { key: 9, uri: s.uri(0), cosine: 0.2 }], lexical: [...s.input.lexical, { key: 9, uri: s.uri(0) }], terms: (keys: readonly number[]) => new Map(keys.map((k) => [k, s.docs[k === 9 ? 0 : k]!] as const)), cosine: (k: number) => (k === 9 ? 0.2 : [0.9, 0.8, 0.1][k]!) };
    const hits = rank(dup, s.tuning);
    expect(hits.map((h) => [h.key, h.uri])).toEqual([
      [0, s.uri(0)],
      [1, s.uri(1)],
      [2, s.uri(2)],
    ]);
  });
});

describe('fuse', () => {
  // The query comes back to "harbor" five times and names the rarer "lighthouse" once: BM25
  // counts each query term once and prefers the long `beacon` row; TF-IDF weighs the query's
  // repetition and puts the short `harbor` row first.
  const texts = ['lighthouse beacon tower stairs lantern glass', 'the harbor', 'harbor cafe terrace', 'mountain trail', 'garden tomato', 'winter coat'];
  const q = 'harbor harbor harbor harbor harbor lighthouse';

  it('orders the lexical leg by BM25, its head re-ordered by TF-IDF', () => {
    const s = search(texts, texts.map(() => 0), q);
    const lexicalOnly = { ...s.input, dense: [] };
    expect(fuse(lexicalOnly, T).map((h) => h.key)).toEqual([1, 0, 2]);
    expect(fuse(lexicalOnly, { ...T, lexicalRerankDepth: 0 }).map((h) => h.key)).toEqual([0, 1, 2]);
  });

  it('fuses the legs by weighted reciprocal rank', () => {
    const s = search(texts, [0.1, 0.2, 0.3, 0.9, 0.8, 0.7], q);
    // lexical 8/(20+r) dominates: the lexical hits first, then the dense-only ones by cosine.
    expect(fuse(s.input, T).map((h) => h.key)).toEqual([1, 0, 2, 3, 4, 5]);
    expect(fuse(s.input, { ...T, lexicalWeight: 0.01 }).map((h) => h.key)).toEqual([3, 4, 5, 2, 1, 0]);
  });

  it('breaks ties on the URI, never on the engine’s key', () => {
    const s = search(['same words', 'same words', 'same words'], [0.5, 0.5, 0.5], 'same words');
    const byUri = { ...s.input, dense: s.input.dense.map((c, i) => ({ ...c, uri: `viking://r/${'cba'[i]}` })), lexical: s.input.lexical.map((c, i) => ({ ...c, uri: `viking://r/${'cba'[i]}` })) };
    expect(fuse(byUri, T).map((h) => h.uri)).toEqual(['viking://r/a', 'viking://r/b', 'viking://r/c']);
  });
});

describe('documentPool and takeDocuments', () => {
  it.each([
    [0, 0],
    [1, 3],
    [10, 30],
    [40, 120],
    [100, 300],
    [500, 700],
  ])('ranks %p documents from a pool of %p rows', (limit, rows) => {
    expect(documentPool(limit)).toBe(rows);
  });

  it('keeps the hits up to the first row of the limit + 1-th document', () => {
    const hits = ['a#1', 'b', 'a#2', 'c#1', 'b', 'c#2', 'd', 'a#3'];
    const doc = (h: string) => h.split('#')[0]!;
    expect(takeDocuments(hits, 2, doc)).toEqual(['a#1', 'b', 'a#2']);
    expect(takeDocuments(hits, 3, doc)).toEqual(['a#1', 'b', 'a#2', 'c#1', 'b', 'c#2']);
    expect(takeDocuments(hits, 9, doc)).toEqual(hits);
    expect(takeDocuments(hits, 0, doc)).toEqual([]);
  });

  it('leaves collapsing into documents unchanged: the same first `limit` documents with the same best scores', () => {
    const hit = fc.record({ doc: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'), score: fc.double({ min: 0, max: 1, noNaN: true }) });
    fc.assert(
      fc.property(fc.array(hit, { maxLength: 30 }), fc.integer({ min: 0, max: 8 }), (xs, limit) => {
        const hits = [...xs].sort((a, b) => b.score - a.score);
        const collapse = (hs: typeof hits) => {
          const best = new Map<string, number>();
          for (const h of hs) if (!best.has(h.doc)) best.set(h.doc, h.score);
          return [...best].slice(0, limit);
        };
        expect(collapse(takeDocuments(hits, limit, (h) => h.doc))).toEqual(collapse(hits));
      }),
    );
  });
});

describe('calibrate', () => {
  const keys = (n: number) => Array.from({ length: n }, (_, k) => ({ key: k, uri: String(k) }));

  it('scores each hit by the relevance model of its features: cosine, coverage and TF-IDF (its fused rank reported, not scored)', () => {
    const s = search(['the deployment pipeline failed at startup, twice', 'sourdough bread recipe'], [0.5, 0.1], 'deployment pipeline startup');
    const hits = calibrate(keys(2), s.input, T);
    expect(hits.map((h) => h.key)).toEqual([0, 1]);
    expect(hits[0]!.features).toEqual({ cosine: 0.5, coverage: expect.closeTo(1, 12), tfidf: s.scorer!.relevance(s.docs[0]!), tfidfRel: 1, rank: 0 });
    expect(hits[1]!.features).toEqual({ cosine: 0.1, coverage: 0, tfidf: 0, tfidfRel: 0, rank: 1 });
    for (const h of hits) expect(h.score).toBe(relevanceScore(h.features, T.relevance));
    // The page that holds the whole question is evidence; the unrelated one is noise.
    expect(hits[0]!.score).toBeGreaterThanOrEqual(NOISE_FLOOR_SCORE);
    expect(hits[1]!.score).toBeLessThan(NOISE_FLOOR_SCORE);
  });

  it('uses the lexical set cosine without a dense leg', () => {
    const s = search(['lighthouse keeper', 'lighthouse'], [0, 0], 'lighthouse keeper');
    const hits = calibrate(keys(2), { ...s.input, cosine: null }, s.tuning);
    expect(hits.map((h) => h.features.cosine)).toEqual([expect.closeTo(1, 12), expect.closeTo(Math.SQRT1_2, 12)]);
  });

  it('weighs TF-IDF against the best hit of the search, so a store where every row holds the term scores like a large one', () => {
    // "deploy" is in every row of the small store: its IDF, and so every absolute TF-IDF, is tiny.
    const small = search(['we deploy the billing service', 'deploy one service at a time', 'deploy via blue/green'], [0.5, 0.45, 0.4], 'deploy');
    const hits = calibrate(keys(3), small.input, T);
    expect(Math.max(...hits.map((h) => h.features.tfidf))).toBeLessThan(0.05);
    expect(Math.max(...hits.map((h) => h.features.tfidfRel))).toBe(1);
    for (const h of hits) expect(h.score).toBeGreaterThanOrEqual(NOISE_FLOOR_SCORE);
  });

  it('takes the lexical features from the cosine when the query has no lexical side', () => {
    const s = search(['lighthouse keeper', 'harbor'], [0.9, 0.2], 'the of and');
    expect(s.scorer).toBeNull();
    const hits = calibrate(keys(2), s.input, T);
    expect(hits.map((h) => [h.features.coverage, h.features.tfidf])).toEqual([
      [0.9, 0.9],
      [0.2, 0.2],
    ]);
    expect(hits[0]!.score).toBeGreaterThan(0.9);
  });

  it('returns the hits best score first: a stronger hit fused below a weaker one moves up, equal evidence ties and keeps the fused order', () => {
    const s = search(['lighthouse keeper', 'lighthouse', 'lighthouse'], [0.9, 0.1, 0.1], 'lighthouse keeper');
    const order = calibrate([2, 1, 0].map((k) => ({ key: k, uri: String(k) })), s.input, T);
    // 0 holds more evidence; 2 and 1 hold the same: one score, in the fused order.
    expect(order.map((h) => h.key)).toEqual([0, 2, 1]);
    expect(order[0]!.score).toBeGreaterThan(order[1]!.score);
    expect(order[1]!.score).toBe(order[2]!.score);
    expect(order.map((h) => h.features.rank)).toEqual([2, 0, 1]);
  });

  it('drops the hits below the threshold', () => {
    const s = search(['a b', 'c d', 'e f'], [0.9, 0.5, 0.4], 'zzz');
    const all = calibrate(keys(3), s.input, T);
    const cut = (all[0]!.score + all[1]!.score) / 2;
    expect(calibrate(keys(3), { ...s.input, threshold: cut }, T).map((h) => h.key)).toEqual([all[0]!.key]);
  });
});

describe('QueryScorer', () => {
  it('leaves out a term in most rows when a rarer one exists, and keeps it when none does', () => {
    const texts = Array.from({ length: 10 }, (_, i) => `notes ${i === 4 ? 'lighthouse' : 'harbor'}`);
    const { stats } = corpus(texts);
    expect(new QueryScorer(new QueryTerms('notes lighthouse', T), stats, T).selected.map((t) => t.term)).toEqual(['lighthous']);
    expect(new QueryScorer(new QueryTerms('notes', T), stats, T).selected.map((t) => t.term)).toEqual(['note']);
  });

  it('keeps the rarest terms within the term cap and the postings budget (the rarest always)', () => {
    const texts = Array.from({ length: 100 }, (_, i) => `alpha ${i < 2 ? 'bravo' : ''} ${i < 5 ? 'charlie' : ''} ${i < 40 ? 'delta' : ''}`);
    const { stats } = corpus(texts);
    const q = new QueryTerms('delta charlie bravo alpha', T);
    expect(new QueryScorer(q, stats, T).selected.map((t) => t.term)).toEqual(['bravo', 'charli', 'delta']);
    expect(new QueryScorer(q, stats, { ...T, maxQueryTerms: 2 }).selected.map((t) => t.term)).toEqual(['bravo', 'charli']);
    expect(new QueryScorer(q, stats, { ...T, maxQueryPostings: 6 }).selected.map((t) => t.term)).toEqual(['bravo']);
    expect(new QueryScorer(q, stats, { ...T, maxQueryPostings: 1 }).selected.map((t) => t.term)).toEqual(['bravo']);
  });

  it('counts a capitalised query term round(capitalizedWeight) times in BM25, and CJK unigrams in their own class', () => {
    const q = new QueryTerms('Bart 魔术', T);
    expect(q.terms).toEqual([
      { cls: 0, term: 'bart', repeat: 2 },
      { cls: 0, term: '魔术', repeat: 1 },
      { cls: 1, term: '魔', repeat: 1 },
      { cls: 1, term: '术', repeat: 1 },
    ]);
  });

  it('has no lexical side for a text without terms, and a zero BM25 for a corpus without rows', () => {
    expect(new QueryTerms('the of and', T).empty).toBe(true);
    const s = new QueryScorer(new QueryTerms('lighthouse', T), { docs: 0, tokens: 0, df: () => 0 }, T);
    expect([s.selected, s.tfidf, s.bm25(DocTerms.ofText('lighthouse', 0.6))]).toEqual([[], null, 0]);
  });
});
