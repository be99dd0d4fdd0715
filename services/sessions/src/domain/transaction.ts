/**
 * The events of the compaction transaction (§1.4) and of a prune, built as one list that the
 * store appends atomically: `compaction/start`, `compaction/summary`, the checkpoint
 * `user/message` (same text, replace op, `sourceEventSeqs`), `compaction/end`. The claim range,
 * the replace range and `shadowedSeqs` are the same positional slice by construction.
 */
import type {
  CompactionEndEvent,
  CompactionPruneEvent,
  CompactionStartEvent,
  CompactionSummaryEvent,
  LogEvent,
  SummaryAuthor,
  UserMessageEvent,
} from './events';
import { CHECKPOINT_SOURCE_KIND, PRUNE_SOURCE_KIND, PRUNE_STUB_TEXT } from './events';
import type { Block, SessionView } from './projection';
import { CLAIM_ESTIMATOR_ID } from './tokens';
import { withSummaryFramePrefix } from './text';

/** Inputs of one block. */
export interface BlockDraft {
  /** New compaction id. */
  compactionId: string;
  /** The summary as written by its author; framed here unless engine-written (by content). */
  summary: string;
  topic: string;
  author: SummaryAuthor;
  /** The positional slice to hide (non-empty). */
  shadowedSeqs: number[];
  provider: string;
  model: string;
  verifiedReadings: string[];
  /** ms since the epoch. */
  createdAt: number;
}

/** Maximum tier of a distilled block. */
export const MAX_TIER = 3;

/** The four transaction events of a block, plus derived facts. */
export interface BlockTransaction {
  events: [CompactionStartEvent, CompactionSummaryEvent, UserMessageEvent, CompactionEndEvent];
  /** The stored (framed) summary. */
  summary: string;
  /** Claim tokens. */
  claimTokens: number;
  tier: number;
  parentBlockIds: string[];
}

/**
 * Build a block's transaction against a view. Tier and lineage come from the checkpoints in
 * the slice (explicit distillation); the claim is the fixed claim price of the slice.
 */
export function blockTransaction(view: SessionView, d: BlockDraft): BlockTransaction {
  if (d.shadowedSeqs.length === 0) throw new Error('a block must hide at least one node');
  const parents: Block[] = [];
  let claimTokens = 0;
  for (const s of d.shadowedSeqs) {
    claimTokens += view.node(s).claimTokens;
    const b = view.blockOfCheckpoint(s);
    if (b) parents.push(b);
  }
  const tier = parents.length === 0 ? 1 : Math.min(MAX_TIER, Math.max(...parents.map((p) => p.tier)) + 1);
  const summary = withSummaryFramePrefix(d.summary);
  const start = d.shadowedSeqs[0]!;
  const end = d.shadowedSeqs[d.shadowedSeqs.length - 1]!;
  const turn = view.openTurn;
  const parentBlockIds = parents.map((p) => p.blockId);
  return {
    summary,
    claimTokens,
    tier,
    parentBlockIds,
    events: [
      { type: 'compaction/start', compactionId: d.compactionId, turn },
      {
        type: 'compaction/summary',
        compactionId: d.compactionId,
        summary,
        topic: d.topic,
        author: d.author,
        tier,
        parentBlockIds,
        shadowedRange: { start, end },
        shadowedSeqs: [...d.shadowedSeqs],
        shadowedTokenCount: claimTokens,
        estimatorId: CLAIM_ESTIMATOR_ID,
        provider: d.provider,
        model: d.model,
        verifiedReadings: [...d.verifiedReadings],
        createdAt: d.createdAt,
      },
      {
        type: 'user/message',
        source: { kind: CHECKPOINT_SOURCE_KIND, compactionId: d.compactionId },
        content: [{ type: 'text', text: summary }],
        surfaceOp: { op: 'replace', startSeq: start, endSeq: end },
        sourceEventSeqs: [...d.shadowedSeqs],
      },
      { type: 'compaction/end', compactionId: d.compactionId, turn },
    ],
  };
}

/**
 * Build a prune: `compaction/prune` then the replacing stub `user/message`
 * (`(removed by context management)`, class metadata).
 * @param claimTokens claim price of the hidden nodes
 */
export function pruneEvents(
  pruneId: string,
  reason: CompactionPruneEvent['reason'],
  shadowedSeqs: number[],
  claimTokens: number,
  createdAt: number,
): [CompactionPruneEvent, UserMessageEvent] {
  const start = shadowedSeqs[0]!;
  const end = shadowedSeqs[shadowedSeqs.length - 1]!;
  return [
    {
      type: 'compaction/prune',
      pruneId,
      reason,
      shadowedRange: { start, end },
      shadowedSeqs: [...shadowedSeqs],
      shadowedTokenCount: claimTokens,
      estimatorId: CLAIM_ESTIMATOR_ID,
      createdAt,
    },
    {
      type: 'user/message',
      source: { kind: PRUNE_SOURCE_KIND, pruneId },
      content: [{ type: 'text', text: PRUNE_STUB_TEXT }],
      surfaceOp: { op: 'replace', startSeq: start, endSeq: end },
      sourceEventSeqs: [...shadowedSeqs],
    },
  ];
}

/** True for events that change the surface by replacement. */
export function isReplaceEvent(e: LogEvent): e is UserMessageEvent & { surfaceOp: NonNullable<UserMessageEvent['surfaceOp']> } {
  return e.type === 'user/message' && e.surfaceOp !== undefined;
}
