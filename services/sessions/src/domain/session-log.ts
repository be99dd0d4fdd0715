/**
 * `SessionLog`: the sessions domain behind the RPCs of §3.3. It reads the log through the
 * `SessionStore` port, projects it (cached per session and head in this process), plans every
 * change as pure data, and commits each change as ONE atomic mutation that compares the
 * snapshot's head and generation. No gRPC, Redis or SQLite type appears here.
 *
 * Read calls (ProjectSurface, ListCompressibleRanges, Decompress, SearchContext, GetStatus)
 * never write, so they never move the generation (§3.5 invariant 12).
 */
import { randomUUID } from 'node:crypto';
import { parseSeqText } from '@ctxmesh/kernel';
import type { BudgetRecord, SessionKey, SessionMutation, SessionStore } from '@ctxmesh/stores';
import type { AppendPlan, PlannedPrune } from './append-plan';
import type { CapturedMessage } from './capture';
import { archiveOverview, capturedEvents, capturedMessageCount, recentMessages } from './capture';
import { planAppend } from './append-plan';
import type { CompressRangeInput, CompressRangeResult } from './compress-plan';
import { planCompress } from './compress-plan';
import { resolveMaxOverflowRetries } from './config';
import type { DecompressPage } from './decompress';
import { decompressPage, resolveRef } from './decompress';
import { ConflictError, CorruptLogError, InvalidArgumentError, NotFoundError } from './errors';
import type { LogEvent } from './events';
import { validateHarnessEvent } from './events';
import type { ClaimCurrency, NodeInfo, NodeInfoSource, ProjectedMessage, SessionView } from './projection';
import { buildView, describeNode } from './projection';
import type { RangeRow } from './ranges';
import { computeCompressibleRanges, DEFAULT_PRESERVE_RECENT } from './ranges';
import type { RecoveredBlock, RecoverOverflowResult } from './recovery';
import { CONTEXT_WINDOW_EXCEEDED, planOverflowCompaction } from './recovery';
import type { SearchHit } from './search';
import { buildCorpus, SearchIndex } from './search';
import { isEngineWrittenSummary } from './text';
import type { RankEstimator } from './tokens';
import { CLAIM_ESTIMATOR_ID, defaultRankEstimator } from './tokens';

/** Budget records live 24 h (§3.2). */
export const BUDGET_TTL_SECONDS = 24 * 3600;
/** Idempotency records live 1 h (§3.2). */
export const IDEMPOTENCY_TTL_SECONDS = 3600;
/** Most events one append may carry. */
export const MAX_APPEND_EVENTS = 1000;
/** Most ranges one Compress call may carry. */
export const MAX_COMPRESS_RANGES = 32;
/**
 * Attempts of an append without an explicit `expectedHead`. Parallel tool results race for
 * the tail legitimately, and every attempt re-plans from a fresh snapshot, so a few retries
 * are safe; writes with a semantic choice (Compress, RecoverOverflow) recompute only once.
 */
export const APPEND_ATTEMPTS = 5;

/** Options of {@link SessionLog}. */
export interface SessionLogOptions {
  /** The store. */
  store: SessionStore;
  /**
   * Overflow retry budget per agent: a non-negative integer; 0 disables recovery.
   * Validated here, so a bad deployment value fails at startup.
   * @default 1
   */
  maxOverflowRetries?: unknown;
  /** Clock, ms since the epoch. @default Date.now */
  clock?: () => number;
  /** Id generator for blocks, prunes and session epochs. @default crypto.randomUUID */
  newId?: () => string;
  /** Rank estimator. @default defaultRankEstimator */
  rankEstimator?: RankEstimator;
  /** Sessions whose parsed log and projection stay cached in this process. @default 256 */
  cacheSessions?: number;
}

/** A token window. */
export interface WindowInput {
  /** Context window of the model, tokens (> 0). */
  contextTokens: number;
  /** Tokens reserved for the output (0 ≤ reserved < contextTokens). */
  reservedOutputTokens: number;
}

/** A provider route. */
export interface RouteInput {
  provider?: string;
  model?: string;
}

/** AppendEvents input. */
export interface AppendEventsInput {
  /** Parsed event objects (see `events.ts`). */
  events: unknown[];
  /** Optimistic concurrency: the head the caller saw (-1 for a new session). */
  expectedHead?: number;
  /** The appending agent; an assistant message from it resets its overflow budget. */
  agentId?: string;
}

/** AppendEvents output. */
export interface AppendEventsResult {
  /** Seqs of the appended harness events, in input order. */
  seqs: number[];
  head: number;
  generation: number;
  /** Prunes the append wrote (broken tool pairing). */
  prunes: PlannedPrune[];
}

