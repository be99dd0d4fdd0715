/**
 * The projection of a log (§1.1): the surface (ordered seqs the model sees, changed only by
 * the positional splice of a replace operation, each splice bumping the generation), the
 * ledger of blocks and prunes rebuilt from `compaction/*` events, tool pairing on the surface,
 * and the projected messages. Everything here is a pure function of the events, so the same
 * log always gives the same surface, ledger and messages.
 */
import { messageId } from '@ctxmesh/kernel';
import type {
  CompactionPruneEvent,
  CompactionSummaryEvent,
  LogEvent,
  MessageEvent,
  SummaryAuthor,
} from './events';
import { isCheckpointSource, isMessageEvent, toolCallsOf } from './events';
import { CorruptLogError } from './errors';
import type { RowClass } from './classify';
import { classifyEvent, instructionScopes, isAnchorable, isRealUserTurn } from './classify';
import { contentText, nodeText, toolArgsJson, withSummaryFramePrefix } from './text';
import type { RankEstimator } from './tokens';
import { claimTokensOf } from './tokens';

/** The claim ledger of a session (claim currency, see `tokens.ts`). */
export interface ClaimCurrency {
  /** Claim tokens of every message event ever appended. */
  appended: number;
  /** Claim tokens taken back by blocks and prunes. */
  claimed: number;
  /** `appended − claimed`: the host-style projected total; never negative. */
  projected: number;
}

/** Role of a surface message. */
export type Role = 'user' | 'assistant' | 'tool' | 'system';

/** Facts about one message event, computed once per event. */
export interface NodeInfo {
  /** Seq. */
  seq: number;
  /** The event. */
  event: MessageEvent;
  /** Role. */
  role: Role;
  /** Row class. */
  cls: RowClass;
  /** Projected text (see `nodeText`). */
  text: string;
  /** Rank tokens: text count plus media prices. */
  rankTokens: number;
  /** Claim tokens (fixed estimator). */
  claimTokens: number;
  /** Image blocks. */
  images: number;
  /** File blocks. */
  files: number;
  /** A tool result or an assistant message with calls. */
  toolNode: boolean;
  /** May be a range edge. */
  anchorable: boolean;
  /** A real user turn. */
  realUserTurn: boolean;
  /** Instruction scopes (agent-instructions rows). */
  scopes: string[];
  /** A checkpoint. */
  checkpoint: boolean;
  /** The system node. */
  system: boolean;
  /** Tool call ids (assistant messages). */
  callIds: string[];
}

/** Compute the {@link NodeInfo} of a message event. */
export function describeNode(seq: number, event: MessageEvent, estimator: RankEstimator): NodeInfo {
  const cls = classifyEvent(event);
  const checkpoint = cls === 'checkpoint';
  const text = nodeText(event, checkpoint);
  let images = 0;
  let files = 0;
  let media = 0;
  for (const b of event.content) {
    if (b.type === 'image') {
      images++;
      media += estimator.mediaPrice(b);
    } else if (b.type === 'file') {
      files++;
      media += estimator.mediaPrice(b);
    }
  }
  const callIds = toolCallsOf(event).map((c) => c.callId);
  const role: Role =
    event.type === 'user/message' ? 'user' : event.type === 'assistant/message' ? 'assistant' : event.type === 'tool/result' ? 'tool' : 'system';
  return {
    seq,
    event,
    role,
    cls,
    text,
    rankTokens: estimator.countText(text) + media,
    claimTokens: claimTokensOf(event),
    images,
    files,
    toolNode: event.type === 'tool/result' || callIds.length > 0,
    anchorable: isAnchorable(event),
    realUserTurn: isRealUserTurn(event),
    scopes: instructionScopes(event),
    checkpoint,
    system: event.type === 'system/message',
    callIds,
  };
}

