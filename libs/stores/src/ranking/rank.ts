import type { HybridTuning } from '../tuning';
import { monotoneScores, reciprocalRankFusion } from './fusion';
import type { QueryScorer } from './query';
import { DocTerms } from './terms';

/**
 * The ranking both VectorIndex engines share. An engine only *generates candidates* — its dense
 * leg's best rows by cosine and its lexical leg's best rows by BM25, each {@link legDepth} deep,
 * under the search's filters — and supplies the *features* of rows (their cosine with the
 * query, their {@link DocTerms}) and of the account ({@link CorpusStats} behind the
 * {@link QueryScorer}). From those alone this module orders each leg, fuses the legs, scores
 * the hits and applies the threshold, so a corpus ranks and scores the same on every engine.
 *
 * Rows are told apart by their URI, never by the engine's key: ties break on it, and a URI
 * that shows up under two keys (a document caught mid-swap in an engine without transactions)
 * is one hit, the better one. Two phases, so an engine that fetches features over the network
 * asks only for what each needs: {@link fuse} (the order, the top `limit` rows) and
 * {@link calibrate} (their scores).
 */

/** A candidate row of one leg. */
export interface Candidate<K> {
  /** The engine's handle of the row (a slot, a point id); compared as a `Map` key. */
  key: K;
  /** The row's URI (unique within an account). */
  uri: string;
}

/** A candidate of the dense leg, with its cosine to the query. */
export interface DenseCandidate<K> extends Candidate<K> {
  cosine: number;
}

/** A candidate of the lexical leg. */
export interface LexicalCandidate<K> extends Candidate<K> {
  /**
   * Its BM25 when the engine computed it while finding the candidate — the same function as
   * {@link QueryScorer.bm25} over the scorer's selected terms and the account's statistics (the
   * embedded block-max index sums exactly that; a property test holds the two together). When
   * absent the ranking computes it from the row's term counts.
   */
  bm25?: number;
}

/** The term counts of rows by key (rows missing from the map have no terms). */
export type TermsOf<K> = (keys: readonly K[]) => ReadonlyMap<K, DocTerms>;

/** What {@link fuse} ranks. */
export interface FuseInput<K> {
  /** Hits wanted (≥ 1). */
  limit: number;
  /** The dense leg's candidates, in any order (empty when the search has no dense leg). */
  dense: ReadonlyArray<DenseCandidate<K>>;
  /** The lexical leg's candidates, in any order (empty when the search has no text). */
  lexical: ReadonlyArray<LexicalCandidate<K>>;
  /** The query's text against the account (null when it has no lexical term). */
  scorer: QueryScorer | null;
  /** Term counts of lexical candidates: those without a `bm25`, and the head the TF-IDF re-ranking reads. */
  terms: TermsOf<K>;
}

/** What {@link calibrate} scores the fused hits with. */
export interface CalibrateInput<K> {
  /** The query's text against the account (null when it has no lexical term). */
  scorer: QueryScorer | null;
  /** A hit's dense cosine, when the search has a dense leg (null: the scores are lexical). */
  cosine: ((key: K) => number) | null;
  /** Term counts of the hits. */
  terms: TermsOf<K>;
  /** Minimum score, or none. */
  threshold?: number | null;
}

/** A scored hit. */
export interface RankedHit<K> extends Candidate<K> {
  /** Calibrated relevance in [0, 1], non-increasing along the hits. */
  score: number;
}

/** Smallest lexical head re-ordered by TF-IDF whatever the limit (when `lexicalRerankDepth` allows it). */
const MIN_RERANK_DEPTH = 10;

const EMPTY = new DocTerms({ main: new Map(), minor: new Map() }, 0);

/** Candidates taken from each leg for a limit: `max(legMin, limit × legFactor)`. */
export function legDepth(limit: number, tuning: Pick<HybridTuning, 'legMin' | 'legFactor'>): number {
  return Math.max(tuning.legMin, Math.floor(limit) * tuning.legFactor);
}

