import type { HybridTuning } from '../tuning';
import { reciprocalRankFusion } from './fusion';
import type { QueryScorer } from './query';
import { type RelevanceFeatures, type RelevanceModel, relevanceScore } from './relevance';
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
  /** Calibrated relevance in (0, 1), non-increasing along the hits (see `relevance.ts`). */
  score: number;
  /** The evidence the score was computed from. */
  features: RelevanceFeatures;
}

/** Smallest lexical head re-ordered by TF-IDF whatever the limit (when `lexicalRerankDepth` allows it). */
const MIN_RERANK_DEPTH = 10;

const EMPTY = new DocTerms({ main: new Map(), minor: new Map() }, 0);

/**
 * Rows a search ranks when its limit counts documents (`SearchQuery.documents`): passages of one
 * document collapse into it, so `limit + min(2 × limit, 200)` rows are fused and scored — the
 * pool a caller that collapsed them itself used to ask for, so the same documents come out.
 */
export function documentPool(limit: number): number {
  const n = Math.max(0, Math.floor(limit));
  return n + Math.min(2 * n, 200);
}

/**
 * The hits, in their order, up to the first hit of the `limit + 1`-th document: every row of
 * the first `limit` documents that scores above that point. A caller collapsing passages into
 * their documents gets the same `limit` documents, with the same best scores, as from all hits.
 * @param docOf a hit's document (a passage's `docUri`, else its own URI)
 */
export function takeDocuments<T>(hits: readonly T[], limit: number, docOf: (hit: T) => string): T[] {
  const docs = new Set<string>();
  const n = Math.floor(limit);
  let end = 0;
  for (; end < hits.length; end++) {
    const d = docOf(hits[end]!);
    if (docs.has(d)) continue;
    if (docs.size >= n) break;
    docs.add(d);
  }
  return hits.slice(0, end);
}

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
 * Scores of fused hits: each hit's {@link RelevanceFeatures} — its dense cosine (without a dense
 * leg the lexical set cosine, {@link QueryScorer.setCosine}), its coverage of the query's
 * IDF-weighted terms, its TF-IDF relevance (and that against the best hit's) and its fused
 * rank — scored by the tuning's
 * {@link RelevanceModel} (`relevance.ts`: a calibrated relevance with the noise floor at 0.35).
 * The hits are returned best score first (equal scores keep the fused order), so scores are
 * non-increasing along the hits and tie only for equal evidence; those below `threshold` are
 * dropped.
 */
export function calibrate<K>(hits: ReadonlyArray<Candidate<K>>, input: CalibrateInput<K>, tuning: Pick<HybridTuning, 'relevance'>): Array<RankedHit<K>> {
  if (hits.length === 0) return [];
  const { scorer, cosine } = input;
  const docs = scorer !== null ? input.terms(hits.map((h) => h.key)) : new Map<K, DocTerms>();
  const base = hits.map((h, rank) => {
    const d = docs.get(h.key) ?? EMPTY;
    const raw = cosine ? cosine(h.key) : scorer ? scorer.setCosine(d) : 0;
    const c = Number.isFinite(raw) ? raw : 0;
    // A query without a lexical side (an image, only stop words) has no lexical evidence to
    // weigh, which is not evidence against a hit: its lexical features take the cosine's value.
    return scorer ? { cosine: c, coverage: scorer.coverage(d), tfidf: scorer.relevance(d), rank } : { cosine: c, coverage: Math.max(0, c), tfidf: Math.max(0, c), rank };
  });
  let best = 0;
  for (const f of base) best = Math.max(best, f.tfidf);
  const scored = base.map((f, i) => {
    const features: RelevanceFeatures = { ...f, tfidfRel: best > 0 ? f.tfidf / best : 0 };
    return { i, features, score: relevanceScore(features, tuning.relevance) };
  });
  scored.sort((a, b) => b.score - a.score || a.i - b.i);
  const threshold = input.threshold ?? null;
  const out: Array<RankedHit<K>> = [];
  for (const s of scored) {
    if (threshold !== null && !(s.score >= threshold)) break;
    const h = hits[s.i]!;
    out.push({ key: h.key, uri: h.uri, score: s.score, features: s.features });
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
