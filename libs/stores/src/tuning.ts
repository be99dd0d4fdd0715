/**
 * Hybrid-search tuning of the shared ranking (`ranking/`), which both VectorIndex adapters call,
 * so the embedded index and Qdrant rank and score alike with the same knobs (defaults tuned on
 * MADial-Bench; see the bench's `madial` section).
 */

import type { RelevanceModel } from './ranking/relevance';

/** Tuning knobs of the hybrid search (dense + lexical legs fused by weighted RRF). */
export interface HybridTuning {
  /** RRF rank constant. @default 20 */
  rrfK: number;
  /** RRF weight of the dense leg. @default 1 */
  denseWeight: number;
  /**
   * RRF weight of the lexical leg. @default 8 — with the built-in lexical embedder the dense leg
   * sees the same words as the lexical leg but without IDF, and on MADial-Bench (per-user
   * candidate pools, `scripts/madial-eval.mjs`) it adds no recall of its own: it breaks ties
   * and is the fallback when no term matches. Deployments whose embedder is a real model should
   * lower it towards 1.
   */
  lexicalWeight: number;
  /** Candidates taken from each leg: `max(legMin, limit × legFactor)`. @default 50 */
  legMin: number;
  /** Multiplier of the search's `limit` in the leg size (see `legMin`). @default 3 */
  legFactor: number;
  /** BM25 weight of CJK unigram terms relative to main terms. @default 0.6 */
  minorWeight: number;
  /**
   * BM25 weight of a query term the query capitalises (a name, title or acronym), as in the
   * `LexicalEmbedder`. FTS5 weighs query terms only by repetition, so it is rounded to an
   * integer count. @default 2
   */
  capitalizedWeight: number;
  /**
   * At most this many distinct lexical query terms weigh in the BM25 leg (the rarest by
   * document frequency are kept). @default 48
   */
  maxQueryTerms: number;
  /** Lexical query terms in more than this fraction of the account's documents are dropped from the BM25 leg when rarer ones exist (they only cost time). @default 0.5 */
  maxTermDocFraction: number;
  /**
   * Postings budget of one lexical query: the BM25 leg's terms are added rarest first while the
   * sum of their document frequencies stays within it (the rarest term is always kept), so a
   * query's cost is bounded whatever the corpus. The embedded block-max index scores a posting
   * in ~35 ns (FTS5, before it, spent ~1.6 µs per matched row with a budget of 2,000): on the
   * `docs` bench profile at 10k documents 20,000 postings cost about 1 ms per search and find
   * the known item in the top 10 for 54 % of queries, against 52 % with 2,000; small corpora
   * keep every term. Qdrant's sparse prefetch looks up every query term; its candidates are then
   * ordered by the same BM25 over the same terms.
   * @default 20000
   */
  maxQueryPostings: number;
  /**
   * The first this-many rows of a search's BM25 list (and at most `legFactor × limit` of them,
   * at least 10) are re-ordered by TF-IDF relevance to the query (`TfIdfScorer` in
   * `ranking/terms.ts`); 0 keeps the BM25 order. Each re-ordered row costs a lookup per query
   * term in its term counts (which the engines read or keep anyway for BM25).
   * @default 30
   */
  lexicalRerankDepth: number;
  /**
   * The relevance model every hit is scored with (`ranking/relevance.ts`): a logistic model of
   * the hit's cosine, coverage, matched IDF mass, rank and standing against the search's best
   * hit, fitted on MADial-Bench's training split (`npm run bench -- --only calibration`) and
   * shifted so that the server's noise floor scores 0.35. A deployment whose embedder is not
   * the built-in lexical one should refit it: its cosines live on another scale.
   */
  relevance: RelevanceModel;
}

/**
 * The fitted relevance model (see {@link HybridTuning.relevance}); its weights follow
 * `RELEVANCE_INPUTS`. Fitted by the bench's `calibration` section on MADial-Bench's training
 * split; the held-out figures are in bench/README.md.
 */
export const DEFAULT_RELEVANCE_MODEL: Readonly<RelevanceModel> = Object.freeze({
  // Fitted on MADial-Bench's training split (dialogues whose index is not a multiple of 3),
  // both languages and query forms; noise floor set on the training dialogues.
  intercept: -1.692,
  weights: Object.freeze([3.7013, 1.379, 0.2957]),
});

/** Default {@link HybridTuning}. */
export const DEFAULT_TUNING: Readonly<HybridTuning> = Object.freeze({
  rrfK: 20,
  denseWeight: 1,
  lexicalWeight: 8,
  legMin: 50,
  legFactor: 3,
  minorWeight: 0.6,
  capitalizedWeight: 2,
  maxQueryTerms: 48,
  maxTermDocFraction: 0.5,
  maxQueryPostings: 20_000,
  lexicalRerankDepth: 30,
  relevance: DEFAULT_RELEVANCE_MODEL,
});