/** ProjectSurface input. */
export interface ProjectSurfaceInput {
  window?: WindowInput;
  /** Also return the advisory ranges. */
  includeRanges?: boolean;
  /** Protected tail for the advisory ranges. @default 5 */
  preserveRecent?: number;
}

/** ProjectSurface output. */
export interface ProjectSurfaceResult {
  head: number;
  generation: number;
  messages: ProjectedMessage[];
  /** Rank tokens of the surface. */
  rankTokens: number;
  /** `contextTokens − reservedOutputTokens`, 0 without a window. */
  inputBudget: number;
  /** True when a window was given and `rankTokens > inputBudget`. */
  overWindow: boolean;
  /** The advisory ranges, when asked. */
  ranges?: RangeRow[];
}

/** ListCompressibleRanges output. */
export interface ListRangesResult {
  head: number;
  generation: number;
  /** Oldest first. */
  ranges: RangeRow[];
}

/** One requested range of a Compress call, as received (validated by the domain). */
export interface CompressRangeRequest {
  startSeq?: unknown;
  endSeq?: unknown;
  summary?: unknown;
  topic?: unknown;
  verifiedReadings?: unknown;
}

/** Compress input. */
export interface CompressInput {
  /** Idempotency key. */
  requestId: string;
  /** Optimistic concurrency on the generation. */
  expectedGeneration?: number;
  /** `model` or `human`. */
  author: string;
  route?: RouteInput;
  ranges: CompressRangeRequest[];
}

/** Compress output. */
export interface CompressResult {
  /** Generation after the call. */
  generation: number;
  /** One result per range, in input order. */
  results: CompressRangeResult[];
}

/** Decompress input. */
export interface DecompressInput {
  /** `bN` or a block/prune id prefix. */
  ref: string;
  /** Clamped to ≥ 0. */
  offset?: unknown;
  /** Clamped to 1..100; absent means 100. */
  limit?: unknown;
}

/** SearchContext input. */
export interface SearchContextInput {
  query: string;
  /** ≤ 0 or absent means 5. */
  limit?: number;
}

/** RecoverOverflow input. */
export interface RecoverOverflowInput {
  /** Idempotency key. */
  requestId: string;
  agentId: string;
  failure: { code: string; message?: string; providerRequestId?: string };
  aborted?: boolean;
  window?: WindowInput;
  route?: RouteInput;
}

/** ReportAgentStatus input. */
export interface AgentStatusInput {
  agentId: string;
  /** `idle` (resets the agent's budget) or `running`. */
  status: string;
}

/** AppendMessages output. */
export interface AppendMessagesResult {
  /** Seqs of the appended messages, in input order. */
  seqs: number[];
  /** Captured messages in the session after the call (see `capturedMessageCount`). */
  messageCount: number;
  head: number;
  generation: number;
}

/** GetSearchContext input. */
export interface SearchContextRequestInput {
  /** Materialise a missing session (an empty log). @default false */
  create?: boolean;
  /** Most messages; ≤ 0 or absent means 20. */
  limit?: number;
}

/** GetSearchContext output. */
export interface SearchContextResult {
  /** The session exists (after creation). */
  exists: boolean;
  /** This call created it. */
  created: boolean;
  /** Latest real user/assistant messages, oldest first. */
  messages: CapturedMessage[];
  /** Newest model- or human-written summary ('' when none). */
  archiveOverview: string;
}

/** A block as GetStatus reports it. */
export interface BlockStatus {
  blockId: string;
  kernelRef: string;
  tier: number;
  topic: string;
  author: string;
  /** Checkpoint seq (-1 when missing). */
  summarySeq: number;
  hiddenCount: number;
  claimTokens: number;
  active: boolean;
}

/** GetStatus output. */
export interface SessionStatus {
  head: number;
  generation: number;
  surfaceNodes: number;
  rankTokens: number;
  blocks: BlockStatus[];
  /** Live checkpoint seqs on the surface. */
  checkpointSeqs: number[];
  budgets: Array<{ agentId: string; used: number; max: number }>;
  claims: ClaimCurrency;
  estimatorId: string;
  /** Compactions with a start and no end (stale leftovers; never blocking). */
  danglingCompactions: string[];
}

interface CacheEntry {
  epoch: string;
  /** Parsed events; append-only, so views at older heads stay valid. */
  events: LogEvent[];
  /** Node facts of these events, memoised by seq. */
  info: NodeInfoSource;
  view?: SessionView;
  search?: { head: number; index: SearchIndex };
}

type IdemOp = 'compress' | 'recover';

function cacheKeyOf(key: SessionKey): string {
  return JSON.stringify([key.account, key.user, key.sessionId]);
}

