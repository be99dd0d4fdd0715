/**
 * Order statistics of latency samples. Every figure the bench reports is one of these (a
 * median, a high percentile) or a ratio of two of them measured in the same run.
 */

/**
 * The q-quantile of `values` by linear interpolation between closest ranks (the "type 7"
 * definition of R and NumPy's default): q = 0.5 is the median.
 * @param q in [0, 1]
 * @returns NaN for an empty sample
 * @throws RangeError when q is outside [0, 1]
 */
export function quantile(values: readonly number[], q: number): number {
  if (!(q >= 0 && q <= 1)) throw new RangeError(`quantile q must be in [0, 1], got ${q}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The median (see {@link quantile}). */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}

/** Summary of a latency sample, in the sample's unit (the bench uses ms). */
export interface Summary {
  /** Sample size. */
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** p50/p95/p99, mean, min and max of a sample; NaN fields for an empty sample. */
export function summarize(values: readonly number[]): Summary {
  const n = values.length;
  if (n === 0) return { n: 0, p50: Number.NaN, p95: Number.NaN, p99: Number.NaN, mean: Number.NaN, min: Number.NaN, max: Number.NaN };
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (const v of values) {
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { n, p50: quantile(values, 0.5), p95: quantile(values, 0.95), p99: quantile(values, 0.99), mean: sum / n, min, max };
}

/** a / b, or NaN when either is not a finite number or b is 0. */
export function ratio(a: number, b: number): number {
  return Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN;
}

/**
 * Round for the report: 3 significant decimals below 10, 2 below 100, 1 above; non-finite
 * values become null (JSON has no NaN).
 */
export function round(v: number): number | null {
  if (!Number.isFinite(v)) return null;
  const a = Math.abs(v);
  const d = a < 10 ? 3 : a < 100 ? 2 : 1;
  const f = 10 ** d;
  return Math.round(v * f) / f;
}

/** {@link Summary} with every field passed through {@link round}. */
export function rounded(s: Summary): Record<keyof Summary, number | null> {
  return { n: s.n, p50: round(s.p50), p95: round(s.p95), p99: round(s.p99), mean: round(s.mean), min: round(s.min), max: round(s.max) };
}

/**
 * Recall@k of an approximate nearest-neighbour answer against the exact one, with ties: the
 * share of the exact top k that the approximate top k matches, where an approximate hit counts
 * when its exact score is at least the exact k-th score (minus `eps`). A hit that ties the k-th
 * exact score is as near as the one the exact scan happened to list, so it is not a miss; a
 * missing neighbour is one miss, not a shift of every rank after it.
 * @param exact exact scores of the exact top k, best first
 * @param approx exact scores of the approximate top k (the ANN leg re-scores its candidates exactly)
 * @param eps score tolerance @default 1e-6
 * @returns 1 when the exact answer is empty
 */
export function recallWithTies(exact: readonly number[], approx: readonly number[], k: number, eps = 1e-6): number {
  const want = Math.min(k, exact.length);
  if (want === 0) return 1;
  const kth = exact[want - 1]!;
  let hit = 0;
  for (let i = 0; i < Math.min(k, approx.length); i++) if (approx[i]! >= kth - eps) hit++;
  return Math.min(want, hit) / want;
}
