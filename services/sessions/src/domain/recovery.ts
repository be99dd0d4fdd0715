/**
 * The pure part of RecoverOverflow (§3.4 steps 5–7): pick the one range to hide with the
 * overflow geometry (`preserveRecent` pinned at 5), re-check its final slice, and build the
 * engine-marker transaction. The state machine around it (idempotency, codes, budget,
 * compare-and-set with one recompute) lives in `SessionLog.recoverOverflow`.
 */
import type { SurfaceOp } from '@ctxmesh/stores';
import type { SessionView } from './projection';
import type { RangeRow } from './ranges';
import { computeCompressibleRanges, computeGuards, guardViolations, OVERFLOW_PRESERVE_RECENT, rankForOverflow, seqsOf } from './ranges';
import { OVERFLOW_TOPIC, overflowMarkerSummary } from './text';
import type { BlockTransaction } from './transaction';
import { blockTransaction } from './transaction';

/** The provider failure code that triggers recovery. */
export const CONTEXT_WINDOW_EXCEEDED = 'CONTEXT_WINDOW_EXCEEDED';

/** What the harness should do. */
export type RecoverAction = 'retry' | 'surface_error';

/** Why. */
export type RecoverReason = 'compacted' | 'not_overflow' | 'aborted' | 'budget_spent' | 'nothing_eligible' | 'conflict_retry_exhausted';

/** The block a recovery wrote (or found landed concurrently). */
export interface RecoveredBlock {
  blockId: string;
  /** First hidden seq (positional). */
  start: number;
  /** Last hidden seq (positional). */
  end: number;
  /** Messages hidden: equals the N in the marker and `shadowedSeqs.length`. */
  hiddenCount: number;
  /** Claim tokens. */
  claimTokens: number;
}

/** The answer of RecoverOverflow. */
export interface RecoverOverflowResult {
  action: RecoverAction;
  reason: RecoverReason;
  /** Present with `retry`. */
  block?: RecoveredBlock;
  /** The agent's budget after the call. */
  budget: { used: number; max: number };
  /** Generation after the call. */
  generation: number;
}

/** A planned overflow compaction. */
export interface OverflowPlan {
  tx: BlockTransaction;
  /** The table row chosen (highest rank tokens, oldest on ties). */
  row: RangeRow;
  shadowedSeqs: number[];
  surfaceOp: SurfaceOp;
  block: RecoveredBlock;
}

/** Inputs of {@link planOverflowCompaction}. */
export interface OverflowContext {
  compactionId: string;
  provider: string;
  model: string;
  /** ms since the epoch. */
  now: number;
}

/**
 * Choose and build the one reduction of an overflow recovery, or null when nothing is
 * eligible. Candidates are the ranges ListCompressibleRanges offers with `preserveRecent` 5,
 * highest rank tokens first (oldest on ties); each candidate's final slice is checked against
 * the guards again before it is accepted, and a failing one passes the turn to the next.
 */
export function planOverflowCompaction(view: SessionView, ctx: OverflowContext): OverflowPlan | null {
  const guards = computeGuards(view, OVERFLOW_PRESERVE_RECENT);
  for (const cand of rankForOverflow(computeCompressibleRanges(view, OVERFLOW_PRESERVE_RECENT))) {
    if (guardViolations(view, guards, cand.span, 'table').length > 0) continue;
    const shadowedSeqs = seqsOf(view, cand.span);
    const tx = blockTransaction(view, {
      compactionId: ctx.compactionId,
      summary: overflowMarkerSummary(shadowedSeqs.length),
      topic: OVERFLOW_TOPIC,
      author: 'engine',
      shadowedSeqs,
      provider: ctx.provider,
      model: ctx.model,
      verifiedReadings: [],
      createdAt: ctx.now,
    });
    const start = shadowedSeqs[0]!;
    const end = shadowedSeqs[shadowedSeqs.length - 1]!;
    return {
      tx,
      row: cand.row,
      shadowedSeqs,
      surfaceOp: { op: 'replace', startSeq: start, endSeq: end, seq: view.head + 3, count: shadowedSeqs.length },
      block: { blockId: ctx.compactionId, start, end, hiddenCount: shadowedSeqs.length, claimTokens: tx.claimTokens },
    };
  }
  return null;
}
