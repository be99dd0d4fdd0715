/**
 * Planning an append (§3.3 AppendEvents): the harness events in order, plus the prunes the
 * append makes necessary. Orphan pruning happens HERE, at append time, and never inside a
 * read or inside RecoverOverflow (fixing §1.10 edge case 2): a read never moves the
 * generation, and a recovery's progress is only ever a landed block.
 *
 * Tool pairing rule: the tail group (the last assistant node with calls, followed only by its
 * results) is open while a call is unanswered. A result for one of its pending calls pairs.
 * Anything else that reaches the surface first breaks the pair for good: the open group is
 * pruned as `unanswered-tool-call` before that node lands, and a result that answers no
 * pending call is appended and pruned at once as `orphan-tool-result`. Because the open group
 * is always the surface tail, a prune stub never breaks the seq order of the surface.
 */
import type { SurfaceOp } from '@ctxmesh/stores';
import type { LogEvent } from './events';
import { isMessageEvent, toolCallsOf } from './events';
import type { SessionView } from './projection';
import { claimTokensOf } from './tokens';
import { pruneEvents } from './transaction';

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
 * Plan an append onto `view`.
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
