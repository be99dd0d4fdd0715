import type { SearchQuery } from '../ports/vector-index';
import type { DenseAnn } from './ann';
import type { RowPredicate } from './filter';
import type { Plan } from './plan';
import { type ScanCache, type Shard, type SlotRange, unit } from './scan-cache';
import { vecBlob } from './rows';
import { TopK, mergeRanges } from './top-k';

/**
 * The dense leg of one batch: one approximate cosine per (distinct query vector, row in
 * scope), computed by the WebAssembly SIMD kernel over the int8 copies of the rows
 * (`VectorRows.approxDots`) across the union of the contiguous slot ranges the batch's searches
 * need; then each search's top-k by those cosines (a threshold pass, or a typed-array heap),
 * re-scored exactly ({@link denseTopK}). The scan reads a quarter of the bytes of an f32 scan;
 * on the 2-core machine the int8 kernel alone ran 12–13 billion multiply-adds a second over
 * 52,000 rows and over 509,000 alike, so it is bound by its instructions, not by memory.
 */
export class DenseBatch {
  /** Per query: the content key of its vector, or null when it has no usable dense leg. */
  readonly keys: Array<string | null>;
  private readonly scores = new Map<string, Map<Shard, Float32Array>>();
  private readonly units = new Map<string, Float32Array>();

  /**
   * Compute the cosines every query of the batch needs.
   * @param skip queries whose dense leg is answered otherwise (the ANN index)
   */
  constructor(queries: readonly SearchQuery[], plans: readonly Plan[], skip: (qi: number) => boolean = () => false) {
    const keyOf = new Map<Float32Array, string | null>();
    this.keys = queries.map((q, qi) => {
      if (!q.vector || !plans[qi].shard || !(q.limit > 0) || skip(qi)) return null;
      let key = keyOf.get(q.vector);
      if (key === undefined) {
        let n2 = 0;
        for (let i = 0; i < q.vector.length; i++) n2 += q.vector[i] * q.vector[i];
        // Content, not identity: callers may embed the same text twice.
        key = n2 > 0 ? vecBlob(q.vector).toString('base64') : null;
        keyOf.set(q.vector, key);
      }
      return key;
    });
    const need = new Map<string, Map<Shard, { q: Float32Array; ranges: SlotRange[]; tail: boolean }>>();
    queries.forEach((q, qi) => {
      const key = this.keys[qi];
      if (key === null) return;
      const { ranges, tail } = plans[qi];
      const shard = plans[qi].shard as Shard;
      const byShard = need.get(key) ?? new Map<Shard, { q: Float32Array; ranges: SlotRange[]; tail: boolean }>();
      need.set(key, byShard);
      const cur = byShard.get(shard) ?? { q: q.vector as Float32Array, ranges: [], tail: false };
      byShard.set(shard, cur);
      cur.ranges.push(...ranges);
      cur.tail ||= tail.length > 0;
    });
    for (const [key, byShard] of need) {
      const out = new Map<Shard, Float32Array>();
      this.scores.set(key, out);
      for (const [shard, { q, ranges, tail }] of byShard) {
        // Rows are stored unit-length, so with a unit query the kernel's dot products are cosines.
        const uq = unit(q);
        this.units.set(key, uq);
        const scores = new Float32Array(shard.size);
        for (const [lo, hi] of mergeRanges(tail ? [...ranges, [shard.sortedUpTo, shard.size]] : ranges)) shard.vectors.approxDots(uq, lo, hi, scores);
        out.set(shard, scores);
      }
    }
  }

  /**
   * Approximate cosines by slot of query `qi`'s shard (only slots in its scope are computed;
   * exact where the rows have no int8 copy), or null. Give them to {@link denseTopK}; score a
   * row with `shard.vectors.dot(unitQuery(qi), slot)`.
   */
  cosines(qi: number, shard: Shard): Float32Array | null {
    const key = this.keys[qi];
    return key === null ? null : (this.scores.get(key)?.get(shard) ?? null);
  }

  /** The unit query vector of query `qi`, or null when it has no dense leg here. */
  unitQuery(qi: number): Float32Array | null {
    const key = this.keys[qi];
    return key === null ? null : (this.units.get(key) ?? null);
  }
}