/** A block of the ledger (one per `compaction/summary`). */
export interface Block {
  /** Compaction id (a UUID). */
  blockId: string;
  /** Kernel-style ref `bN`, N = 1-based ordinal of the block in the log. */
  kernelRef: string;
  /** Seq of the `compaction/summary` event. */
  summaryEventSeq: number;
  /** Seq of the checkpoint node, or null if the log lacks it. */
  summarySeq: number | null;
  /** Stored summary bytes. */
  summary: string;
  topic: string;
  author: SummaryAuthor;
  tier: number;
  parentBlockIds: string[];
  shadowedSeqs: number[];
  shadowedRange: { start: number; end: number };
  /** Claim tokens. */
  claimTokens: number;
  estimatorId: string;
  provider: string;
  model: string;
  verifiedReadings: string[];
  createdAt: number;
  /** False once a later block names it as a parent. */
  active: boolean;
}

/** A prune record (one per `compaction/prune`). */
export interface Prune {
  /** Prune id. */
  pruneId: string;
  /** Seq of the `compaction/prune` event. */
  eventSeq: number;
  /** Seq of the stub node, or null if the log lacks it. */
  stubSeq: number | null;
  reason: CompactionPruneEvent['reason'];
  shadowedSeqs: number[];
  claimTokens: number;
}

/** Tool pairing over surface positions. */
export interface Pairing {
  /**
   * For the position of an assistant node with calls: the position of its last result, or
   * `Infinity` while any call is unanswered. -1 elsewhere.
   */
  groupEnd: Float64Array;
  /**
   * `cutOk[c]` (c in 0..n): true when cutting the surface between positions c-1 and c
   * separates no call from its result (`toolPairingBalancedBefore(c)`/`After(c-1)`).
   */
  cutOk: Uint8Array;
}

/** One projected message (§3.3 ProjectSurface). */
export interface ProjectedMessage {
  /** Seq of the event. */
  seq: number;
  /** `seq`, or `seq#callId` for each call of an assistant message (the kernel's `messageId`). */
  id: string;
  role: Role;
  /** Row class. */
  class: RowClass;
  /** Projected text (checkpoints framed; media as placeholders). */
  text: string;
  /** Call id (tool calls and results). */
  toolCallId?: string;
  /** Tool name (tool calls and results). */
  toolName?: string;
  /** Arguments JSON (tool calls). */
  toolArgs?: string;
}

/** The tail group of tool calls still waiting for results. */
export interface OpenToolGroup {
  /** Position of the assistant node. */
  pos: number;
  /** Seq of the assistant node. */
  seq: number;
  /** Unanswered call ids. */
  pending: Set<string>;
}

/** Source of node facts, memoised per event by the caller. */
export type NodeInfoSource = (seq: number, event: MessageEvent) => NodeInfo;

/**
 * A read-only projection of a log at one head. Build it with {@link buildView}. Derived
 * indexes (positions, pairing, owners) are computed lazily and memoised.
 */
export class SessionView {
  private posIndex: Map<number, number> | undefined;
  private pairingMemo: Pairing | undefined;
  private ownerMemo: Map<number, string> | undefined;
  private expandMemo = new Map<string, number[]>();
  private readonly blockById = new Map<string, Block>();
  private readonly blockByCheckpoint = new Map<number, Block>();

  constructor(
    /** Seq of the last event (-1 when empty). */
    readonly head: number,
    /** Replace generation. */
    readonly generation: number,
    /** Events; only indexes 0..head belong to this view. */
    readonly events: readonly LogEvent[],
    /** Surface seqs in positional order. */
    readonly surface: readonly number[],
    /** Blocks in log order. */
    readonly blocks: readonly Block[],
    /** Prunes in log order. */
    readonly prunes: readonly Prune[],
    /** The open turn number, or null. */
    readonly openTurn: number | null,
    /** Compaction ids with a start and no end (stale leftovers: logged, never blocking). */
    readonly danglingCompactions: readonly string[],
    /** Tool names of results, from the call they answer. */
    private readonly toolNames: ReadonlyMap<number, string>,
    private readonly info: NodeInfoSource,
  ) {
    for (const b of blocks) {
      this.blockById.set(b.blockId, b);
      if (b.summarySeq !== null) this.blockByCheckpoint.set(b.summarySeq, b);
    }
  }

