/**
 * AppendEvents (§3.3): validate harness events and append them (creating the session on the
 * first append), with the prunes the append makes necessary, in ONE atomic write. Orphan
 * pruning happens HERE, at append time, and never inside a read or inside RecoverOverflow
 * (fixing §1.10 edge case 2): a read never moves the generation, and a recovery's progress is
 * only ever a landed block. An assistant message with `agentId` set resets that agent's
 * overflow budget in the same write.
 *
 * Tool pairing rule: the tail group (the last assistant node with calls, followed only by its
 * results) is open while a call is unanswered. A result for one of its pending calls pairs.
 * Anything else that reaches the surface first breaks the pair for good: the open group is
 * pruned as `unanswered-tool-call` before that node lands, and a result that answers no
 * pending call is appended and pruned at once as `orphan-tool-result`. Because the open group
 * is always the surface tail, a prune stub never breaks the seq order of the surface.
 */
import type { SessionKey, SessionMutation, SurfaceOp } from '@ctxmesh/stores';
import type { LogDeps } from './deps';
import { ConflictError } from './errors';
import type { LogEvent } from './events';
import { isMessageEvent, toolCallsOf } from './events';
import type { AppendEventsInput } from './inputs';
import { checkAppendInput, checkKey } from './inputs';
import type { SessionView } from './projection';
import { CLAIM_ESTIMATOR_ID, claimTokensOf } from './tokens';
import { pruneEvents } from './transaction';

/**
 * Attempts of an append without an explicit `expectedHead`. Parallel tool results race for
 * the tail legitimately, and every attempt re-plans from a fresh snapshot, so a few retries
 * are safe; writes with a semantic choice (Compress, RecoverOverflow) recompute only once.
 */
export const APPEND_ATTEMPTS = 5;

/** AppendEvents output. */
export interface AppendEventsResult {
  /** Seqs of the appended harness events, in input order. */
  seqs: number[];
  head: number;
  generation: number;
  /** Prunes the append wrote (broken tool pairing). */
  prunes: PlannedPrune[];
}

/**
 * AppendEvents: check the input, then plan on a fresh snapshot and commit, up to
 * {@link APPEND_ATTEMPTS} times while other appends win the race for the tail.
 * @throws InvalidFieldError for malformed or engine-owned events (the field is named)
 * @throws ConflictError `STALE_EXPECTED_HEAD` when `expectedHead` is not the current head, `CONFLICT_RETRY_EXHAUSTED` when every attempt lost
 */
export async function appendEvents(deps: LogDeps, key: SessionKey, input: AppendEventsInput): Promise<AppendEventsResult> {
  checkKey(key);
  const { events, expectedHead, agentId } = checkAppendInput(input);
  const resets = agentId !== '' && events.some((e) => e.type === 'assistant/message') ? [agentId] : [];
  let last = { head: -1, generation: 0 };
  for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
    const loaded = await deps.log.load(key);
    const view = loaded?.view ?? deps.log.viewOf([], -1);
    if (expectedHead !== undefined && expectedHead !== view.head) {
      throw new ConflictError('STALE_EXPECTED_HEAD', `expected head ${expectedHead}, current head is ${view.head}`, view.head, view.generation);
    }
    const plan = planAppend(view, events, deps.newId, deps.clock());
    const mutation: SessionMutation = {
      expect: { head: view.head, generation: view.generation },
      events: plan.events.map((e) => JSON.stringify(e)),
      surfaceOps: plan.surfaceOps,
      generation: view.generation + plan.prunes.length,
      ...(resets.length > 0 ? { budgetResets: resets } : {}),
      ...(loaded ? {} : { create: { estimatorId: CLAIM_ESTIMATOR_ID, createdAt: deps.clock(), epoch: deps.newId() } }),
    };
    const res = await deps.store.commit(key, mutation);
    if (res.status === 'ok') return { seqs: plan.harnessSeqs, head: res.head, generation: res.generation, prunes: plan.prunes };
    if (res.status !== 'stale') throw new Error(`unexpected commit status ${res.status}`);
    last = res;
    if (expectedHead !== undefined) {
      throw new ConflictError('STALE_EXPECTED_HEAD', `expected head ${expectedHead}, current head is ${res.head}`, res.head, res.generation);
    }
  }
  throw new ConflictError('CONFLICT_RETRY_EXHAUSTED', 'the session kept changing; retry the append', last.head, last.generation);
}

/** A prune written by an append. */
export interface PlannedPrune {
  pruneId: string;
  reason: 'unanswered-tool-call' | 'orphan-tool-result';
  shadowedSeqs: number[];
  /** Seq of the stub node. */
  stubSeq: number;
}

/** The plan of one append. */
export interface AppendPlan {
  /** Every event to append, in order (harness events and prune events). */
  events: LogEvent[];
  /** Seqs of the harness events, in input order. */
  harnessSeqs: number[];
  /** Surface operations for the store's surface cache. */
  surfaceOps: SurfaceOp[];
  /** Prunes written. */
  prunes: PlannedPrune[];
}

/**
 * Plan an append onto `view` (pure).
 * @param newId mints prune ids
 * @param now ms since the epoch, recorded on prunes
 */
export function planAppend(view: SessionView, harness: readonly LogEvent[], newId: () => string, now: number): AppendPlan {
  const events: LogEvent[] = [];
  const harnessSeqs: number[] = [];
  const surfaceOps: SurfaceOp[] = [];
  const prunes: PlannedPrune[] = [];
  const claimOf = new Map<number, number>();
  const nextSeq = () => view.head + 1 + events.length;

  let group: { pending: Set<string>; members: number[] } | null = null;
  const open = view.openToolGroup();
  if (open) group = { pending: new Set(open.pending), members: view.surface.slice(open.pos) };

  const claim = (seq: number) => claimOf.get(seq) ?? view.node(seq).claimTokens;
  const prune = (members: number[], reason: PlannedPrune['reason']) => {
    const pruneId = newId();
    const tokens = members.reduce((a, s) => a + claim(s), 0);
    const [pe, stub] = pruneEvents(pruneId, reason, members, tokens, now);
    events.push(pe);
    const stubSeq = nextSeq();
    events.push(stub);
    surfaceOps.push({ op: 'replace', startSeq: members[0]!, endSeq: members[members.length - 1]!, seq: stubSeq, count: members.length });
    prunes.push({ pruneId, reason, shadowedSeqs: [...members], stubSeq });
  };
  const pushNode = (e: LogEvent): number => {
    const seq = nextSeq();
    events.push(e);
    harnessSeqs.push(seq);
    claimOf.set(seq, claimTokensOf(e));
    surfaceOps.push({ op: 'push', seq });
    return seq;
  };

  for (const e of harness) {
    if (!isMessageEvent(e)) {
      harnessSeqs.push(nextSeq());
      events.push(e);
      continue;
    }
    if (e.type === 'tool/result') {
      if (group && group.pending.has(e.callId)) {
        group.pending.delete(e.callId);
        group.members.push(pushNode(e));
        if (group.pending.size === 0) group = null;
        continue;
      }
      if (group) prune(group.members, 'unanswered-tool-call');
      group = null;
      const seq = pushNode(e);
      prune([seq], 'orphan-tool-result');
      continue;
    }
    if (group) prune(group.members, 'unanswered-tool-call');
    group = null;
    const seq = pushNode(e);
    const calls = toolCallsOf(e);
    if (calls.length > 0) group = { pending: new Set(calls.map((c) => c.callId)), members: [seq] };
  }
  return { events, harnessSeqs, surfaceOps, prunes };
}
