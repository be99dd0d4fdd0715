/**
 * The compressible-range algorithm (§1.2) with the overflow geometry, plus the guard check
 * that every write path runs again on the final positional slice (§3.1 "guards are checked
 * twice", fixing §1.10 edge case 3).
 *
 * Geometry: one view from the first to the last surface node, cut into runs at barriers; each
 * run's edges are resolved (shrink to anchorable, tool-pairing-balanced edges; expand only if
 * the shrink collapsed it) and the resolved span is checked against the guards again, because
 * the expand pass looks only at pairing and could reach into a protected node.
 */
import type { SessionView } from './projection';

/** Default protected tail of ListCompressibleRanges and Compress. */
export const DEFAULT_PRESERVE_RECENT = 5;
/** Protected tail of the overflow path, pinned so retuning the advisory table cannot shrink it. */
export const OVERFLOW_PRESERVE_RECENT = 5;

/** Why a node is guarded. */
export type GuardReason = 'recent' | 'last-user-turn' | 'current-instruction' | 'checkpoint' | 'system' | 'instruction';

/**
 * Which guard set applies:
 * - `table`: ListCompressibleRanges and overflow recovery; every instruction row (current or
 *   stale) and every checkpoint is a barrier;
 * - `compress`: explicit Compress; stale instruction copies may be hidden, and checkpoints
 *   only by explicit distillation.
 */
export type GuardPolicy = 'table' | 'compress';

/** The protected set of a view (§1.2 step 2) and the other per-position guard facts. */
export interface Guards {
  /** Tail length protected. */
  preserveRecent: number;
  /** First position of the protected tail (`surface.length` when none). */
  recentFrom: number;
  /** Position of the last real user turn, or -1. */
  lastUserPos: number;
  /** Positions of the newest agent-instructions row per scope. */
  currentInstructions: ReadonlySet<number>;
}

/** A positional span of the surface, inclusive. */
export interface Span {
  startPos: number;
  endPos: number;
}

/** One row of the range table (§3.3 ListCompressibleRanges). */
export interface RangeRow {
  /** Seq of the first node (positional). */
  start: number;
  /** Seq of the last node (positional). */
  end: number;
  /** Surface nodes in the range. */
  count: number;
  /** Rank tokens. */
  rankTokens: number;
  /** Share of tool nodes (results and assistant messages with calls), percent, rounded. */
  toolPct: number;
  /** Image blocks. */
  images: number;
  /** File blocks. */
  files: number;
}

/** A guarded node inside a span. */
export interface GuardViolation {
  seq: number;
  reasons: GuardReason[];
}

/**
 * Compute the protected set.
 * @param preserveRecent tail nodes to protect; 0 or less protects none (never "all": the
 *   `slice(-0)` trap of the reference is avoided by computing a start position)
 */
export function computeGuards(view: SessionView, preserveRecent: number): Guards {
  const n = view.surface.length;
  const keep = Math.max(0, Math.trunc(preserveRecent));
  const recentFrom = Math.max(0, n - keep);
  let lastUserPos = -1;
  for (let p = n - 1; p >= 0; p--) {
    if (view.node(view.surface[p]!).realUserTurn) {
      lastUserPos = p;
      break;
    }
  }
  const seenScopes = new Set<string>();
  const currentInstructions = new Set<number>();
  for (let p = n - 1; p >= 0; p--) {
    const scopes = view.node(view.surface[p]!).scopes;
    let newest = false;
    for (const s of scopes) {
      if (!seenScopes.has(s)) {
        seenScopes.add(s);
        newest = true;
      }
    }
    if (newest) currentInstructions.add(p);
  }
  return { preserveRecent: keep, recentFrom, lastUserPos, currentInstructions };
}

/**
 * Guard reasons of one position under a policy (empty = not guarded).
 * @param allowCheckpoints explicit distillation: checkpoints may be hidden (compress policy only)
 */
export function guardReasonsAt(view: SessionView, guards: Guards, pos: number, policy: GuardPolicy, allowCheckpoints = false): GuardReason[] {
  const info = view.node(view.surface[pos]!);
  const reasons: GuardReason[] = [];
  if (pos >= guards.recentFrom) reasons.push('recent');
  if (pos === guards.lastUserPos) reasons.push('last-user-turn');
  if (guards.currentInstructions.has(pos)) reasons.push('current-instruction');
  if (info.system) reasons.push('system');
  if (info.checkpoint && !(policy === 'compress' && allowCheckpoints)) reasons.push('checkpoint');
  if (policy === 'table' && info.cls === 'instruction' && !info.system && !guards.currentInstructions.has(pos)) reasons.push('instruction');
  return reasons;
}

/**
 * Whether a position is guarded under a policy: {@link guardReasonsAt} without building the
 * list of reasons (the range table asks this of every surface node; 100,000 arrays per call
 * were most of a warm overflow recovery's time).
 */
export function isGuardedAt(view: SessionView, guards: Guards, pos: number, policy: GuardPolicy, allowCheckpoints = false): boolean {
  if (pos >= guards.recentFrom || pos === guards.lastUserPos || guards.currentInstructions.has(pos)) return true;
  const info = view.node(view.surface[pos]!);
  if (info.system) return true;
  if (info.checkpoint && !(policy === 'compress' && allowCheckpoints)) return true;
  // A current instruction row returned above; any other instruction row is a table barrier.
  return policy === 'table' && info.cls === 'instruction';
}

/** Whether any node of a span is guarded ({@link guardViolations} is non-empty). */
export function spanGuarded(view: SessionView, guards: Guards, span: Span, policy: GuardPolicy, allowCheckpoints = false): boolean {
  for (let p = span.startPos; p <= span.endPos; p++) if (isGuardedAt(view, guards, p, policy, allowCheckpoints)) return true;
  return false;
}