  /** The node-fact source of this view (reuse it to rebuild a view over the same events). */
  get infoSource(): NodeInfoSource {
    return this.info;
  }

  /** Facts of the message event at `seq` (throws for non-message seqs). */
  node(seq: number): NodeInfo {
    const e = this.events[seq];
    if (!e || seq > this.head || !isMessageEvent(e)) throw new Error(`seq ${seq} is not a message event`);
    return this.info(seq, e);
  }

  /** True when `seq` is a message event of this view. */
  isMessage(seq: number): boolean {
    const e = seq <= this.head ? this.events[seq] : undefined;
    return e !== undefined && isMessageEvent(e);
  }

  /** Surface position of `seq`, or undefined when hidden or not a node. */
  posOf(seq: number): number | undefined {
    if (!this.posIndex) {
      this.posIndex = new Map();
      this.surface.forEach((s, i) => this.posIndex!.set(s, i));
    }
    return this.posIndex.get(seq);
  }

  /** Block by id. */
  block(blockId: string): Block | undefined {
    return this.blockById.get(blockId);
  }

  /** The block whose checkpoint node is `seq`, if any. */
  blockOfCheckpoint(seq: number): Block | undefined {
    return this.blockByCheckpoint.get(seq);
  }

  /** Tool name of the tool result at `seq` (from the event, else from the call it answers). */
  toolNameOf(seq: number): string | undefined {
    const e = this.events[seq];
    if (e?.type !== 'tool/result') return undefined;
    return e.toolName ?? this.toolNames.get(seq);
  }

  /** Tool pairing over the surface (memoised). */
  pairing(): Pairing {
    if (this.pairingMemo) return this.pairingMemo;
    const n = this.surface.length;
    const groupEnd = new Float64Array(n).fill(-1);
    let g: { pos: number; pending: Set<string>; last: number } | null = null;
    const close = () => {
      if (g) groupEnd[g.pos] = g.pending.size > 0 ? Infinity : g.last;
      g = null;
    };
    for (let p = 0; p < n; p++) {
      const info = this.node(this.surface[p]!);
      const e = info.event;
      if (e.type === 'tool/result') {
        if (g && g.pending.has(e.callId)) {
          g.pending.delete(e.callId);
          g.last = p;
          continue;
        }
        // An orphan result (only in a log written around our append-time pruning) stands
        // alone: it pairs with nothing, so no cut around it is unbalanced on its account.
        close();
        continue;
      }
      close();
      if (info.callIds.length > 0) g = { pos: p, pending: new Set(info.callIds), last: p };
    }
    close();
    const cutOk = new Uint8Array(n + 1);
    let openUntil = -1;
    for (let c = 0; c <= n; c++) {
      cutOk[c] = openUntil < c ? 1 : 0;
      if (c < n && groupEnd[c]! > openUntil) openUntil = groupEnd[c]!;
    }
    this.pairingMemo = { groupEnd, cutOk };
    return this.pairingMemo;
  }

  /**
   * The tail group whose calls still wait for results: the last assistant node with calls
   * when every node after it is one of its results and some call is unanswered.
   */
  openToolGroup(): OpenToolGroup | null {
    for (let p = this.surface.length - 1; p >= 0; p--) {
      const info = this.node(this.surface[p]!);
      if (info.event.type === 'tool/result') continue;
      if (info.callIds.length === 0) return null;
      const pending = new Set(info.callIds);
      for (let q = p + 1; q < this.surface.length; q++) {
        const r = this.node(this.surface[q]!).event;
        if (r.type !== 'tool/result' || !pending.has(r.callId)) return null;
        pending.delete(r.callId);
      }
      return pending.size > 0 ? { pos: p, seq: info.seq, pending } : null;
    }
    return null;
  }

