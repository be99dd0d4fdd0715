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
 * The fused value is an ordering, not a relevance: use {@link monotoneScores} for a score.
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

/**
 * Best non-increasing fit (least squares, pool-adjacent-violators) of `raw` relevances taken
 * in the fused order. The result keeps the fused order *and* stays on the raw scale: a run
 * where a weaker-looking hit was fused above a stronger one is replaced by the run's mean.
 * This is what lets a hybrid search return a cosine-like `score` that clients can threshold
 * while still sorting exactly as the fusion decided.
 * @param raw relevances in fused order (each clamped to [0, 1] first)
 * @returns non-increasing scores, same length
 */
export function monotoneScores(raw: readonly number[]): number[] {
  const vals: number[] = [];
  const sizes: number[] = [];
  for (const r of raw) {
    let v = Math.min(1, Math.max(0, Number.isFinite(r) ? r : 0));
    let n = 1;
    // Merge while the new block would rise above the previous one.
    while (vals.length > 0 && vals[vals.length - 1] < v) {
      const pv = vals.pop() as number;
      const pn = sizes.pop() as number;
      v = (pv * pn + v * n) / (pn + n);
      n += pn;
    }
    vals.push(v);
    sizes.push(n);
  }
  const out: number[] = [];
  vals.forEach((v, i) => {
    for (let j = 0; j < sizes[i]; j++) out.push(v);
  });
  return out;
}