function checkKey(key: SessionKey): void {
  if (typeof key.account !== 'string' || key.account === '') throw new InvalidArgumentError('identity.accountId', 'is required');
  if (typeof key.user !== 'string' || key.user === '') throw new InvalidArgumentError('identity.userId', 'is required');
  if (typeof key.sessionId !== 'string' || key.sessionId.trim() === '') throw new InvalidArgumentError('sessionId', 'is required');
}

function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new InvalidArgumentError(field, 'is required');
  return v;
}

function optionalString(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new InvalidArgumentError(field, 'must be a string');
  return v;
}

function validateWindow(w: unknown): WindowInput | undefined {
  if (w === undefined || w === null) return undefined;
  if (typeof w !== 'object') throw new InvalidArgumentError('window', 'must be an object');
  const { contextTokens, reservedOutputTokens } = w as Record<string, unknown>;
  if (typeof contextTokens !== 'number' || !Number.isInteger(contextTokens) || contextTokens <= 0) {
    throw new InvalidArgumentError('window.contextTokens', 'must be an integer > 0');
  }
  const reserved = reservedOutputTokens ?? 0;
  if (typeof reserved !== 'number' || !Number.isInteger(reserved) || reserved < 0) {
    throw new InvalidArgumentError('window.reservedOutputTokens', 'must be an integer >= 0');
  }
  if (reserved >= contextTokens) throw new InvalidArgumentError('window.reservedOutputTokens', 'must be less than window.contextTokens');
  return { contextTokens, reservedOutputTokens: reserved };
}

function validatePreserveRecent(v: unknown, field: string): number {
  if (v === undefined || v === null) return DEFAULT_PRESERVE_RECENT;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new InvalidArgumentError(field, 'must be an integer >= 0');
  return v;
}

/**
 * Parse a seq edge: an integer ≥ 0 given as a number, a decimal string (`"295"`) or a split
 * tool-call id (`"295#callId"`, the suffix is dropped).
 */
function parseSeq(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') throw new InvalidArgumentError(field, 'is required');
  const n = typeof v === 'number' ? v : typeof v === 'string' ? (parseSeqText(v) ?? NaN) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidArgumentError(field, 'must be an integer >= 0');
  return n;
}

function validateRanges(raw: unknown): CompressRangeInput[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new InvalidArgumentError('ranges', 'at least one range is required');
  if (raw.length > MAX_COMPRESS_RANGES) throw new InvalidArgumentError('ranges', `at most ${MAX_COMPRESS_RANGES} ranges per call`);
  return raw.map((r: unknown, i) => {
    const path = `ranges[${i}]`;
    if (typeof r !== 'object' || r === null) throw new InvalidArgumentError(path, 'must be an object');
    const req = r as CompressRangeRequest;
    const startSeq = parseSeq(req.startSeq, `${path}.startSeq`);
    const endSeq = parseSeq(req.endSeq, `${path}.endSeq`);
    if (typeof req.summary !== 'string' || req.summary.trim() === '') throw new InvalidArgumentError(`${path}.summary`, 'must be a non-blank summary');
    // The engine lead exempts a text from the model-written frame; a caller may not claim it.
    if (isEngineWrittenSummary(req.summary)) {
      throw new InvalidArgumentError(`${path}.summary`, 'must not start with the engine-written lead', 'RESERVED_SUMMARY_LEAD');
    }
    const topic = optionalString(req.topic, `${path}.topic`);
    let verifiedReadings: string[] = [];
    if (req.verifiedReadings !== undefined && req.verifiedReadings !== null) {
      if (!Array.isArray(req.verifiedReadings) || req.verifiedReadings.some((x) => typeof x !== 'string')) {
        throw new InvalidArgumentError(`${path}.verifiedReadings`, 'must be a list of strings');
      }
      verifiedReadings = [...(req.verifiedReadings as string[])];
    }
    return { startSeq, endSeq, summary: req.summary, topic, verifiedReadings };
  });
}

function parseStoredEvent(json: string, seq: number): LogEvent {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new CorruptLogError(seq, 'not JSON', e);
  }
  if (typeof v !== 'object' || v === null || typeof (v as { type?: unknown }).type !== 'string') throw new CorruptLogError(seq, 'not an event');
  return v as LogEvent;
}

/** The sessions domain. One instance per process; safe for concurrent calls. */
export class SessionLog {
  /** The resolved overflow retry budget maximum. */
  readonly maxOverflowRetries: number;
  private readonly store: SessionStore;
  private readonly clock: () => number;
  private readonly newId: () => string;
  private readonly estimator: RankEstimator;
  private readonly cacheLimit: number;
  private readonly cache = new Map<string, CacheEntry>();
  /** @throws ConfigError when `maxOverflowRetries` is negative or not an integer */
  constructor(opts: SessionLogOptions) {
    this.maxOverflowRetries = resolveMaxOverflowRetries(opts.maxOverflowRetries);
    this.store = opts.store;
    this.clock = opts.clock ?? Date.now;
    this.newId = opts.newId ?? randomUUID;
    this.estimator = opts.rankEstimator ?? defaultRankEstimator;
    this.cacheLimit = Math.max(1, opts.cacheSessions ?? 256);
  }