  /**
   * The originals behind a list of hidden seqs: checkpoint nodes of blocks are replaced by
   * their own originals, recursively (distilled tiers expand to tier-1 originals).
   */
  expandOriginals(seqs: readonly number[]): number[] {
    const out: number[] = [];
    for (const s of seqs) {
      const b = this.blockOfCheckpoint(s);
      if (b) out.push(...this.blockOriginals(b));
      else out.push(s);
    }
    return out;
  }

  /** Every original a block hides, in order, expanded through distilled parents. */
  blockOriginals(b: Block): number[] {
    let memo = this.expandMemo.get(b.blockId);
    if (!memo) {
      memo = this.expandOriginals(b.shadowedSeqs);
      this.expandMemo.set(b.blockId, memo);
    }
    return memo;
  }

  /**
   * Owner of every hidden original: the earliest block or prune (by log position) that covers
   * it, directly or through a distilled parent.
   */
  owners(): ReadonlyMap<number, string> {
    if (this.ownerMemo) return this.ownerMemo;
    const owners = new Map<number, string>();
    const records: Array<{ at: number; id: string; seqs: number[] }> = [
      ...this.blocks.map((b) => ({ at: b.summaryEventSeq, id: b.blockId, seqs: this.blockOriginals(b) })),
      ...this.prunes.map((p) => ({ at: p.eventSeq, id: p.pruneId, seqs: p.shadowedSeqs })),
    ].sort((a, b) => a.at - b.at);
    for (const r of records) for (const s of r.seqs) if (!owners.has(s)) owners.set(s, r.id);
    this.ownerMemo = owners;
    return owners;
  }

  /** Rank tokens of the whole surface. */
  surfaceRankTokens(): number {
    let t = 0;
    for (const s of this.surface) t += this.node(s).rankTokens;
    return t;
  }

  /** The claim ledger: tokens appended by message events, tokens claimed back, and the projected total. */
  claims(): ClaimCurrency {
    let appended = 0;
    let claimed = 0;
    for (let s = 0; s <= this.head; s++) {
      const e = this.events[s]!;
      if (isMessageEvent(e)) appended += this.info(s, e).claimTokens;
      else if (e.type === 'compaction/summary' || e.type === 'compaction/prune') claimed += e.shadowedTokenCount;
    }
    return { appended, claimed, projected: appended - claimed };
  }

  /** The projected messages of the surface (one per call for assistant messages with calls). */
  messages(): ProjectedMessage[] {
    const out: ProjectedMessage[] = [];
    for (const seq of this.surface) {
      const info = this.node(seq);
      const e = info.event;
      const base = { seq, role: info.role, class: info.cls };
      if (e.type === 'assistant/message') {
        const calls = toolCallsOf(e);
        const text = contentText(e.content);
        if (calls.length === 0) {
          out.push({ ...base, id: messageId(seq), text });
          continue;
        }
        calls.forEach((c, i) => {
          out.push({ ...base, id: messageId(seq, c.callId), text: i === 0 ? text : '', toolCallId: c.callId, toolName: c.name, toolArgs: toolArgsJson(c) });
        });
      } else if (e.type === 'tool/result') {
        const toolName = this.toolNameOf(seq);
        out.push({ ...base, id: messageId(seq), text: info.text, toolCallId: e.callId, ...(toolName !== undefined ? { toolName } : {}) });
      } else {
        // Checkpoints pass through the frame function here too (the projection safety net);
        // info.text already did exactly that, so stored and projected bytes agree.
        out.push({ ...base, id: messageId(seq), text: info.cls === 'checkpoint' ? withSummaryFramePrefix(contentText(e.content)) : info.text });
      }
    }
    return out;
  }
}

/**
 * Build the projection of `events[0..head]`.
 * @throws CorruptLogError when a replace operation does not match the surface
 */
