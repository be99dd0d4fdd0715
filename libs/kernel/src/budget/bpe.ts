/**
 * Exact BPE token counts in O(n log n), on the ranks and the split pattern of a
 * `gpt-tokenizer` encoding.
 *
 * Why not the library's own count: its merge (`bytePairMerge`) rescans every adjacent pair for
 * each merge, O(n²) in the length of one pre-token piece. Ordinary prose splits into short
 * pieces, but a long run of letters without a space (Chinese prose without punctuation, a
 * base64 blob, a 20,000-character word) or of whitespace is one piece: 50,000 Chinese
 * characters took 10 s and held the event loop the whole time. This module counts the same
 * pieces with the library's ranks, short ones through the library (and its merge cache), long
 * ones with the textbook heap merge — lowest rank first, leftmost among equal ranks, exactly the
 * order tiktoken and gpt-tokenizer merge in — so counts are identical, only the cost changes.
 */

/** The slice of gpt-tokenizer's `BytePairEncodingCore` this counter reads (its public fields). */
export interface BpeCore {
  /** The encoding's pre-tokenizer (global, unicode). */
  readonly tokenSplitRegex: RegExp;
  /** Rank of a whole piece, when the piece is one token. */
  getBpeRankFromString(piece: string): number | undefined;
  /** Rank of a byte string, or undefined when it is no token. */
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  /** The library's merge of one piece (cached): used for short pieces. */
  bytePairEncode(piece: string): number[];
}

/** A core and the byte length of its longest token (a piece of m bytes is ≥ m / longest tokens). */
export interface BpeCounter {
  readonly core: BpeCore;
  /** An upper bound of the bytes of the longest mergeable token. */
  readonly longestToken: number;
}

/** Pieces up to this many UTF-16 units go through the library's merge (fast and cached when short). */
const SHORT_PIECE = 256;

const encoder = new TextEncoder();

/** Two to the 26th: piece byte offsets below it share one float64 heap key with the rank. */
const POS_SPAN = 2 ** 26;

/**
 * A min-heap of numbers (keys `rank · 2^26 + position`: lowest rank first, then leftmost).
 */
class NumberHeap {
  private readonly a: number[] = [];

  get size(): number {
    return this.a.length;
  }

  push(x: number): void {
    const a = this.a;
    let i = a.length;
    a.push(x);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (a[p]! <= x) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = x;
  }

