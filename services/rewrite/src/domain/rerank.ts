/**
 * Rerank scores as the contract wants them: relevances in 0..1, best first.
 */

/** A scored document (index into the request's documents). */
export interface IndexedScore {
  /** Index of the document in the request. */
  index: number;
  /** Score. */
  score: number;
}

/** Logistic function: maps any real to (0, 1) and keeps the order. */
function sigmoid(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/**
 * Scores in 0..1, sorted descending (ties by request order). Providers that already return
 * relevances (Jina, Cohere, TEI without `raw_scores`) are kept as they are; when any score
 * falls outside 0..1 the provider sent raw cross-encoder logits, and all of them go through
 * the logistic function, which keeps the ranking and makes them comparable with relevances.
 */
export function toRelevances(raw: readonly IndexedScore[]): IndexedScore[] {
  const logits = raw.some((r) => r.score < 0 || r.score > 1);
  return raw
    .map((r) => ({ index: r.index, score: logits ? sigmoid(r.score) : r.score }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}
