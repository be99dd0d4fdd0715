/**
 * RecoverOverflow (overflow-recovery §3.4): rescue a request the provider refused for
 * overflowing the window by hiding ONE range behind the engine's marker, at most
 * `maxOverflowRetries` times per agent between two resets. The whole state machine is in this
 * file, numbered as in §3.4:
 *
 * 1. an unknown session → NOT_FOUND; a seen `requestId` → the recorded answer; then the input
 *    is checked (`inputs.ts`);
 * 2. another failure code → `surface_error/not_overflow`;
 * 3. an aborted request → `surface_error/aborted` (2 and 3 never touch the budget);
 * 4. `used ≥ max` → `surface_error/budget_spent`;
 * 5. no candidate (the ranges of `preserveRecent` 5) → `surface_error/nothing_eligible`;
 * 6. take the highest-ranked candidate (oldest on ties) whose final slice passes the guards;
 * 7. commit its block, the budget charge and the answer in ONE mutation against the snapshot;
 *    on a conflict re-read once: a block that landed meanwhile already shrank the surface since
 *    the failed request was built, so the answer is `retry` with that block and no new write;
 *    otherwise steps 4–7 again, and a second conflict is `surface_error/conflict_retry_exhausted`
 *    (not recorded: the same request may try again);
 * 8. `retry/compacted` with the block, `used + 1`.
 *
 * Every other answer is recorded under the request id, with the write or on its own. The budget
 * resets on ReportAgentStatus `idle` (below) and on an assistant message from the agent
 * (`append.ts`). Refusals are answers, never errors.
 */
import type { SessionKey, SurfaceOp } from '@ctxmesh/stores';
import type { LogDeps } from './deps';
import type { AgentStatusInput, CheckedRecover, RecoverOverflowInput } from './inputs';
import { checkAgentStatus, checkKey, checkRecoverInput, requireString } from './inputs';
import type { SessionView } from './projection';
import { landedBlock } from './projection';
import type { RangeRow } from './ranges';
import { computeCompressibleRanges, computeGuards, OVERFLOW_PRESERVE_RECENT, rankForOverflow, seqsOf, spanGuarded } from './ranges';
import { OVERFLOW_TOPIC, overflowMarkerSummary } from './text';
import type { BlockTransaction } from './transaction';
import { blockTransaction } from './transaction';

/** Budget records live 24 h (§3.2). */
export const BUDGET_TTL_SECONDS = 24 * 3600;

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

/**
 * RecoverOverflow, steps 1–8 (see the top of this file).
 * @throws InvalidFieldError for a missing requestId, agentId or failure.code, or a bad window
 * @throws NotFoundError for an unknown session
 */
export async function recoverOverflow(deps: LogDeps, key: SessionKey, input: RecoverOverflowInput): Promise<RecoverOverflowResult> {
  checkKey(key);
  const requestId = requireString(input.requestId, 'requestId');
  // 1. An unknown session is NOT_FOUND; a replay answers before the rest of the request is looked at.
  let view = await deps.log.requireView(key);
  const cached = await deps.idem.cached<RecoverOverflowResult>(key, requestId, 'recover');
  if (cached) return cached;
  const run: Run = { deps, key, requestId, req: checkRecoverInput(input) };

  // 2–3. Not an overflow this call can fix.
  if (run.req.code !== CONTEXT_WINDOW_EXCEEDED) return refuse(run, 'not_overflow', await usedBudget(run), view);
  if (run.req.aborted) return refuse(run, 'aborted', await usedBudget(run), view);

  // 4. The agent's budget.
  let used = await usedBudget(run);
  if (used >= deps.maxOverflowRetries) return refuse(run, 'budget_spent', used, view);

  // 5–8.
  const first = await compactOnce(run, view, used);
  if (first) return first;

  // 7, on a conflict: the session changed since `view`; re-read once.
  const headBefore = view.head;
  view = await deps.log.requireView(key);
  used = await usedBudget(run);
  const landed = blockLandedSince(view, headBefore);
  if (landed) {
    // Retrying is already useful, and hiding a second range would be two reductions for one overflow.
    return remember(run, { action: 'retry', reason: 'compacted', block: landed, budget: { used, max: deps.maxOverflowRetries }, generation: view.generation });
  }
  if (used >= deps.maxOverflowRetries) return refuse(run, 'budget_spent', used, view);
  const second = await compactOnce(run, view, used);
  if (second) return second;
  // Not recorded: the same request may try again.
  return refusal(run, 'conflict_retry_exhausted', used, view);
}

/** One RecoverOverflow call. */
interface Run {
  deps: LogDeps;
  key: SessionKey;
  requestId: string;
  req: CheckedRecover;
}

/**
 * Steps 5–8 against one view: plan the reduction and commit it together with the budget charge
 * and the answer.
 * @returns the answer, or null when the session changed since `view` (a conflict)
 */
