/**
 * Postings blocks of the embedded lexical index: the encoding of one block of a term's
 * postings list (BM25 itself, whose bounds the index computes, is the shared ranking's:
 * `ranking/bm25.ts`).
 *
 * A block holds up to {@link BLOCK_SIZE} postings of one term, in ascending row id; each posting
 * is (row id, term frequency, row length). Encoded as the id deltas from the block's first id
 * (LEB128 varints), then one byte of frequency per posting (capped at 255), then two bytes of
 * row length (little-endian, capped at 65535). Carrying the row length in the posting lets a
 * query score a posting without another read.
 */

/** Postings per full block. Small enough that rewriting a block on a write is cheap, large enough that a query skips many postings per bound. */
export const BLOCK_SIZE = 128;

import { MAX_LEN, MAX_TF } from '../ranking/bm25';

export { MAX_LEN, MAX_TF };

/** One decoded block: parallel arrays, ascending ids. */
export interface Block {
  ids: Int32Array;
  tfs: Uint8Array;
  lens: Uint16Array;
}

/**
 * Encode postings (ascending, distinct ids) as one block.
 * @throws RangeError when the ids are not strictly ascending
 */
export function encodeBlock(ids: ArrayLike<number>, tfs: ArrayLike<number>, lens: ArrayLike<number>): Buffer {
  const n = ids.length;
  const out = Buffer.allocUnsafe(n * 5 + n * 3);
  let at = 0;
  let prev = ids[0]!;
  for (let i = 0; i < n; i++) {
    let d = i === 0 ? 0 : ids[i]! - prev;
    if (i > 0 && !(d > 0)) throw new RangeError('block ids must be strictly ascending');
    prev = ids[i]!;
    while (d >= 0x80) {
      out[at++] = (d & 0x7f) | 0x80;
      d = Math.floor(d / 128);
    }
    out[at++] = d;
  }
  for (let i = 0; i < n; i++) out[at++] = Math.min(MAX_TF, Math.max(1, tfs[i]!));
  for (let i = 0; i < n; i++) {
    const l = Math.min(MAX_LEN, Math.max(1, lens[i]!));
    out[at++] = l & 0xff;
    out[at++] = l >>> 8;
  }
  return out.subarray(0, at);
}

/**
 * Decode a block written by {@link encodeBlock}.
 * @param first the block's first id
 * @param n postings in the block
 */
export function decodeBlock(data: Uint8Array, first: number, n: number): Block {
  const ids = new Int32Array(n);
  const tfs = new Uint8Array(n);
  const lens = new Uint16Array(n);
  let at = 0;
  let id = first;
  for (let i = 0; i < n; i++) {
    let d = 0;
    let mul = 1;
    let b: number;
    do {
      b = data[at++]!;
      d += (b & 0x7f) * mul;
      mul *= 128;
    } while (b & 0x80);
    id += d;
    ids[i] = id;
  }
  for (let i = 0; i < n; i++) tfs[i] = data[at++]!;
  for (let i = 0; i < n; i++) {
    lens[i] = data[at]! | (data[at + 1]! << 8);
    at += 2;
  }
  return { ids, tfs, lens };
}
