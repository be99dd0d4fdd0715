/**
 * The two token currencies of §1.3, kept apart on purpose:
 * - rank tokens order ranges (table display, overflow choice): a CJK-aware text count plus a
 *   media price; pluggable, may depend on the route;
 * - claim tokens are the durable `shadowedTokenCount` of a block or prune: a FIXED, versioned
 *   estimator ({@link CLAIM_ESTIMATOR_ID}) whose id is recorded with every claim, so changing
 *   it later cannot turn an old projection negative.
 */
import type { FileBlock, ImageBlock, LogEvent } from './events';
import { isMessageEvent } from './events';
import { toolArgsJson } from './text';
import { isCjkCodePoint } from '@ctxmesh/kernel';

/** True for a code point the rank counter prices at one token (CJK, kana, Hangul, fullwidth): the estimator's ranges. */
export { isCjkCodePoint };

/**
 * The CJK-aware rank counter: one token per CJK code point, one per four other code points
 * (rounded up over the whole text). `''` is 0.
 */
export function countRankTokens(text: string): number {
  let cjk = 0;
  let other = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    // Fast path: nothing below U+1100 is CJK, and that is nearly every character of code.
    if (c < 0x1100) {
      other++;
      continue;
    }
    let cp = c;
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
        i++;
      }
    }
    if (isCjkCodePoint(cp)) cjk++;
    else other++;
  }
  return cjk + Math.ceil(other / 4);
}

/** A rank estimator. Implementations must be deterministic. */
export interface RankEstimator {
  /** Id, reported with ranges for diagnostics. */
  readonly id: string;
  /** Rank tokens of a node's projected text (media placeholders included). */
  countText(text: string): number;
  /** Extra rank tokens of one media block (a route's visual surcharge plus a structural price). */
  mediaPrice(block: ImageBlock | FileBlock): number;
}

/**
 * The default rank estimator: {@link countRankTokens}, and for media the structural price the
 * claim estimator gives an unknown block (`4 + ceil(json/4)`), with no visual surcharge
 * (the mesh has no meter that declares one; a route-aware estimator may add it).
 */
export const defaultRankEstimator: RankEstimator = {
  id: 'cjk-quarter-v1',
  countText: countRankTokens,
  mediaPrice: (block) => 4 + Math.ceil(JSON.stringify(block).length / 4),
};

/** Id of the claim estimator, recorded on every claim and in session metadata. */
export const CLAIM_ESTIMATOR_ID = 'ctxmesh-claim-v1';

/**
 * Claim tokens of one event, the host-style fixed estimator of §1.3: per text block
 * `ceil(len/4)+4`; per tool call `ceil(name/4)+ceil(argsJson/4)+4`; a tool result's content
 * priced by the same block rules; any other block `4+ceil(json/4)`; `+4` per message; events
 * that never reach the surface cost 0. Lengths are UTF-16 code units.
 */
export function claimTokensOf(e: LogEvent): number {
  if (!isMessageEvent(e)) return 0;
  let total = 4;
  for (const b of e.content) {
    if (b.type === 'text') total += Math.ceil(b.text.length / 4) + 4;
    else if (b.type === 'tool-call') total += Math.ceil(b.name.length / 4) + Math.ceil(toolArgsJson(b).length / 4) + 4;
    else total += 4 + Math.ceil(JSON.stringify(b).length / 4);
  }
  return total;
}