  // ---------------------------------------------------------------------------------------
  // Loading

  /** Build a view of arbitrary events (memoised node facts). Exposed for tests and benchmarks. */
  viewOf(events: readonly LogEvent[], head = events.length - 1): SessionView {
    return buildView(events, head, this.infoSource());
  }

  /**
   * A memo of node facts by seq, checked by event identity. A plain array beats a WeakMap
   * keyed by event here: the 100k-event benchmark spent most of its time in WeakMap lookups
   * and their ephemeron GC work.
   */
  private infoSource(): NodeInfoSource {
    const memo: NodeInfo[] = [];
    return (seq, e) => {
      let i = memo[seq];
      if (i === undefined || i.event !== e) {
        i = describeNode(seq, e, this.estimator);
        memo[seq] = i;
      }
      return i;
    };
  }

  private remember(k: string, entry: CacheEntry): void {
    this.cache.delete(k);
    this.cache.set(k, entry);
    while (this.cache.size > this.cacheLimit) this.cache.delete(this.cache.keys().next().value!);
  }

  private async loadEntry(key: SessionKey): Promise<{ entry: CacheEntry; view: SessionView } | null> {
    const k = cacheKeyOf(key);
    let entry = this.cache.get(k);
    let after = entry ? entry.events.length - 1 : -1;
    let snap = await this.store.snapshot(key, after);
    if (!snap) {
      this.cache.delete(k);
      return null;
    }
    if (entry && (entry.epoch !== snap.meta.epoch || snap.meta.head < after)) {
      // The key now holds another log (deleted and recreated): start over.
      entry = undefined;
      after = -1;
      snap = await this.store.snapshot(key, -1);
      if (!snap) return null;
    }
    if (!entry) entry = { epoch: snap.meta.epoch, events: [], info: this.infoSource() };
    const target = entry;
    snap.events.forEach((json, i) => {
      const seq = after + 1 + i;
      // A concurrent load may already have pushed these seqs; the log is append-only, so
      // whoever pushed first pushed the same bytes.
      if (seq === target.events.length) target.events.push(parseStoredEvent(json, seq));
    });
    if (target.events.length < snap.meta.head + 1) throw new CorruptLogError(snap.meta.head, 'log shorter than head');
    this.remember(k, target);
    const head = snap.meta.head;
    let view = target.view && target.view.head === head ? target.view : undefined;
    if (!view) {
      view = buildView(target.events, head, target.info);
      if (!target.view || target.view.head < head) target.view = view;
    }
    if (view.generation !== snap.meta.generation) {
      throw new CorruptLogError(head, `projected generation ${view.generation} differs from stored ${snap.meta.generation}`);
    }
    return { entry: target, view };
  }

  private async requireView(key: SessionKey): Promise<SessionView> {
    const r = await this.loadEntry(key);
    if (!r) throw new NotFoundError('SESSION_NOT_FOUND', `session ${key.sessionId} not found`, { sessionId: key.sessionId });
    return r.view;
  }

  // ---------------------------------------------------------------------------------------
  // Idempotency

  private async cachedResponse<T>(key: SessionKey, requestId: string, op: IdemOp): Promise<T | null> {
    const raw = await this.store.getIdempotent(key, requestId);
    return raw === null ? null : this.decodeIdem<T>(raw, op);
  }

  private decodeIdem<T>(raw: string, op: IdemOp): T {
    const rec = JSON.parse(raw) as { op: IdemOp; response: T };
    if (rec.op !== op) throw new InvalidArgumentError('requestId', `was already used for a ${rec.op} call`, 'REQUEST_ID_REUSED');
    return rec.response;
  }

  private encodeIdem(op: IdemOp, response: unknown): string {
    return JSON.stringify({ op, response });
  }

  /** Record a response that wrote nothing; a record written meanwhile by a twin call wins. */
  private async rememberResponse<T>(key: SessionKey, requestId: string, op: IdemOp, response: T): Promise<T> {
    const existing = await this.store.putIdempotent(key, { requestId, value: this.encodeIdem(op, response), ttlSeconds: IDEMPOTENCY_TTL_SECONDS });
    return existing === null ? response : this.decodeIdem<T>(existing, op);
  }

  // ---------------------------------------------------------------------------------------
  // Writes

