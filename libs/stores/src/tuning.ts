/**
 * Hybrid-search tuning shared by both VectorIndex adapters, so the embedded index and Qdrant
 * rank alike (defaults tuned on MADial-Bench; see `scripts/madial-eval.mjs`).
 */

/** Tuning knobs of the hybrid search (dense + lexical legs fused by weighted RRF). */
export interface HybridTuning {
  /** RRF rank constant. @default 50 */
  rrfK: number;
  /** RRF weight of the dense leg. @default 1 */
  denseWeight: number;
  /** RRF weight of the lexical leg (BM25 has IDF, the hashed dense leg has none). @default 3 */
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
  /** At most this many distinct lexical query terms (the rarest by document frequency are kept). @default 48 */
  maxQueryTerms: number;
  /** Lexical query terms in more than this fraction of the account's documents are dropped (they only cost time). @default 0.5 */
  maxTermDocFraction: number;
  /**
   * Postings budget of one lexical query: terms are added rarest first while the sum of their
   * document frequencies stays within it (the rarest term is always kept). Bounds the BM25 cost
   * on large corpora (FTS5 spends about 1.6 µs per matched row, so the default holds the
   * lexical leg near 3 ms); small corpora keep every term. @default 2000
   */
  maxQueryPostings: number;
}

/** Default {@link HybridTuning}. */
export const DEFAULT_TUNING: Readonly<HybridTuning> = Object.freeze({
  rrfK: 50,
  denseWeight: 1,
  lexicalWeight: 3,
  legMin: 50,
  legFactor: 3,
  minorWeight: 0.6,
  capitalizedWeight: 2,
  maxQueryTerms: 48,
  maxTermDocFraction: 0.5,
  maxQueryPostings: 2_000,
});
