/**
 * The term weights of the shared ranking: BM25 (the lexical leg's order, as FTS5 computed it
 * before issue 13) and Robertson's IDF (the TF-IDF re-ranking and the coverage floor). One
 * definition for every engine: the embedded block-max index bounds and sums these same
 * functions, and the ranker evaluates them from a hit's term counts.
 */

/** BM25 `k1` and `b`, FTS5's defaults. */
export const BM25_K1 = 1.2;
/** See {@link BM25_K1}. */
export const BM25_B = 0.75;

/** Highest term frequency BM25 counts (a posting stores at most this; a larger one counts as this). */
export const MAX_TF = 255;
/** Highest row length BM25 counts, in tokens (a posting stores at most this). */
export const MAX_LEN = 65_535;

/**
 * BM25's saturated, length-normalised term frequency: `tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen))`.
 * Increasing in `tf` and decreasing in `len`, so the largest frequency and the shortest row of
 * a block bound every posting of it.
 * @param tf weighted term frequency (> 0)
 * @param len row length in tokens
 * @param avgLen mean row length of the account
 */
export function bm25Tf(tf: number, len: number, avgLen: number): number {
  return (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + (BM25_B * len) / avgLen));
}

/**
 * BM25's inverse document frequency as FTS5 computes it: `ln((n − df + 0.5) / (df + 0.5))`,
 * and 1e-6 where that is not positive (a term in half the rows or more).
 */
export function bm25Idf(df: number, n: number): number {
  const idf = Math.log((n - df + 0.5) / (df + 0.5));
  return idf > 0 ? idf : 1e-6;
}

/**
 * Lowest inverse document frequency {@link robertsonIdf} gives. Robertson's IDF is zero or
 * negative for a term in half the documents or more; such a term carries no evidence, but a
 * tiny positive weight keeps a query made only of common terms from having a zero norm.
 */
export const IDF_FLOOR = 0.01;

/**
 * Robertson–Spärck Jones inverse document frequency, the one BM25 uses:
 * `ln((n − df + 0.5) / (df + 0.5))`, floored at {@link IDF_FLOOR}.
 * @param df documents containing the term (≥ 0)
 * @param n documents in the collection (≥ 1)
 */
export function robertsonIdf(df: number, n: number): number {
  const idf = Math.log((n - df + 0.5) / (df + 0.5));
  return Number.isFinite(idf) && idf > IDF_FLOOR ? idf : IDF_FLOOR;
}