  /**
   * AppendEvents: validate and append harness events (creating the session on first append).
   * Prunes broken tool pairing in the same atomic write. An `assistant/message` with
   * `agentId` set resets that agent's overflow budget in the same write.
   * @throws InvalidArgumentError for malformed or engine-owned events (the field is named)
   * @throws ConflictError `STALE_EXPECTED_HEAD` when `expectedHead` is not the current head
   */
  async appendEvents(key: SessionKey, input: AppendEventsInput): Promise<AppendEventsResult> {
    checkKey(key);
    if (!Array.isArray(input.events) || input.events.length === 0) throw new InvalidArgumentError('events', 'at least one event is required');
    if (input.events.length > MAX_APPEND_EVENTS) throw new InvalidArgumentError('events', `at most ${MAX_APPEND_EVENTS} events per append`);
    const events = input.events.map((e, i) => validateHarnessEvent(e, `events[${i}]`));
    const { expectedHead } = input;
    if (expectedHead !== undefined && (!Number.isSafeInteger(expectedHead) || expectedHead < -1)) {
      throw new InvalidArgumentError('expectedHead', 'must be an integer >= -1');
    }
    const agentId = optionalString(input.agentId, 'agentId');
    const resets = agentId !== '' && events.some((e) => e.type === 'assistant/message') ? [agentId] : [];
    let last = { head: -1, generation: 0 };
    for (let attempt = 0; attempt < APPEND_ATTEMPTS; attempt++) {
      const loaded = await this.loadEntry(key);
      const view = loaded?.view ?? this.viewOf([], -1);
      if (expectedHead !== undefined && expectedHead !== view.head) {
        throw new ConflictError('STALE_EXPECTED_HEAD', `expected head ${expectedHead}, current head is ${view.head}`, view.head, view.generation);
      }
      const plan: AppendPlan = planAppend(view, events, this.newId, this.clock());
      const mutation: SessionMutation = {
        expect: { head: view.head, generation: view.generation },
        events: plan.events.map((e) => JSON.stringify(e)),
        surfaceOps: plan.surfaceOps,
        generation: view.generation + plan.prunes.length,
        ...(resets.length > 0 ? { budgetResets: resets } : {}),
        ...(loaded ? {} : { create: { estimatorId: CLAIM_ESTIMATOR_ID, createdAt: this.clock(), epoch: this.newId() } }),
      };
      const res = await this.store.commit(key, mutation);
      if (res.status === 'ok') return { seqs: plan.harnessSeqs, head: res.head, generation: res.generation, prunes: plan.prunes };
      if (res.status !== 'stale') throw new Error(`unexpected commit status ${res.status}`);
      last = res;
      if (expectedHead !== undefined) {
        throw new ConflictError('STALE_EXPECTED_HEAD', `expected head ${expectedHead}, current head is ${res.head}`, res.head, res.generation);
      }
    }
    throw new ConflictError('CONFLICT_RETRY_EXHAUSTED', 'the session kept changing; retry the append', last.head, last.generation);
  }