async function compactOnce(run: Run, view: SessionView, used: number): Promise<RecoverOverflowResult | null> {
  const { deps, key, requestId, req } = run;
  const max = deps.maxOverflowRetries;
  const compactionId = deps.newId();
  // 5–6. The candidate to hide, or none.
  const plan = planOverflowCompaction(view, { compactionId, provider: req.provider, model: req.model, now: deps.clock() });
  if (!plan) return refuse(run, 'nothing_eligible', used, view);
  // 7. One mutation: the block's events, the surface splice, its ledger entry, the budget charge and the answer of 8.
  // The transaction is one replace (one generation) and an engine block of tier 1 with no
  // parents, so the block and the generation follow from the view: no projection of the
  // whole log again (recovery.test.ts pins them against a full rebuild).
  const generation = view.generation + 1;
  const response: RecoverOverflowResult = { action: 'retry', reason: 'compacted', block: plan.block, budget: { used: used + 1, max }, generation };
  // An overflow range never spans a checkpoint (a barrier), so the block has no parents to deactivate.
  if (plan.tx.parentBlockIds.length > 0) throw new Error('an overflow block with parents: the ranges let a checkpoint through');
  const block = landedBlock(view, plan.tx.events[1]);
  const res = await deps.store.commit(key, {
    expect: { head: view.head, generation: view.generation },
    events: plan.tx.events.map((e) => JSON.stringify(e)),
    surfaceOps: [plan.surfaceOp],
    generation,
    ledger: { [compactionId]: JSON.stringify(block) },
    budgetCharge: { agentId: req.agentId, max, ttlSeconds: BUDGET_TTL_SECONDS },
    idempotency: deps.idem.record(requestId, 'recover', response),
  });
  // 8.
  if (res.status === 'ok') return response;
  // A twin call with the same request id committed first: its answer is this one's.
  if (res.status === 'duplicate') return deps.idem.decode<RecoverOverflowResult>(res.value, 'recover');
  // The store checks the budget in the same atomic step: another recovery spent it meanwhile.
  if (res.status === 'budget_spent') return refuse(run, 'budget_spent', res.used, view);
  return null;
}

/** The agent's retries used since its last reset. */
async function usedBudget(run: Run): Promise<number> {
  return (await run.deps.store.readBudget(run.key, run.req.agentId))?.used ?? 0;
}

/** A `surface_error` answer at `view`. */
function refusal(run: Run, reason: RecoverReason, used: number, view: SessionView): RecoverOverflowResult {
  return { action: 'surface_error', reason, budget: { used, max: run.deps.maxOverflowRetries }, generation: view.generation };
}

/** A `surface_error` answer, recorded under the request id. */
function refuse(run: Run, reason: RecoverReason, used: number, view: SessionView): Promise<RecoverOverflowResult> {
  return remember(run, refusal(run, reason, used, view));
}

/** Record an answer that wrote nothing; a twin call's record written meanwhile wins. */
function remember(run: Run, answer: RecoverOverflowResult): Promise<RecoverOverflowResult> {
  return run.deps.idem.remember(run.key, run.requestId, 'recover', answer);
}

/** The newest block whose summary landed after `headBefore`, if any (step 7's concurrent block). */
function blockLandedSince(view: SessionView, headBefore: number): RecoveredBlock | undefined {
  const landed = view.blocks.filter((b) => b.summaryEventSeq > headBefore);
  const b = landed[landed.length - 1];
  if (!b) return undefined;
  return { blockId: b.blockId, start: b.shadowedRange.start, end: b.shadowedRange.end, hiddenCount: b.shadowedSeqs.length, claimTokens: b.claimTokens };
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
 * Steps 5–6, pure: choose and build the one reduction of an overflow recovery, or null when
 * nothing is eligible. Candidates are the ranges ListCompressibleRanges offers with `preserveRecent` 5,
 * highest rank tokens first (oldest on ties); each candidate's final slice is checked against
 * the guards again before it is accepted, and a failing one passes the turn to the next.
 */
export function planOverflowCompaction(view: SessionView, ctx: OverflowContext): OverflowPlan | null {
  const guards = computeGuards(view, OVERFLOW_PRESERVE_RECENT);
  for (const cand of rankForOverflow(computeCompressibleRanges(view, OVERFLOW_PRESERVE_RECENT, guards))) {
    if (spanGuarded(view, guards, cand.span, 'table')) continue;
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

/**
 * ReportAgentStatus: `idle` clears the agent's overflow budget (the terminal reset); `running`
 * changes nothing. Both answer the budget after the call.
 * @throws InvalidFieldError for a missing agentId or another status
 * @throws NotFoundError for an unknown session
 */
export async function reportAgentStatus(deps: LogDeps, key: SessionKey, input: AgentStatusInput): Promise<{ budget: { used: number; max: number } }> {
  checkKey(key);
  const { agentId, status } = checkAgentStatus(input);
  await deps.log.requireView(key);
  if (status === 'idle') {
    await deps.store.resetBudget(key, agentId);
    return { budget: { used: 0, max: deps.maxOverflowRetries } };
  }
  const rec = await deps.store.readBudget(key, agentId);
  return { budget: { used: rec?.used ?? 0, max: deps.maxOverflowRetries } };
}
