/**
 * Ranking controls of retrieve (retrieve-contract "Request": `mmr_lambda`, `max_per_document`):
 * a per-document cap over a ranked list, and maximal marginal relevance over candidate
 * passages. Both are greedy and prefix-consistent: the first k of a selection of n > k items is
 * the selection of k, so a caller may ask for a larger pool and cut it later.
 */

/** What the selection needs of a candidate. */
export interface Rankable {
  /** Document the passage belongs to (the cap counts per document). */
  docUri: string;
  /** Relevance in 0..1 (cosine-like). */
  score: number;
}

/**
 * Keep items in order, skipping any whose document already has `maxPerDocument` kept items,
 * until `limit` are kept.
 * @param maxPerDocument at least 1 (smaller values are treated as 1)
 * @param limit items wanted (≤ 0 keeps none)
 */
export function capPerDocument<T extends Rankable>(items: readonly T[], maxPerDocument: number, limit: number): T[] {
  const cap = Math.max(1, Math.floor(maxPerDocument));
  const perDoc = new Map<string, number>();
  const out: T[] = [];
  for (const it of items) {
    if (out.length >= limit) break;
    const n = perDoc.get(it.docUri) ?? 0;
    if (n >= cap) continue;
    perDoc.set(it.docUri, n + 1);
    out.push(it);
  }
  return out;
}

/** Cosine similarity of two vectors (0 when either is missing or zero, or lengths differ). */
export function cosine(a: Float32Array | null | undefined, b: Float32Array | null | undefined): number {
  if (!a || !b || a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/** Options of {@link mmrSelect}. */
export interface MmrOptions {
  /** Relevance/diversity trade-off in 0..1: 1 = pure relevance, 0 = pure diversity. */
  lambda: number;
  /** Items wanted. */
  limit: number;
  /** Per-document cap applied while selecting (≥ 1). */
  maxPerDocument: number;
}

/**
 * Maximal marginal relevance: repeatedly take the candidate maximising
 * `λ·score − (1−λ)·max cosine(candidate, already selected)`, skipping documents at their cap.
 * Ties go to the better-ranked candidate (earlier in `items`), so λ = 1 reproduces the input
 * order under the cap and the first pick is always the best-scored candidate.
 * @param items candidates in rank order (best first)
 * @param vectors dense vectors aligned with `items` (null = unknown: similar to nothing)
 * @returns the selection in pick order
 */
export function mmrSelect<T extends Rankable>(items: readonly T[], vectors: ReadonlyArray<Float32Array | null>, opts: MmrOptions): T[] {
  const lambda = Math.min(1, Math.max(0, opts.lambda));
  const cap = Math.max(1, Math.floor(opts.maxPerDocument));
  const limit = Math.max(0, Math.floor(opts.limit));
  const perDoc = new Map<string, number>();
  // Highest similarity of each remaining candidate to anything selected so far; opposite
  // directions (negative cosine) earn no bonus, so the floor is 0.
  const maxSim = new Float64Array(items.length);
  const taken = new Uint8Array(items.length);
  const out: T[] = [];
  while (out.length < limit) {
    let best = -1;
    let bestValue = -Infinity;
    for (let i = 0; i < items.length; i++) {
      if (taken[i] || (perDoc.get(items[i].docUri) ?? 0) >= cap) continue;
      const value = lambda * items[i].score - (1 - lambda) * maxSim[i];
      if (value > bestValue) {
        bestValue = value;
        best = i;
      }
    }
    if (best < 0) break;
    taken[best] = 1;
    const pick = items[best];
    out.push(pick);
    perDoc.set(pick.docUri, (perDoc.get(pick.docUri) ?? 0) + 1);
    for (let i = 0; i < items.length; i++) {
      if (taken[i]) continue;
      const s = cosine(vectors[i], vectors[best]);
      if (s > maxSim[i]) maxSim[i] = s;
    }
  }
  return out;
}