  /**
   * Compress: hide ranges behind model- or human-written summaries. Per-range refusals
   * (`already_compressed`, `guarded`, `unbalanced`, `unknown_seq`) are results, and write
   * nothing for that range; every landed block is written in one atomic mutation.
   * @throws InvalidArgumentError for malformed input, reversed ranges and seqs outside the log
   * @throws ConflictError on a stale `expectedGeneration`, or when a recompute conflicts again
   */
  async compress(key: SessionKey, input: CompressInput): Promise<CompressResult> {
    checkKey(key);
    const requestId = requireString(input.requestId, 'requestId');
    const author = input.author;
    if (author !== 'model' && author !== 'human') throw new InvalidArgumentError('author', "must be 'model' or 'human'");
    const { expectedGeneration } = input;
    if (expectedGeneration !== undefined && (!Number.isSafeInteger(expectedGeneration) || expectedGeneration < 0)) {
      throw new InvalidArgumentError('expectedGeneration', 'must be an integer >= 0');
    }
    const ranges = validateRanges(input.ranges);
    const provider = optionalString(input.route?.provider, 'route.provider');
    const model = optionalString(input.route?.model, 'route.model');
    let view = await this.requireView(key);
    const cached = await this.cachedResponse<CompressResult>(key, requestId, 'compress');
    if (cached) return cached;
    if (expectedGeneration !== undefined && expectedGeneration !== view.generation) {
      throw new ConflictError('STALE_EXPECTED_GENERATION', `expected generation ${expectedGeneration}, current is ${view.generation}`, view.head, view.generation);
    }
    ranges.forEach((r, i) => {
      for (const [field, seq] of [['startSeq', r.startSeq], ['endSeq', r.endSeq]] as const) {
        if (seq > view.head) {
          throw new InvalidArgumentError(
            `ranges[${i}].${field}`,
            `seq ${seq} is not in the log (head is ${view.head}); take edges from ListCompressibleRanges or GetStatus`,
            'SEQ_NOT_IN_LOG',
          );
        }
      }
      const a = view.posOf(r.startSeq);
      const b = view.posOf(r.endSeq);
      // Checkpoints make the surface non-monotonic in seq, so two live edges are ordered by
      // position; anything else by value.
      const reversed = a !== undefined && b !== undefined ? a > b : r.startSeq > r.endSeq;
      if (reversed) throw new InvalidArgumentError(`ranges[${i}]`, `reversed range ${r.startSeq}..${r.endSeq}`, 'REVERSED_RANGE');
    });
    let last = { head: view.head, generation: view.generation };
    for (let attempt = 0; attempt < 2; attempt++) {
      const plan = planCompress(view, ranges, {
        author,
        provider,
        model,
        newId: this.newId,
        now: this.clock(),
        rebuild: (events, head) => buildView(events, head, view.infoSource),
      });
      const response: CompressResult = { generation: plan.view.generation, results: plan.results };
      if (plan.events.length === 0) return this.rememberResponse(key, requestId, 'compress', response);
      const res = await this.store.commit(key, {
        expect: { head: view.head, generation: view.generation },
        events: plan.events.map((e) => JSON.stringify(e)),
        surfaceOps: plan.surfaceOps,
        generation: plan.view.generation,
        ledger: plan.ledger,
        idempotency: { requestId, value: this.encodeIdem('compress', response), ttlSeconds: IDEMPOTENCY_TTL_SECONDS },
      });
      if (res.status === 'ok') return response;
      if (res.status === 'duplicate') return this.decodeIdem<CompressResult>(res.value, 'compress');
      if (res.status !== 'stale') throw new Error(`unexpected commit status ${res.status}`);
      last = res;
      if (expectedGeneration !== undefined) {
        throw new ConflictError('STALE_EXPECTED_GENERATION', `expected generation ${expectedGeneration}, current is ${res.generation}`, res.head, res.generation);
      }
      view = await this.requireView(key);
    }
    throw new ConflictError('CONFLICT_RETRY_EXHAUSTED', 'the session changed twice while compressing; re-read and retry', last.head, last.generation);
  }

  /**
   * RecoverOverflow, the state machine of §3.4:
   * 1. a seen `requestId` returns the cached response;
   * 2. another failure code → `surface_error/not_overflow`; 3. aborted → `surface_error/aborted`
   *    (neither writes nor touches the budget);
   * 4. `used ≥ max` → `surface_error/budget_spent`;
   * 5. nothing eligible (`preserveRecent` 5) → `surface_error/nothing_eligible`;
   * 6–7. hide the highest-ranked range (oldest on ties) whose final slice passes the guards,
   *    behind the engine marker, in one mutation that also charges the budget and records the
   *    response; on a conflict recompute once: if a block landed meanwhile the surface already
   *    shrank since the failure, so the answer is `retry` with that block and no new write;
   *    a second conflict → `surface_error/conflict_retry_exhausted` (not cached);
   * 8. `retry/compacted` with the block.
   * @throws InvalidArgumentError for a missing requestId, agentId or failure.code, or a bad window
   * @throws NotFoundError for an unknown session
   */
  async recoverOverflow(key: SessionKey, input: RecoverOverflowInput): Promise<RecoverOverflowResult> {
    checkKey(key);
    const requestId = requireString(input.requestId, 'requestId');
    let view = await this.requireView(key);
    const cached = await this.cachedResponse<RecoverOverflowResult>(key, requestId, 'recover');
    if (cached) return cached;
    const agentId = requireString(input.agentId, 'agentId');
    const code = requireString(input.failure?.code, 'failure.code');
    validateWindow(input.window);
    if (input.aborted !== undefined && typeof input.aborted !== 'boolean') throw new InvalidArgumentError('aborted', 'must be a boolean');
    const provider = optionalString(input.route?.provider, 'route.provider');
    const model = optionalString(input.route?.model, 'route.model');
    const max = this.maxOverflowRetries;
    const usedNow = async () => (await this.store.readBudget(key, agentId))?.used ?? 0;
    const refuse = (reason: RecoverOverflowResult['reason'], used: number): RecoverOverflowResult => ({
      action: 'surface_error',
      reason,
      budget: { used, max },
      generation: view.generation,
    });
    const remember = (r: RecoverOverflowResult) => this.rememberResponse(key, requestId, 'recover', r);

    if (code !== CONTEXT_WINDOW_EXCEEDED) return remember(refuse('not_overflow', await usedNow()));
    if (input.aborted === true) return remember(refuse('aborted', await usedNow()));
    let used = await usedNow();
    if (used >= max) return remember(refuse('budget_spent', used));

    for (let attempt = 0; attempt < 2; attempt++) {
      const compactionId = this.newId();
      const plan = planOverflowCompaction(view, { compactionId, provider, model, now: this.clock() });
      if (!plan) return remember(refuse('nothing_eligible', used));
      const after = buildView([...view.events.slice(0, view.head + 1), ...plan.tx.events], view.head + plan.tx.events.length, view.infoSource);
      const response: RecoverOverflowResult = {
        action: 'retry',
        reason: 'compacted',
        block: plan.block,
        budget: { used: used + 1, max },
        generation: after.generation,
      };
      const block = after.block(compactionId)!;
      const res = await this.store.commit(key, {
        expect: { head: view.head, generation: view.generation },
        events: plan.tx.events.map((e) => JSON.stringify(e)),
        surfaceOps: [plan.surfaceOp],
        generation: after.generation,
        ledger: { [compactionId]: JSON.stringify(block) },
        budgetCharge: { agentId, max, ttlSeconds: BUDGET_TTL_SECONDS },
        idempotency: { requestId, value: this.encodeIdem('recover', response), ttlSeconds: IDEMPOTENCY_TTL_SECONDS },
      });
      if (res.status === 'ok') return response;
      if (res.status === 'duplicate') return this.decodeIdem<RecoverOverflowResult>(res.value, 'recover');
      if (res.status === 'budget_spent') return remember(refuse('budget_spent', res.used));
      if (attempt === 1) break;
      const headBefore = view.head;
      view = await this.requireView(key);
      used = await usedNow();
      const landed = view.blocks.filter((b) => b.summaryEventSeq > headBefore);
      if (landed.length > 0) {
        // The surface shrank after the failed request was built: retrying is already useful,
        // and hiding a second range would be two reductions for one overflow.
        const b = landed[landed.length - 1]!;
        const concurrent: RecoveredBlock = {
          blockId: b.blockId,
          start: b.shadowedRange.start,
          end: b.shadowedRange.end,
          hiddenCount: b.shadowedSeqs.length,
          claimTokens: b.claimTokens,
        };
        return remember({ action: 'retry', reason: 'compacted', block: concurrent, budget: { used, max }, generation: view.generation });
      }
      if (used >= max) return remember(refuse('budget_spent', used));
    }
    return refuse('conflict_retry_exhausted', used);
  }

