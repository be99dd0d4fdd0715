/**
 * Hybrid-search tuning of the shared ranking (`ranking/`), which both VectorIndex adapters call,
 * so the embedded index and Qdrant rank and score alike with the same knobs (defaults tuned on
 * MADial-Bench; see the bench's `madial` section).
 */

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
   * A hit's score is at least `coverageWeight × coverage^coveragePower`,
   * where coverage is the share of the query's IDF-weighted terms (those the account's rows
   * hold at all) that the hit contains. The dense cosine of a lexical embedder penalises a
   * long page that fully answers a short question; clients threshold scores (the plugins send
   * 0.35), so such a page must still score like a good match: a full cover gives 0.7, three
   * quarters 0.45, half 0.25. 0 leaves the cosine alone.
   * @default 0.7
   */
  coverageWeight: number;
  /** Exponent of the coverage floor (see `coverageWeight`). @default 1.5 */
  coveragePower: number;
}

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
  coverageWeight: 0.7,
  coveragePower: 1.5,
});
