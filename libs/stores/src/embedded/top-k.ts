import type { SlotRange } from './scan-cache';

/** Bounded top-k by score (a min-heap on typed arrays), for scanning many rows cheaply. Exported for tests. */
export class TopK {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  private n = 0;
  /** Lowest score kept once full (-Infinity before): a row must beat it to enter. */
  floor = -Infinity;

  constructor(private readonly k: number) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  push(slot: number, score: number): void {
    const { slots, scores, k } = this;
    if (this.n < k) {
      let i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (scores[p] <= score) break;
        scores[i] = scores[p];
        slots[i] = slots[p];
        i = p;
      }
      scores[i] = score;
      slots[i] = slot;
      if (this.n === k) this.floor = scores[0];
      return;
    }
    if (score <= scores[0]) return;
    // Sift the new entry down from the root.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= k) break;
      const r = l + 1;
      const m = r < k && scores[r] < scores[l] ? r : l;
      if (scores[m] >= score) break;
      scores[i] = scores[m];
      slots[i] = slots[m];
      i = m;
    }
    scores[i] = score;
    slots[i] = slot;
    this.floor = scores[0];
  }

  /** Slots best first. */
  sorted(): number[] {
    const idx = Array.from({ length: this.n }, (_, i) => i);
    idx.sort((a, b) => this.scores[b] - this.scores[a]);
    return idx.map((i) => this.slots[i]);
  }
}

/** Merge half-open ranges into ascending, disjoint ones. */
export function mergeRanges(ranges: SlotRange[]): SlotRange[] {
  const sorted = ranges.filter(([lo, hi]) => hi > lo).sort((a, b) => a[0] - b[0]);
  const out: SlotRange[] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1]) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