  /**
   * AppendMessages (the plugins' capture hooks): `{role, content}` pairs become
   * `user/message` / `assistant/message` events, appended like AppendEvents (creating the
   * session on first capture; concurrent captures race for the tail and are retried).
   * @throws InvalidArgumentError naming `messages[i].role` / `messages[i].content`
   */
  async appendMessages(key: SessionKey, input: { messages: unknown }): Promise<AppendMessagesResult> {
    checkKey(key);
    const events = capturedEvents(input.messages);
    const res = await this.appendEvents(key, { events });
    const view = await this.requireView(key);
    return { seqs: res.seqs, messageCount: capturedMessageCount(view), head: res.head, generation: res.generation };
  }

  /**
   * GetSearchContext (context-contract §7.1, §8.1): the latest real messages and the archive
   * overview query expansion reads. An unknown session is not an error: `exists` is false,
   * unless `create` asks to materialise it (an empty log, get-or-create like the reference).
   */
  async getSearchContext(key: SessionKey, input: SearchContextRequestInput = {}): Promise<SearchContextResult> {
    checkKey(key);
    if (input.limit !== undefined && (typeof input.limit !== 'number' || !Number.isFinite(input.limit))) throw new InvalidArgumentError('limit', 'must be a number');
    let loaded = await this.loadEntry(key);
    let created = false;
    if (!loaded) {
      if (!input.create) return { exists: false, created: false, messages: [], archiveOverview: '' };
      const epoch = this.newId();
      await this.store.commit(key, {
        expect: { head: -1, generation: 0 },
        events: [],
        surfaceOps: [],
        generation: 0,
        create: { estimatorId: CLAIM_ESTIMATOR_ID, createdAt: this.clock(), epoch },
      });
      loaded = await this.loadEntry(key);
      if (!loaded) throw new Error('session missing right after its creation');
      // A racing creator's commit also lands (as a no-op), and one that appended first makes
      // ours stale: only the epoch we minted says that this call created the session.
      created = loaded.entry.epoch === epoch;
    }
    const { view } = loaded;
    return { exists: true, created, messages: recentMessages(view, input.limit ?? 0), archiveOverview: archiveOverview(view) };
  }