/**
 * Every guarded node of a span (the final-slice re-check run before any write).
 * @returns an empty list when the span may be hidden
 */
export function guardViolations(view: SessionView, guards: Guards, span: Span, policy: GuardPolicy, allowCheckpoints = false): GuardViolation[] {
  const out: GuardViolation[] = [];
  for (let p = span.startPos; p <= span.endPos; p++) {
    const reasons = guardReasonsAt(view, guards, p, policy, allowCheckpoints);
    if (reasons.length > 0) out.push({ seq: view.surface[p]!, reasons });
  }
  return out;
}

/**
 * Resolve the edges of a positional span (§1.2 step 4, `resolveSurfaceRange`):
 * shrink both edges inward until each is anchorable and tool-pairing balanced; only if that
 * collapses the span and `allowExpand` is set, widen outward to the smallest balanced,
 * anchorable pair around it.
 * @returns the resolved span, or null when it cannot be balanced
 */
export function resolveSpan(view: SessionView, span: Span, allowExpand: boolean): Span | null {
  const n = view.surface.length;
  const { cutOk } = view.pairing();
  const anchor = (p: number) => view.node(view.surface[p]!).anchorable;
  let s = span.startPos;
  while (s <= span.endPos && !(anchor(s) && cutOk[s] === 1)) s++;
  let e = span.endPos;
  while (e >= s && !(anchor(e) && cutOk[e + 1] === 1)) e--;
  if (s <= e) return { startPos: s, endPos: e };
  if (!allowExpand) return null;
  let s2 = span.startPos;
  while (s2 >= 0 && !(anchor(s2) && cutOk[s2] === 1)) s2--;
  let e2 = span.endPos;
  while (e2 < n && !(anchor(e2) && cutOk[e2 + 1] === 1)) e2++;
  if (s2 < 0 || e2 >= n) return null;
  return { startPos: s2, endPos: e2 };
}

/** The table row of a span. */
export function rowOf(view: SessionView, span: Span): RangeRow {
  let rankTokens = 0;
  let tools = 0;
  let images = 0;
  let files = 0;
  for (let p = span.startPos; p <= span.endPos; p++) {
    const info = view.node(view.surface[p]!);
    rankTokens += info.rankTokens;
    if (info.toolNode) tools++;
    images += info.images;
    files += info.files;
  }
  const count = span.endPos - span.startPos + 1;
  return {
    start: view.surface[span.startPos]!,
    end: view.surface[span.endPos]!,
    count,
    rankTokens,
    toolPct: Math.round((100 * tools) / count),
    images,
    files,
  };
}

/** The seqs of a span, in positional order (the slice a replace hides). */
export function seqsOf(view: SessionView, span: Span): number[] {
  return view.surface.slice(span.startPos, span.endPos + 1);
}

/** A resolved, guard-checked compressible range. */
export interface CompressibleRange {
  span: Span;
  row: RangeRow;
}

/**
 * The compressible ranges of a view, oldest first (§1.2 with the overflow geometry): the
 * longest runs between barriers, resolved, and kept only if the resolved span passes the
 * table guards again.
 * @param preserveRecent protected tail (default {@link DEFAULT_PRESERVE_RECENT})
 * @param guards the protected set of `preserveRecent`, when the caller has it already
 */
export function computeCompressibleRanges(view: SessionView, preserveRecent = DEFAULT_PRESERVE_RECENT, guards: Guards = computeGuards(view, preserveRecent)): CompressibleRange[] {
  const n = view.surface.length;
  const out: CompressibleRange[] = [];
  let runStart = -1;
  const flush = (endPos: number) => {
    if (runStart < 0) return;
    const resolved = resolveSpan(view, { startPos: runStart, endPos }, true);
    runStart = -1;
    if (!resolved) return;
    if (spanGuarded(view, guards, resolved, 'table')) return;
    out.push({ span: resolved, row: rowOf(view, resolved) });
  };
  for (let p = 0; p < n; p++) {
    const barrier = isGuardedAt(view, guards, p, 'table');
    if (barrier) flush(p - 1);
    else if (runStart < 0) runStart = p;
  }
  flush(n - 1);
  return out;
}

/**
 * Order candidates for the overflow path: highest rank tokens first; on a tie the oldest
 * (lowest position) first, as the reference's strict `>` reduce does.
 */
export function rankForOverflow(ranges: readonly CompressibleRange[]): CompressibleRange[] {
  return [...ranges].sort((a, b) => b.row.rankTokens - a.row.rankTokens || a.span.startPos - b.span.startPos);
}

/**
 * The parts of a span that could still be compressed, for a `guarded` answer: the span is
 * cut at its guarded nodes and each piece is resolved by shrinking only.
 */
export function compressibleSlices(view: SessionView, guards: Guards, span: Span, allowCheckpoints: boolean): RangeRow[] {
  const rows: RangeRow[] = [];
  let start = -1;
  const flush = (endPos: number) => {
    if (start < 0) return;
    const r = resolveSpan(view, { startPos: start, endPos }, false);
    start = -1;
    if (r && guardViolations(view, guards, r, 'compress', allowCheckpoints).length === 0) rows.push(rowOf(view, r));
  };
  for (let p = span.startPos; p <= span.endPos; p++) {
    if (guardReasonsAt(view, guards, p, 'compress', allowCheckpoints).length > 0) flush(p - 1);
    else if (start < 0) start = p;
  }
  flush(span.endPos);
  return rows;
}
