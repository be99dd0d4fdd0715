/** Options of {@link reciprocalRankFusion}. */
export interface RrfOptions {
  /** The RRF rank constant k in `w / (k + rank)` (rank from 1). @default 60 */
  k?: number;
  /** Weight of each list, in list order. @default 1 for every list */
  weights?: number[];
}

/**
 * Reciprocal-rank fusion: each id scores `Σ_lists w / (k + rank)` over the lists it appears in
 * (rank 1 = first). Ties keep the order of first appearance (lists in order, then rank). Ids are
 * compared as `Map` keys (numbers, strings).
 * The fused value is an ordering, not a relevance: `calibrate` (rank.ts) scores the hits.
 * @returns ids with their fused value, best first
 */
export function reciprocalRankFusion<K>(lists: ReadonlyArray<readonly K[]>, opts: RrfOptions = {}): Array<{ id: K; rrf: number }> {
  const k = opts.k ?? 60;
  const acc = new Map<K, { id: K; rrf: number; first: number }>();
  let seen = 0;
  lists.forEach((list, li) => {
    const w = opts.weights?.[li] ?? 1;
    list.forEach((id, r) => {
      const cur = acc.get(id);
      const add = w / (k + r + 1);
      if (cur) cur.rrf += add;
      else acc.set(id, { id, rrf: add, first: seen++ });
    });
  });
  return [...acc.values()].sort((a, b) => b.rrf - a.rrf || a.first - b.first).map(({ id, rrf }) => ({ id, rrf }));
}
