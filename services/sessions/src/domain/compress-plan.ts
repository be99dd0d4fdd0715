/**
 * Planning a Compress call (§1.7 compress, §3.3, §3.6): each requested range is resolved on
 * the view left by the ranges before it, checked against the compress guards on its FINAL
 * positional slice, and either lands a block or reports why not. Nothing here writes: the
 * caller commits every landed block in one atomic mutation.
 */
import type { SurfaceOp } from '@ctxmesh/stores';
import type { LogEvent, SummaryAuthor } from './events';
import type { SessionView } from './projection';
import type { RangeRow, Span } from './ranges';
import { compressibleSlices, computeGuards, DEFAULT_PRESERVE_RECENT, guardViolations, resolveSpan, seqsOf } from './ranges';
import { blockTransaction } from './transaction';

/** Status of one requested range. */
export type CompressStatus = 'landed' | 'already_compressed' | 'guarded' | 'unbalanced' | 'unknown_seq';

/** A validated range of a Compress call. */
export interface CompressRangeInput {
  startSeq: number;
  endSeq: number;
  /** The author's summary (framed when stored). */
  summary: string;
  topic: string;
  verifiedReadings: string[];
}

/** The result of one range. */
export interface CompressRangeResult {
  status: CompressStatus;
  /** Landed: the new block. */
  blockId?: string;
  /** Landed: `bN`. */
  kernelRef?: string;
  /** Landed: first and last hidden seq (positional). */
  start?: number;
  end?: number;
  /** Landed: the hidden slice. */
  shadowedSeqs?: number[];
  /** Landed: claim tokens. */
  claimTokens?: number;
  /** Landed: tier. */
  tier?: number;
  /** Landed: the edges were moved by resolution. */
  adjusted?: boolean;
  /** Landed: stale edges were recovered onto live nodes. */
  recovered?: boolean;
  /** Not landed: why. */
  detail?: string;
  /** already_compressed: the blocks (or prunes) covering the span. */
  coveringBlockIds?: string[];
  /** guarded: the slices that can still be compressed. */
  compressible?: RangeRow[];
  /** guarded: the guarded seqs. */
  guardedSeqs?: number[];
}

/** How a requested range resolved before the guard check. */
export type RequestedResolution =
  | { kind: 'span'; span: Span; adjusted: boolean; recovered: boolean; distill: boolean }
  | { kind: 'already_compressed'; coveringIds: string[] }
  | { kind: 'unknown_seq'; detail: string }
  | { kind: 'unbalanced'; detail: string };

/**
 * Resolve a requested `[startSeq, endSeq]` on the surface (§1.2 step 4).
 * - Both edges live: their positions; explicit distillation when an edge is a checkpoint.
 * - An edge hidden (stale): snap to the live plain nodes (not replacement nodes) whose seqs lie
 *   in the window; none → `already_compressed` (hidden messages in the window) or `unknown_seq`
 *   (no message at all in the window). A recovered range never expands.
 * Then shrink (and, if collapsed and not recovered, expand) to balanced, anchorable edges.
 * Callers have already rejected reversed ranges and seqs outside the log.
 */
export function resolveRequestedRange(view: SessionView, startSeq: number, endSeq: number): RequestedResolution {
  const a = view.posOf(startSeq);
  const b = view.posOf(endSeq);
  if (a !== undefined && b !== undefined) {
    const distill = view.node(startSeq).checkpoint || view.node(endSeq).checkpoint;
    const span = resolveSpan(view, { startPos: a, endPos: b }, true);
    if (!span) return { kind: 'unbalanced', detail: `${startSeq}..${endSeq} cannot be cut without separating a tool call from its result` };
    return { kind: 'span', span, adjusted: span.startPos !== a || span.endPos !== b, recovered: false, distill };
  }
  const lo = Math.min(startSeq, endSeq);
  const hi = Math.max(startSeq, endSeq);
  let first = -1;
  let last = -1;
  view.surface.forEach((seq, pos) => {
    if (seq < lo || seq > hi) return;
    const e = view.events[seq];
    if (e?.type === 'user/message' && e.surfaceOp) return;
    if (first < 0) first = pos;
    last = pos;
  });
  if (first < 0) {
    const covering: string[] = [];
    const owners = view.owners();
    let messages = 0;
    for (let s = lo; s <= hi; s++) {
      if (!view.isMessage(s)) continue;
      messages++;
      const owner = owners.get(s);
      if (owner !== undefined && !covering.includes(owner)) covering.push(owner);
    }
    if (messages === 0) return { kind: 'unknown_seq', detail: `no message lies in ${startSeq}..${endSeq}; see ListCompressibleRanges or GetStatus` };
    return { kind: 'already_compressed', coveringIds: covering };
  }
  const span = resolveSpan(view, { startPos: first, endPos: last }, false);
  if (!span) return { kind: 'unbalanced', detail: `the live part of ${startSeq}..${endSeq} cannot be cut without separating a tool call from its result` };
  return { kind: 'span', span, adjusted: true, recovered: true, distill: false };
}