/**
 * Candidates taken from the approximate scan per wanted row before the exact re-scoring (the
 * first pass). The second pass re-scores the rows whose error bound still reaches the k-th exact
 * score, so the answer is exact whatever this is; it only sets how the work splits. At 2, a
 * 360-row leg over the 52,000 rows of a 10,000-document tree re-scores 720 rows first and about
 * 20 more in the second pass, where 4 re-scored 1,440 (and ran 0.6 ms slower a search).
 */
export const RESCORE_FACTOR = 2;
/** At least this many candidates are re-scored in the first pass, whatever k. */
export const RESCORE_MIN = 64;

/**
 * The best `k` live slots in scope by exact cosine (`shard.vectors.dot(uq, slot)`), best first,
 * ties to the lower slot.
 *
 * With `uq`, `cosines` are the approximate ones of {@link DenseBatch} (the int8 scan, or the f32
 * kernel's float32 sums where the shard has no int8 copy), and the answer is still exactly the
 * exact top k: the best `max(k × RESCORE_FACTOR, RESCORE_MIN)` by approximate cosine (`k` over
 * the f32 scan) are scored exactly, which gives the k-th exact score T among them; then every
 * other row in scope whose approximate cosine plus its error bound
 * (`shard.vectors.approxBound(uq)`) reaches T is scored exactly too. A row left out has an exact
 * cosine below T, so k scored rows beat it. Without `uq`, `cosines` are taken as exact.
 * @param tail unsorted slots in scope (tested one by one)
 * @param uq the unit query vector, when `cosines` are approximate
 */
export function denseTopK(cosines: Float32Array, shard: Shard, ranges: readonly SlotRange[], tail: readonly number[], pred: RowPredicate, k: number, uq: Float32Array | null = null): number[] {
  if (!uq) return topByScore(cosines, shard, ranges, tail, pred, k).slots;
  const vectors = shard.vectors;
  const depth = vectors.quantized ? Math.max(k * RESCORE_FACTOR, RESCORE_MIN) : k;
  const first = topByApprox(cosines, shard, ranges, tail, pred, depth);
  const slots = first.slots;
  const exact = slots.map((s) => vectors.dot(uq, s));
  // Fewer candidates than asked for: they are every row in scope.
  if (slots.length === depth && k > 0) {
    // T, the k-th best exact score so far: it only rises as rows are scored, and the bar with it.
    const best = new TopK(k);
    for (let i = 0; i < slots.length; i++) best.push(slots[i]!, exact[i]!);
    const bound = vectors.approxBound(uq);
    let t = best.floor;
    let reach = t - bound.max;
    // Every other row's approximate cosine is at most the candidates' lowest: when that cannot reach T, none can.
    if (first.floor >= reach) {
      const taken = new Set(slots);
      const live = shard.live;
      const consider = (s: number): void => {
        if (cosines[s]! + bound.at(s) < t || taken.has(s)) return;
        const e = vectors.dot(uq, s);
        taken.add(s);
        slots.push(s);
        exact.push(e);
        best.push(s, e);
        if (best.floor > t) {
          t = best.floor;
          reach = t - bound.max;
        }
      };
      for (const [lo, hi] of ranges) {
        for (let s = lo; s < hi; s++) if (cosines[s]! >= reach && live[s] && pred(s)) consider(s);
      }
      for (const s of tail) if (cosines[s]! >= reach && pred(s)) consider(s);
    }
  }
  const order = slots.map((_, i) => i).sort((a, b) => exact[b]! - exact[a]! || slots[a]! - slots[b]!);
  return order.slice(0, k).map((i) => slots[i]!);
}

/** Rows per wanted one in the ranges from which {@link topByApprox} takes a threshold pass instead of the heap. */
const THRESHOLD_PASS_FROM = 4;
/** Rows of the ranges {@link topByApprox} samples for its threshold (every `step`-th), at most. */
const THRESHOLD_SAMPLE = 16_384;