  pop(): number {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    const n = a.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && a[r]! < a[l]! ? r : l;
        if (a[c]! >= last) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * Tokens of one piece by the heap merge. Parts are byte ranges kept as a linked list over
 * their start offsets; `rankAt[s]` is the rank of merging the part at `s` with the next one
 * (Infinity when none). A heap entry is live while its rank still equals `rankAt[s]`: a
 * pair's span only grows, and a longer span is a different byte string, hence a different
 * rank, so a stale entry can never look live.
 */
function mergeCount(core: BpeCore, bytes: Uint8Array): number {
  const n = bytes.length;
  if (n <= 1) return n;
  if (n >= POS_SPAN) throw new RangeError(`a single pre-token piece of ${n} bytes is beyond the counter's range`);
  const next = new Int32Array(n + 1);
  const prev = new Int32Array(n + 1);
  const rankAt = new Float64Array(n + 1);
  for (let i = 0; i <= n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
  }
  const rankOf = (s: number): number => {
    const mid = next[s]!;
    if (mid >= n) return Infinity;
    const end = next[mid]!;
    return core.getBpeRankFromBytes(bytes.subarray(s, end)) ?? Infinity;
  };
  const heap = new NumberHeap();
  for (let s = 0; s < n; s++) {
    const r = rankOf(s);
    rankAt[s] = r;
    if (r !== Infinity) heap.push(r * POS_SPAN + s);
  }
  let parts = n;
  while (heap.size > 0) {
    const key = heap.pop();
    const r = Math.floor(key / POS_SPAN);
    const s = key - r * POS_SPAN;
    if (rankAt[s] !== r) continue; // stale (the part was merged away, or its pair grew)
    // Merge the part at s with its successor.
    const gone = next[s]!;
    const after = next[gone]!;
    next[s] = after;
    if (after <= n) prev[after] = s;
    rankAt[gone] = -1;
    parts--;
    const rs = rankOf(s);
    rankAt[s] = rs;
    if (rs !== Infinity) heap.push(rs * POS_SPAN + s);
    const p = prev[s]!;
    if (p >= 0) {
      const rp = rankOf(p);
      rankAt[p] = rp;
      if (rp !== Infinity) heap.push(rp * POS_SPAN + p);
    }
  }
  return parts;
}

/** Tokens of one pre-token piece, or Infinity once it is known to be more than `room`. */
function pieceCount(c: BpeCounter, piece: string, room: number): number {
  if (c.core.getBpeRankFromString(piece) !== undefined) return 1;
  if (piece.length <= SHORT_PIECE) return c.core.bytePairEncode(piece).length;
  const bytes = encoder.encode(piece);
  // Every token is at most `longestToken` bytes: a long piece that cannot fit is settled
  // without merging it.
  if (Math.ceil(bytes.length / c.longestToken) > room) return Infinity;
  return mergeCount(c.core, bytes);
}

/**
 * Exact token count of `text`, special-token strings counted as plain text, or `Infinity` as
 * soon as the count passes `limit` (the text after that point is never encoded). The cost is
 * O(n log n) in the text consumed, with no piece costing more than O(m log m) for its m bytes.
 * @param counter the encoding's BPE core and longest token (see {@link bpeCounter})
 * @param limit inclusive token limit @default Infinity
 */
export function countBpe(counter: BpeCounter, text: string, limit = Infinity): number {
  let count = 0;
  // matchAll iterates a copy of the (global) pattern: the shared one keeps no state.
  for (const [piece] of text.matchAll(counter.core.tokenSplitRegex)) {
    count += pieceCount(counter, piece, limit - count);
    if (count > limit) return Infinity;
  }
  return count;
}

/**
 * The counter of a gpt-tokenizer encoding module (`gpt-tokenizer/encoding/o200k_base`…): its
 * default export's BPE core, checked to have the fields {@link BpeCore} reads, and the byte
 * length of its longest token.
 * @throws Error when the installed gpt-tokenizer no longer has that shape (an upgrade that
 *   must be looked at, never a silent fallback to the quadratic merge)
 */
export function bpeCounter(encodingModule: unknown): BpeCounter {
  const api = (encodingModule as { default?: unknown }).default ?? encodingModule;
  const core = (api as { bytePairEncodingCoreProcessor?: Partial<BpeCore> & { bytePairRankDecoder?: unknown } }).bytePairEncodingCoreProcessor;
  if (
    core === undefined ||
    !(core.tokenSplitRegex instanceof RegExp) ||
    !core.tokenSplitRegex.global ||
    typeof core.getBpeRankFromString !== 'function' ||
    typeof core.getBpeRankFromBytes !== 'function' ||
    typeof core.bytePairEncode !== 'function' ||
    !Array.isArray(core.bytePairRankDecoder)
  ) {
    throw new Error('gpt-tokenizer: unexpected encoding internals (BytePairEncodingCore); the exact counter needs updating');
  }
  // An upper bound is enough (it only weakens the "cannot fit" shortcut): 3 UTF-8 bytes per
  // UTF-16 unit at most, which spares encoding 200,000 tokens at load.
  let longest = 1;
  for (const v of core.bytePairRankDecoder as Array<string | number[] | undefined>) {
    if (v === undefined) continue;
    const len = typeof v === 'string' ? v.length * 3 : v.length;
    if (len > longest) longest = len;
  }
  return { core: core as BpeCore, longestToken: longest };
}
