/**
 * Compress (§1.7, §3.3, §3.6): hide ranges behind model- or human-written summaries. Each
 * requested range is resolved on the view left by the ranges before it, checked against the
 * compress guards on its FINAL positional slice, and either lands a block or reports why not
 * (`already_compressed`, `guarded`, `unbalanced`, `unknown_seq`: answers, not errors). Every
 * landed block is written in ONE atomic mutation with the answer. The call, step by step:
 *
 * 1. a seen `requestId` returns the first answer;
 * 2. a stale `expectedGeneration` → ABORTED `STALE_EXPECTED_GENERATION`;
 * 3. an edge past the head or a reversed range → INVALID_ARGUMENT;
 * 4. plan every range ({@link planCompress}); nothing landed → the answer, recorded on its own;
 * 5. commit the blocks with the answer; on a conflict, re-plan once on a fresh view (or, with an
 *    `expectedGeneration`, answer ABORTED), and a second conflict is ABORTED
 *    `CONFLICT_RETRY_EXHAUSTED`.
 */
import type { SessionKey, SurfaceOp } from '@ctxmesh/stores';
import type { LogDeps } from './deps';
import { ConflictError } from './errors';
import type { LogEvent, SummaryAuthor } from './events';
import type { CheckedCompress, CompressInput, CompressRangeInput } from './inputs';
import { checkCompressInput, checkKey, checkRangesInLog } from './inputs';
import type { SessionView } from './projection';
import { buildView } from './projection';
import type { RangeRow, Span } from './ranges';
import { compressibleSlices, computeGuards, DEFAULT_PRESERVE_RECENT, guardViolations, resolveSpan, seqsOf } from './ranges';
import { blockTransaction } from './transaction';

/** Compress output. */
export interface CompressResult {
  /** Generation after the call. */
  generation: number;
  /** One result per range, in input order. */
  results: CompressRangeResult[];
}

/**
 * Compress, steps 1–5 (see the top of this file).
 * @throws InvalidFieldError for malformed input, reversed ranges and seqs outside the log
 * @throws ConflictError on a stale `expectedGeneration`, or when a recompute conflicts again
 * @throws NotFoundError for an unknown session
 */
export async function compress(deps: LogDeps, key: SessionKey, input: CompressInput): Promise<CompressResult> {
  checkKey(key);
  const req = checkCompressInput(input);
  let view = await deps.log.requireView(key);

  // 1. A replay answers before the request meets the log.
  const cached = await deps.idem.cached<CompressResult>(key, req.requestId, 'compress');
  if (cached) return cached;

  // 2. The caller's expectation.
  if (req.expectedGeneration !== undefined && req.expectedGeneration !== view.generation) {
    throw new ConflictError('STALE_EXPECTED_GENERATION', `expected generation ${req.expectedGeneration}, current is ${view.generation}`, view.head, view.generation);
  }

  // 3. The edges against the log.
  checkRangesInLog(req.ranges, view);

  // 4–5.
  const first = await planAndCommit(deps, key, req, view);
  if (first.status === 'answered') return first.answer;
  if (req.expectedGeneration !== undefined) {
    throw new ConflictError('STALE_EXPECTED_GENERATION', `expected generation ${req.expectedGeneration}, current is ${first.generation}`, first.head, first.generation);
  }
  view = await deps.log.requireView(key);
  const second = await planAndCommit(deps, key, req, view);
  if (second.status === 'answered') return second.answer;
  throw new ConflictError('CONFLICT_RETRY_EXHAUSTED', 'the session changed twice while compressing; re-read and retry', second.head, second.generation);
}

/**
 * Steps 4–5 against one view: plan every range and commit the landed blocks with the answer.
 * @returns the answer, or the current head and generation when the session changed since `view`
 */
async function planAndCommit(
  deps: LogDeps,
  key: SessionKey,
  req: CheckedCompress,
  view: SessionView,
): Promise<{ status: 'answered'; answer: CompressResult } | { status: 'stale'; head: number; generation: number }> {
  const plan = planCompress(view, req.ranges, {
    author: req.author,
    provider: req.provider,
    model: req.model,
    newId: deps.newId,
    now: deps.clock(),
    rebuild: (events, head) => buildView(events, head, view.infoSource),
  });
  const answer: CompressResult = { generation: plan.view.generation, results: plan.results };
  if (plan.events.length === 0) return { status: 'answered', answer: await deps.idem.remember(key, req.requestId, 'compress', answer) };
  const res = await deps.store.commit(key, {
    expect: { head: view.head, generation: view.generation },
    events: plan.events.map((e) => JSON.stringify(e)),
    surfaceOps: plan.surfaceOps,
    generation: plan.view.generation,
    ledger: plan.ledger,
    idempotency: deps.idem.record(req.requestId, 'compress', answer),
  });
  if (res.status === 'ok') return { status: 'answered', answer };
  // A twin call with the same request id committed first: its answer is this one's.
  if (res.status === 'duplicate') return { status: 'answered', answer: deps.idem.decode<CompressResult>(res.value, 'compress') };
  if (res.status !== 'stale') throw new Error(`unexpected commit status ${res.status}`);
  return res;
}

/** Status of one requested range. */
export type CompressStatus = 'landed' | 'already_compressed' | 'guarded' | 'unbalanced' | 'unknown_seq';

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

/** Step 4, pure: plan a Compress call over `view`; nothing here writes. */
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