/** Context of a Compress plan. */
export interface CompressContext {
  author: SummaryAuthor;
  provider: string;
  model: string;
  newId: () => string;
  /** ms since the epoch. */
  now: number;
  /** Rebuild a view from events `0..head` (memoised node facts). */
  rebuild: (events: readonly LogEvent[], head: number) => SessionView;
  /** Protected tail. @default 5 */
  preserveRecent?: number;
}

/** The plan of a Compress call. */
export interface CompressPlan {
  results: CompressRangeResult[];
  /** Events to append (four per landed block). */
  events: LogEvent[];
  surfaceOps: SurfaceOp[];
  /** Ledger cache entries (new blocks and parents that became inactive). */
  ledger: Record<string, string>;
  /** The view after every landed block. */
  view: SessionView;
}

/** Plan a Compress call over `view`. */
export function planCompress(view0: SessionView, ranges: readonly CompressRangeInput[], ctx: CompressContext): CompressPlan {
  let view = view0;
  const results: CompressRangeResult[] = [];
  const events: LogEvent[] = [];
  const surfaceOps: SurfaceOp[] = [];
  const touched = new Set<string>();
  for (const r of ranges) {
    const res = resolveRequestedRange(view, r.startSeq, r.endSeq);
    if (res.kind === 'already_compressed') {
      results.push({ status: 'already_compressed', coveringBlockIds: res.coveringIds, detail: `${r.startSeq}..${r.endSeq} is already hidden` });
      continue;
    }
    if (res.kind !== 'span') {
      results.push({ status: res.kind, detail: res.detail });
      continue;
    }
    // The guard check on the final resolved slice, right before the write.
    const guards = computeGuards(view, ctx.preserveRecent ?? DEFAULT_PRESERVE_RECENT);
    const violations = guardViolations(view, guards, res.span, 'compress', res.distill);
    if (violations.length > 0) {
      results.push({
        status: 'guarded',
        guardedSeqs: violations.map((v) => v.seq),
        compressible: compressibleSlices(view, guards, res.span, res.distill),
        detail: `guarded rows in the span: ${violations.map((v) => `${v.seq} (${v.reasons.join(', ')})`).join('; ')}`,
      });
      continue;
    }
    const shadowedSeqs = seqsOf(view, res.span);
    const compactionId = ctx.newId();
    const tx = blockTransaction(view, {
      compactionId,
      summary: r.summary,
      topic: r.topic,
      author: ctx.author,
      shadowedSeqs,
      provider: ctx.provider,
      model: ctx.model,
      verifiedReadings: r.verifiedReadings,
      createdAt: ctx.now,
    });
    const base = view.head + 1;
    surfaceOps.push({ op: 'replace', startSeq: shadowedSeqs[0]!, endSeq: shadowedSeqs[shadowedSeqs.length - 1]!, seq: base + 2, count: shadowedSeqs.length });
    events.push(...tx.events);
    view = ctx.rebuild([...view.events.slice(0, view.head + 1), ...tx.events], view.head + tx.events.length);
    touched.add(compactionId);
    for (const p of tx.parentBlockIds) touched.add(p);
    const block = view.block(compactionId)!;
    results.push({
      status: 'landed',
      blockId: compactionId,
      kernelRef: block.kernelRef,
      start: shadowedSeqs[0]!,
      end: shadowedSeqs[shadowedSeqs.length - 1]!,
      shadowedSeqs,
      claimTokens: tx.claimTokens,
      tier: tx.tier,
      adjusted: res.adjusted,
      recovered: res.recovered,
    });
  }
  const ledger: Record<string, string> = {};
  for (const id of touched) {
    const b = view.block(id);
    if (b) ledger[id] = JSON.stringify(b);
  }
  return { results, events, surfaceOps, ledger, view };
}
