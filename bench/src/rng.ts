/**
 * Deterministic pseudo-randomness for the synthetic corpus: the same seed gives the same bytes
 * on every machine and Node version, so two benchmark runs measure the same data.
 */

/**
 * FNV-1a over the parts (joined with a separator byte), as an unsigned 32-bit seed.
 * Lets every document derive its own stream from (corpus seed, index), so document `i` is the
 * same whatever the corpus size.
 */
export function hashSeed(...parts: Array<string | number>): number {
  let h = 0x811c9dc5;
  const text = parts.join('\u0001');
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A small seeded generator (mulberry32): fast, 32-bit state, good enough for test data. */
export class Rng {
  private state: number;

  /** @param seed any 32-bit integer; equal seeds give equal sequences */
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Next float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A uniformly chosen element. @throws RangeError on an empty list */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /**
   * An element chosen with a Zipf-like skew (rank r has weight ≈ 1/(r+1)): a few words are
   * frequent and most are rare, as in real text, so lexical document frequencies look real.
   */
  zipf<T>(items: readonly T[]): T {
    return items[this.zipfIndex(items.length)] as T;
  }

  /** A rank in [0, n) with the skew of {@link zipf}. @throws RangeError when n < 1 */
  zipfIndex(n: number): number {
    if (n < 1) throw new RangeError('pick from an empty list');
    const r = Math.floor(Math.exp(this.next() * Math.log(n + 1))) - 1;
    return Math.min(n - 1, Math.max(0, r));
  }

  /** A key chosen with the given weights (need not sum to 1). */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = Object.entries(weights) as Array<[K, number]>;
    const total = entries.reduce((s, [, w]) => s + w, 0);
    let x = this.next() * total;
    for (const [k, w] of entries) {
      x -= w;
      if (x < 0) return k;
    }
    return entries[entries.length - 1]![0];
  }
}