function byUri(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The dense leg in order: cosine descending, then URI; at most `k`. */
export function orderDense<K>(dense: ReadonlyArray<DenseCandidate<K>>, k: number): Array<DenseCandidate<K>> {
  const cos = (c: DenseCandidate<K>): number => (Number.isFinite(c.cosine) ? c.cosine : -Infinity);
  return uniqueKeys(dense)
    .sort((a, b) => cos(b) - cos(a) || byUri(a.uri, b.uri))
    .slice(0, k);
}

/**
 * A BM25 score as the lexical order compares it: rounded to 1e-9, so that two evaluations of
 * one sum in different orders (an engine's index, the ranking's term counts) cannot split a tie
 * that the URI should break.
 */
export function bm25Key(score: number): number {
  return Math.round(score * 1e9) / 1e9;
}

/**
 * The lexical leg in order: the candidates holding a selected query term by BM25 descending
 * (compared by {@link bm25Key}, then URI), at most `legDepth`; the head — `lexicalRerankDepth`
 * rows, at most `legFactor × limit` and at least 10 — re-ordered by TF-IDF relevance (ties keep
 * the BM25 order): rows deeper than that seldom reach a small search's results.
 */
export function orderLexical<K>(
  input: Pick<FuseInput<K>, 'lexical' | 'scorer' | 'terms' | 'limit'>,
  tuning: Pick<HybridTuning, 'legMin' | 'legFactor' | 'lexicalRerankDepth'>,
): Array<Candidate<K>> {
  const { scorer } = input;
  if (!scorer || input.lexical.length === 0) return [];
  const cands = uniqueKeys(input.lexical);
  const unscored = cands.filter((c) => c.bm25 === undefined).map((c) => c.key);
  const counted = unscored.length > 0 ? input.terms(unscored) : new Map<K, DocTerms>();
  const scored = cands
    .map((c) => ({ c, s: bm25Key(c.bm25 ?? scorer.bm25(counted.get(c.key) ?? EMPTY)) }))
    .filter((x) => x.s > 0);
  scored.sort((a, b) => b.s - a.s || byUri(a.c.uri, b.c.uri));
  const list = scored.slice(0, legDepth(input.limit, tuning)).map((x) => x.c);
  const depth = Math.min(list.length, Math.floor(tuning.lexicalRerankDepth), Math.max(MIN_RERANK_DEPTH, Math.floor(input.limit) * tuning.legFactor));
  if (!scorer.tfidf || !(depth > 1)) return list;
  const headKeys = list.slice(0, depth).map((c) => c.key);
  const docs = headKeys.every((k) => counted.has(k)) ? counted : input.terms(headKeys);
  const head = list.slice(0, depth).map((c, i) => ({ c, i, r: scorer.relevance(docs.get(c.key) ?? EMPTY) }));
  head.sort((a, b) => b.r - a.r || a.i - b.i);
  return [...head.map((h) => ({ key: h.c.key, uri: h.c.uri })), ...list.slice(depth).map((c) => ({ key: c.key, uri: c.uri }))];
}

/**
 * The order of one search: each leg ordered ({@link orderDense}, {@link orderLexical}), fused
 * by weighted reciprocal-rank fusion (`rrfK`, `denseWeight`, `lexicalWeight`), one hit per URI,
 * the first `limit`.
 */
export function fuse<K>(input: FuseInput<K>, tuning: HybridTuning): Array<Candidate<K>> {
  const limit = Math.floor(input.limit);
  if (!(limit > 0)) return [];
  const dense = orderDense(input.dense, legDepth(limit, tuning));
  const lexical = orderLexical(input, tuning);
  const uriOf = new Map<K, string>();
  const lists: K[][] = [];
  const weights: number[] = [];
  for (const [list, w] of [
    [dense, tuning.denseWeight],
    [lexical, tuning.lexicalWeight],
  ] as const) {
    if (list.length === 0) continue;
    for (const c of list) uriOf.set(c.key, c.uri);
    lists.push(list.map((c) => c.key));
    weights.push(w);
  }
  const out: Array<Candidate<K>> = [];
  const seen = new Set<string>();
  for (const { id } of reciprocalRankFusion(lists, { k: tuning.rrfK, weights })) {
    const uri = uriOf.get(id) as string;
    if (seen.has(uri)) continue;
    seen.add(uri);
    out.push({ key: id, uri });
    if (out.length >= limit) break;
  }
  return out;
}

/**
 * Scores of fused hits: each hit's raw relevance — its dense cosine, or without a dense leg
 * the lexical set cosine ({@link QueryScorer.setCosine}) — raised to the coverage floor
 * `coverageWeight × coverage^coveragePower` (a page that holds the whole question scores like
 * a good match even when the cosine is diluted by everything else it says), then smoothed into
 * a non-increasing sequence in [0, 1] along the fused order ({@link monotoneScores}); hits
 * from the first one below `threshold` on are dropped.
 */
export function calibrate<K>(hits: ReadonlyArray<Candidate<K>>, input: CalibrateInput<K>, tuning: Pick<HybridTuning, 'coverageWeight' | 'coveragePower'>): Array<RankedHit<K>> {
  if (hits.length === 0) return [];
  const { scorer, cosine } = input;
  const cw = tuning.coverageWeight;
  const needTerms = (cosine === null && scorer !== null) || (cw > 0 && scorer?.tfidf);
  const docs = needTerms ? input.terms(hits.map((h) => h.key)) : new Map<K, DocTerms>();
  const doc = (k: K): DocTerms => docs.get(k) ?? EMPTY;
  let raw = hits.map((h) => (cosine ? cosine(h.key) : scorer ? scorer.setCosine(doc(h.key)) : 0));
  if (cw > 0 && scorer?.tfidf) {
    const cp = tuning.coveragePower;
    raw = raw.map((r, i) => Math.max(r, cw * Math.pow(scorer.coverage(doc(hits[i]!.key)), cp)));
  }
  const scores = monotoneScores(raw);
  const threshold = input.threshold ?? null;
  const out: Array<RankedHit<K>> = [];
  for (let i = 0; i < hits.length; i++) {
    if (threshold !== null && !(scores[i]! >= threshold)) break;
    out.push({ key: hits[i]!.key, uri: hits[i]!.uri, score: scores[i]! });
  }
  return out;
}

/** {@link fuse} then {@link calibrate}, for an engine whose features are at hand. */
export function rank<K>(input: FuseInput<K> & Omit<CalibrateInput<K>, 'scorer' | 'terms'>, tuning: HybridTuning): Array<RankedHit<K>> {
  return calibrate(fuse(input, tuning), input, tuning);
}

/** The candidates with each key once (its first occurrence), as a new array. */
function uniqueKeys<T extends { key: unknown }>(xs: ReadonlyArray<T>): T[] {
  const seen = new Set<unknown>();
  const out: T[] = [];
  for (const x of xs) {
    if (seen.has(x.key)) continue;
    seen.add(x.key);
    out.push(x);
  }
  return out;
}