/**
 * The best `k` rows in scope by approximate cosine (ties in any order) and the lowest score
 * among them, as {@link topByScore} finds them, without a heap over every row: a threshold that
 * the k-th best very likely reaches is read off a sample of the ranges (every `step`-th row,
 * scope not tested: the best `1.5 · k · m / n + 8` of `m` sampled rows), then one pass keeps
 * the rows in scope at or above it and a sort of those few takes the best k. When fewer than k
 * rows in scope reach it (a narrow scope, dead rows in the sample), the heap runs as before.
 * Exact either way: every row of the top k scores at least the k-th best, which is at least the
 * threshold when k rows in scope reach it. At 509,367 rows the heap's pass took 3.3 ms a
 * search; with this one {@link denseTopK} went from 5.98 to 5.19 ms (at 52,482 rows: the same).
 */
function topByApprox(cosines: Float32Array, shard: Shard, ranges: readonly SlotRange[], tail: readonly number[], pred: RowPredicate, k: number): { slots: number[]; floor: number } {
  let n = 0;
  for (const [lo, hi] of ranges) n += hi - lo;
  if (!(k > 0) || n < THRESHOLD_PASS_FROM * k) return topByScore(cosines, shard, ranges, tail, pred, k);
  const step = Math.max(1, Math.floor(n / THRESHOLD_SAMPLE));
  let m = 0;
  for (const [lo, hi] of ranges) m += Math.ceil((hi - lo) / step);
  const sample = new TopK(Math.min(m, Math.ceil((1.5 * k * m) / n) + 8));
  for (const [lo, hi] of ranges) for (let s = lo; s < hi; s += step) sample.push(s, cosines[s]!);
  const threshold = sample.floor;
  const live = shard.live;
  const picked: number[] = [];
  for (const [lo, hi] of ranges) {
    for (let s = lo; s < hi; s++) if (cosines[s]! >= threshold && live[s] && pred(s)) picked.push(s);
  }
  for (const s of tail) if (cosines[s]! >= threshold && pred(s)) picked.push(s);
  if (picked.length < k) return topByScore(cosines, shard, ranges, tail, pred, k);
  picked.sort((a, b) => cosines[b]! - cosines[a]!);
  const slots = picked.slice(0, k);
  return { slots, floor: cosines[slots[k - 1]!]! };
}

/** The best `k` by `cosines` (ties as the heap keeps them), and the lowest score among them. */
function topByScore(cosines: Float32Array, shard: Shard, ranges: readonly SlotRange[], tail: readonly number[], pred: RowPredicate, k: number): { slots: number[]; floor: number } {
  const top = new TopK(k);
  const live = shard.live;
  let floor = top.floor;
  for (const [lo, hi] of ranges) {
    for (let s = lo; s < hi; s++) {
      const c = cosines[s];
      // The floor test first: most rows lose on score before the filter is evaluated.
      if (c > floor && live[s] && pred(s)) {
        top.push(s, c);
        floor = top.floor;
      }
    }
  }
  for (const s of tail) if (pred(s)) top.push(s, cosines[s]);
  const slots = top.sorted();
  return { slots, floor: slots.length > 0 ? cosines[slots[slots.length - 1]!]! : -Infinity };
}

/**
 * The dense leg of one search from the ANN index: its candidates (`oversample` per wanted row)
 * and the rows not indexed yet, filtered by the search's scope and re-scored exactly from the
 * scan cache's vectors, best first.
 * @returns null when the candidates do not fill `k` rows in scope (the caller scans exactly)
 */
export function annTopK(ann: DenseAnn, uq: Float32Array, shard: Shard, inScope: (slot: number) => boolean, where: ScanCache['where'], k: number): number[] | null {
  const want = k * ann.opts.oversample;
  const ids = ann.search(uq, want);
  const top = new TopK(k);
  const consider = (id: number): boolean => {
    const w = where.get(id);
    if (!w || w.shard !== shard || shard.live[w.slot] !== 1 || !inScope(w.slot)) return false;
    top.push(w.slot, shard.vectors.dot(uq, w.slot));
    return true;
  };
  let found = 0;
  for (const id of ids) if (consider(id)) found++;
  // Unless the index returned all it holds, the candidates must fill the scope: else scan exactly.
  if (found < k && ids.length >= want) return null;
  for (const id of ann.pending) consider(id);
  return top.sorted();
}