  /**
   * ReportAgentStatus: `idle` clears the agent's overflow budget (the terminal reset);
   * `running` changes nothing.
   * @throws InvalidArgumentError for a missing agentId or another status
   */
  async reportAgentStatus(key: SessionKey, input: AgentStatusInput): Promise<{ budget: { used: number; max: number } }> {
    checkKey(key);
    const agentId = requireString(input.agentId, 'agentId');
    if (input.status !== 'idle' && input.status !== 'running') throw new InvalidArgumentError('status', "must be 'idle' or 'running'");
    await this.requireView(key);
    if (input.status === 'idle') {
      await this.store.resetBudget(key, agentId);
      return { budget: { used: 0, max: this.maxOverflowRetries } };
    }
    const rec = await this.store.readBudget(key, agentId);
    return { budget: { used: rec?.used ?? 0, max: this.maxOverflowRetries } };
  }

  // ---------------------------------------------------------------------------------------
  // Reads (never write, never move the generation)

  /**
   * ProjectSurface: the messages the model sees, their rank tokens and the window arithmetic.
   * It never drops anything on its own.
   * @throws InvalidArgumentError for `contextTokens ≤ 0` or `reservedOutputTokens ≥ contextTokens`
   */
  async projectSurface(key: SessionKey, input: ProjectSurfaceInput = {}): Promise<ProjectSurfaceResult> {
    checkKey(key);
    const window = validateWindow(input.window);
    const preserveRecent = validatePreserveRecent(input.preserveRecent, 'preserveRecent');
    const view = await this.requireView(key);
    const rankTokens = view.surfaceRankTokens();
    const inputBudget = window ? window.contextTokens - window.reservedOutputTokens : 0;
    return {
      head: view.head,
      generation: view.generation,
      messages: view.messages(),
      rankTokens,
      inputBudget,
      overWindow: window !== undefined && rankTokens > inputBudget,
      ...(input.includeRanges ? { ranges: computeCompressibleRanges(view, preserveRecent).map((r) => r.row) } : {}),
    };
  }

  /** ListCompressibleRanges, oldest first. @param input.preserveRecent default 5 */
  async listCompressibleRanges(key: SessionKey, input: { preserveRecent?: number } = {}): Promise<ListRangesResult> {
    checkKey(key);
    const preserveRecent = validatePreserveRecent(input.preserveRecent, 'preserveRecent');
    const view = await this.requireView(key);
    return { head: view.head, generation: view.generation, ranges: computeCompressibleRanges(view, preserveRecent).map((r) => r.row) };
  }

  /**
   * Decompress (read-only, paged).
   * @throws NotFoundError for an unknown ref; InvalidArgumentError for a blank or ambiguous one
   */
  async decompress(key: SessionKey, input: DecompressInput): Promise<DecompressPage> {
    checkKey(key);
    const view = await this.requireView(key);
    return decompressPage(view, resolveRef(view, input.ref), input.offset, input.limit);
  }

  /** SearchContext over blocks and hidden originals; an empty query gives no hits. */
  async searchContext(key: SessionKey, input: SearchContextInput): Promise<{ hits: SearchHit[] }> {
    checkKey(key);
    const query = input.query ?? '';
    if (typeof query !== 'string') throw new InvalidArgumentError('query', 'must be a string');
    if (input.limit !== undefined && typeof input.limit !== 'number') throw new InvalidArgumentError('limit', 'must be a number');
    const loaded = await this.loadEntry(key);
    if (!loaded) throw new NotFoundError('SESSION_NOT_FOUND', `session ${key.sessionId} not found`, { sessionId: key.sessionId });
    const { entry, view } = loaded;
    let index = entry.search?.head === view.head ? entry.search.index : undefined;
    if (!index) {
      index = new SearchIndex(buildCorpus(view));
      if (!entry.search || entry.search.head < view.head) entry.search = { head: view.head, index };
    }
    return { hits: index.search(query, input.limit) };
  }

  /** GetStatus: head, generation, blocks, live checkpoints, budgets, claims. */
  async getStatus(key: SessionKey): Promise<SessionStatus> {
    checkKey(key);
    const view = await this.requireView(key);
    const budgets: BudgetRecord[] = await this.store.listBudgets(key);
    return {
      head: view.head,
      generation: view.generation,
      surfaceNodes: view.surface.length,
      rankTokens: view.surfaceRankTokens(),
      blocks: view.blocks.map((b) => ({
        blockId: b.blockId,
        kernelRef: b.kernelRef,
        tier: b.tier,
        topic: b.topic,
        author: b.author,
        summarySeq: b.summarySeq ?? -1,
        hiddenCount: b.shadowedSeqs.length,
        claimTokens: b.claimTokens,
        active: b.active,
      })),
      checkpointSeqs: view.surface.filter((s) => view.node(s).checkpoint),
      budgets: budgets.map((b) => ({ agentId: b.agentId, used: b.used, max: this.maxOverflowRetries })),
      claims: view.claims(),
      estimatorId: CLAIM_ESTIMATOR_ID,
      danglingCompactions: [...view.danglingCompactions],
    };
  }
}