export function buildView(events: readonly LogEvent[], head: number, info: NodeInfoSource): SessionView {
  const surface: number[] = [];
  const blocks: Block[] = [];
  const prunes: Prune[] = [];
  const blockIndex = new Map<string, Block>();
  const pruneIndex = new Map<string, Prune>();
  const openCompactions = new Map<string, number>();
  const toolNames = new Map<number, string>();
  const lastCallName = new Map<string, string>();
  let generation = 0;
  let openTurn: number | null = null;
  let turnsSeen = 0;

  for (let seq = 0; seq <= head; seq++) {
    const e = events[seq];
    if (!e) throw new CorruptLogError(seq, 'missing event');
    switch (e.type) {
      case 'user/message':
      case 'assistant/message':
      case 'tool/result':
      case 'system/message': {
        if (e.type === 'assistant/message') for (const c of toolCallsOf(e)) lastCallName.set(c.callId, c.name);
        if (e.type === 'tool/result') {
          const name = lastCallName.get(e.callId);
          if (name !== undefined) toolNames.set(seq, name);
        }
        if (e.type === 'user/message' && e.surfaceOp) {
          const { startSeq, endSeq } = e.surfaceOp;
          const i = surface.indexOf(startSeq);
          const j = surface.indexOf(endSeq);
          if (i < 0 || j < 0 || j < i) throw new CorruptLogError(seq, `replace ${startSeq}..${endSeq} does not match the surface`);
          surface.splice(i, j - i + 1, seq);
          generation++;
          if (isCheckpointSource(e.source) && e.source?.compactionId) {
            const b = blockIndex.get(e.source.compactionId);
            if (b) b.summarySeq = seq;
          } else if (e.source?.pruneId) {
            const p = pruneIndex.get(e.source.pruneId);
            if (p) p.stubSeq = seq;
          }
        } else {
          surface.push(seq);
        }
        break;
      }
      case 'turn/start':
        turnsSeen++;
        openTurn = e.turn ?? turnsSeen;
        break;
      case 'turn/end':
        openTurn = null;
        break;
      case 'compaction/start':
        openCompactions.set(e.compactionId, seq);
        break;
      case 'compaction/end':
        openCompactions.delete(e.compactionId);
        break;
      case 'compaction/summary': {
        const b = blockOf(e, seq, blocks.length + 1);
        blocks.push(b);
        blockIndex.set(b.blockId, b);
        for (const pid of e.parentBlockIds) {
          const parent = blockIndex.get(pid);
          if (parent) parent.active = false;
        }
        break;
      }
      case 'compaction/prune': {
        const p: Prune = {
          pruneId: e.pruneId,
          eventSeq: seq,
          stubSeq: null,
          reason: e.reason,
          shadowedSeqs: [...e.shadowedSeqs],
          claimTokens: e.shadowedTokenCount,
        };
        prunes.push(p);
        pruneIndex.set(p.pruneId, p);
        break;
      }
    }
  }
  return new SessionView(head, generation, events, surface, blocks, prunes, openTurn, [...openCompactions.keys()], toolNames, info);
}

/**
 * The block a four-event compaction transaction (start, summary, checkpoint, end) lands as when
 * appended after `view.head` — what `buildView` over the longer log would give for it, without
 * projecting the whole log again (a 100,000-event rebuild per recovery). Its parents (a
 * distillation's) are not touched here: the caller builds the view again to see them.
 */
export function landedBlock(view: SessionView, summary: CompactionSummaryEvent): Block {
  const b = blockOf(summary, view.head + 2, view.blocks.length + 1);
  b.summarySeq = view.head + 3;
  return b;
}

function blockOf(e: CompactionSummaryEvent, seq: number, ordinal: number): Block {
  return {
    blockId: e.compactionId,
    kernelRef: `b${ordinal}`,
    summaryEventSeq: seq,
    summarySeq: null,
    summary: e.summary,
    topic: e.topic,
    author: e.author,
    tier: e.tier,
    parentBlockIds: [...e.parentBlockIds],
    shadowedSeqs: [...e.shadowedSeqs],
    shadowedRange: { ...e.shadowedRange },
    claimTokens: e.shadowedTokenCount,
    estimatorId: e.estimatorId,
    provider: e.provider,
    model: e.model,
    verifiedReadings: [...e.verifiedReadings],
    createdAt: e.createdAt,
    active: true,
  };
}
