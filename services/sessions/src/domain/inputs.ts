/**
 * What the session log's callers send (§3.3) and how it is checked, in one place. Every check
 * throws `InvalidFieldError` naming the field with its path (`ranges[0].summary`); the calls
 * run them in the order their comments give, so which error a bad request meets first stays
 * stable (e.g. a replayed RecoverOverflow answers before its other fields are looked at).
 */
import { parseSeqText } from '@ctxmesh/kernel';
import type { SessionKey } from '@ctxmesh/stores';
import { InvalidFieldError } from './errors';
import type { LogEvent } from './events';
import { validateHarnessEvent } from './events';
import type { SessionView } from './projection';
import { DEFAULT_PRESERVE_RECENT } from './ranges';
import { isEngineWrittenSummary } from './text';

/** Most events one append may carry. */
export const MAX_APPEND_EVENTS = 1000;
/** Most ranges one Compress call may carry. */
export const MAX_COMPRESS_RANGES = 32;

// ---------------------------------------------------------------------------------------------
// What callers send

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

/** ProjectSurface input. */
export interface ProjectSurfaceInput {
  window?: WindowInput;
  /** Also return the advisory ranges. */
  includeRanges?: boolean;
  /** Protected tail for the advisory ranges. @default 5 */
  preserveRecent?: number;
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

/** A validated range of a Compress call. */
export interface CompressRangeInput {
  startSeq: number;
  endSeq: number;
  /** The author's summary (framed when stored). */
  summary: string;
  topic: string;
  verifiedReadings: string[];
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

/** GetSearchContext input. */
export interface SearchContextRequestInput {
  /** Materialise a missing session (an empty log). @default false */
  create?: boolean;
  /** Most messages; ≤ 0 or absent means 20. */
  limit?: number;
}

// ---------------------------------------------------------------------------------------------
// Field checks

/**
 * The caller's account and user.
 * @throws InvalidFieldError `identity.accountId` / `identity.userId` when empty
 */
export function checkCaller(c: { account: unknown; user: unknown }): void {
  if (typeof c.account !== 'string' || c.account === '') throw new InvalidFieldError('identity.accountId', 'is required');
  if (typeof c.user !== 'string' || c.user === '') throw new InvalidFieldError('identity.userId', 'is required');
}

/**
 * A session key: the caller, and a non-blank session id (its characters are the gateway's to
 * check, with the kernel's `isSessionId`).
 * @throws InvalidFieldError naming the missing part
 */
export function checkKey(key: SessionKey): void {
  checkCaller(key);
  if (typeof key.sessionId !== 'string' || key.sessionId.trim() === '') throw new InvalidFieldError('sessionId', 'is required');
}

/** A non-blank string. @throws InvalidFieldError `field: is required` */
export function requireString(v: unknown, field: string): string {
  if (typeof v !== 'string' || v.trim() === '') throw new InvalidFieldError(field, 'is required');
  return v;
}

/** An optional string; absent is ''. @throws InvalidFieldError for a non-string */
export function optionalString(v: unknown, field: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new InvalidFieldError(field, 'must be a string');
  return v;
}

/**
 * An optional window: `contextTokens` an integer > 0, `reservedOutputTokens` (absent: 0) an
 * integer in `0..contextTokens-1`.
 * @throws InvalidFieldError naming `window`, `window.contextTokens` or `window.reservedOutputTokens`
 */
export function checkWindow(w: unknown): WindowInput | undefined {
  if (w === undefined || w === null) return undefined;
  if (typeof w !== 'object') throw new InvalidFieldError('window', 'must be an object');
  const { contextTokens, reservedOutputTokens } = w as Record<string, unknown>;
  if (typeof contextTokens !== 'number' || !Number.isInteger(contextTokens) || contextTokens <= 0) {
    throw new InvalidFieldError('window.contextTokens', 'must be an integer > 0');
  }
  const reserved = reservedOutputTokens ?? 0;
  if (typeof reserved !== 'number' || !Number.isInteger(reserved) || reserved < 0) {
    throw new InvalidFieldError('window.reservedOutputTokens', 'must be an integer >= 0');
  }
  if (reserved >= contextTokens) throw new InvalidFieldError('window.reservedOutputTokens', 'must be less than window.contextTokens');
  return { contextTokens, reservedOutputTokens: reserved };
}

/** An optional protected tail; absent is 5. @throws InvalidFieldError unless an integer ≥ 0 */
export function checkPreserveRecent(v: unknown, field: string): number {
  if (v === undefined || v === null) return DEFAULT_PRESERVE_RECENT;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw new InvalidFieldError(field, 'must be an integer >= 0');
  return v;
}

/**
 * A seq edge: an integer ≥ 0 given as a number, or as a message id in text form (`"295"`, or
 * `"295#callId"` for a split tool call; the kernel's `parseSeqText`).
 * @throws InvalidFieldError `is required` when absent or '', else `must be an integer >= 0`
 */
export function parseSeq(v: unknown, field: string): number {
  if (v === undefined || v === null || v === '') throw new InvalidFieldError(field, 'is required');
  const n = typeof v === 'number' ? v : typeof v === 'string' ? (parseSeqText(v) ?? NaN) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidFieldError(field, 'must be an integer >= 0');
  return n;
}

/**
 * The ranges of a Compress call: 1..{@link MAX_COMPRESS_RANGES} objects, each with two seq
 * edges, a non-blank summary that does not claim the engine's lead, an optional topic and
 * optional verified readings (strings).
 * @throws InvalidFieldError naming `ranges` or `ranges[i].<field>`
 */
export function checkRanges(raw: unknown): CompressRangeInput[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new InvalidFieldError('ranges', 'at least one range is required');
  if (raw.length > MAX_COMPRESS_RANGES) throw new InvalidFieldError('ranges', `at most ${MAX_COMPRESS_RANGES} ranges per call`);
  return raw.map((r: unknown, i) => {
    const path = `ranges[${i}]`;
    if (typeof r !== 'object' || r === null) throw new InvalidFieldError(path, 'must be an object');
    const req = r as CompressRangeRequest;
    const startSeq = parseSeq(req.startSeq, `${path}.startSeq`);
    const endSeq = parseSeq(req.endSeq, `${path}.endSeq`);
    if (typeof req.summary !== 'string' || req.summary.trim() === '') throw new InvalidFieldError(`${path}.summary`, 'must be a non-blank summary');
    // The engine lead exempts a text from the model-written frame; a caller may not claim it.
    if (isEngineWrittenSummary(req.summary)) {
      throw new InvalidFieldError(`${path}.summary`, 'must not start with the engine-written lead', 'RESERVED_SUMMARY_LEAD');
    }
    const topic = optionalString(req.topic, `${path}.topic`);
    let verifiedReadings: string[] = [];
    if (req.verifiedReadings !== undefined && req.verifiedReadings !== null) {
      if (!Array.isArray(req.verifiedReadings) || req.verifiedReadings.some((x) => typeof x !== 'string')) {
        throw new InvalidFieldError(`${path}.verifiedReadings`, 'must be a list of strings');
      }
      verifiedReadings = [...(req.verifiedReadings as string[])];
    }
    return { startSeq, endSeq, summary: req.summary, topic, verifiedReadings };
  });
}

/**
 * Every edge lies in the log, and no range is reversed. Checkpoints make the surface
 * non-monotonic in seq, so two live edges are ordered by position; anything else by value.
 * @throws InvalidFieldError `SEQ_NOT_IN_LOG` naming `ranges[i].startSeq|endSeq`, or `REVERSED_RANGE` naming `ranges[i]`
 */
export function checkRangesInLog(ranges: readonly CompressRangeInput[], view: SessionView): void {
  ranges.forEach((r, i) => {
    for (const [field, seq] of [['startSeq', r.startSeq], ['endSeq', r.endSeq]] as const) {
      if (seq > view.head) {
        throw new InvalidFieldError(
          `ranges[${i}].${field}`,
          `seq ${seq} is not in the log (head is ${view.head}); take edges from ListCompressibleRanges or GetStatus`,
          'SEQ_NOT_IN_LOG',
        );
      }
    }
    const a = view.posOf(r.startSeq);
    const b = view.posOf(r.endSeq);
    const reversed = a !== undefined && b !== undefined ? a > b : r.startSeq > r.endSeq;
    if (reversed) throw new InvalidFieldError(`ranges[${i}]`, `reversed range ${r.startSeq}..${r.endSeq}`, 'REVERSED_RANGE');
  });
}

// ---------------------------------------------------------------------------------------------
// Whole inputs, checked in the order a call meets them

/** A checked AppendEvents input. */
export interface CheckedAppend {
  /** The harness events, validated. */
  events: LogEvent[];
  expectedHead: number | undefined;
  /** '' when absent. */
  agentId: string;
}

/**
 * AppendEvents: 1..{@link MAX_APPEND_EVENTS} valid harness events, then `expectedHead`
 * (an integer ≥ -1), then `agentId`.
 * @throws InvalidFieldError for malformed or engine-owned events (the field is named)
 */
export function checkAppendInput(input: AppendEventsInput): CheckedAppend {
  if (!Array.isArray(input.events) || input.events.length === 0) throw new InvalidFieldError('events', 'at least one event is required');
  if (input.events.length > MAX_APPEND_EVENTS) throw new InvalidFieldError('events', `at most ${MAX_APPEND_EVENTS} events per append`);
  const events = input.events.map((e, i) => validateHarnessEvent(e, `events[${i}]`));
  const { expectedHead } = input;
  if (expectedHead !== undefined && (!Number.isSafeInteger(expectedHead) || expectedHead < -1)) {
    throw new InvalidFieldError('expectedHead', 'must be an integer >= -1');
  }
  return { events, expectedHead, agentId: optionalString(input.agentId, 'agentId') };
}

/** A checked Compress input. */
export interface CheckedCompress {
  requestId: string;
  author: 'model' | 'human';
  expectedGeneration: number | undefined;
  ranges: CompressRangeInput[];
  provider: string;
  model: string;
}

/**
 * Compress: `requestId`, `author`, `expectedGeneration` (an integer ≥ 0), the ranges, then the
 * route. The edges are checked against the log later, by {@link checkRangesInLog}.
 * @throws InvalidFieldError naming the first bad field
 */
export function checkCompressInput(input: CompressInput): CheckedCompress {
  const requestId = requireString(input.requestId, 'requestId');
  const author = input.author;
  if (author !== 'model' && author !== 'human') throw new InvalidFieldError('author', "must be 'model' or 'human'");
  const { expectedGeneration } = input;
  if (expectedGeneration !== undefined && (!Number.isSafeInteger(expectedGeneration) || expectedGeneration < 0)) {
    throw new InvalidFieldError('expectedGeneration', 'must be an integer >= 0');
  }
  const ranges = checkRanges(input.ranges);
  const provider = optionalString(input.route?.provider, 'route.provider');
  const model = optionalString(input.route?.model, 'route.model');
  return { requestId, author, expectedGeneration, ranges, provider, model };
}

/** A checked RecoverOverflow input (its `requestId` is checked first, on its own). */
export interface CheckedRecover {
  agentId: string;
  /** The provider's failure code. */
  code: string;
  aborted: boolean;
  provider: string;
  model: string;
}

/**
 * RecoverOverflow, after its replay check: `agentId`, `failure.code`, the window, `aborted`,
 * then the route.
 * @throws InvalidFieldError naming the first bad field
 */
export function checkRecoverInput(input: RecoverOverflowInput): CheckedRecover {
  const agentId = requireString(input.agentId, 'agentId');
  const code = requireString(input.failure?.code, 'failure.code');
  checkWindow(input.window);
  if (input.aborted !== undefined && typeof input.aborted !== 'boolean') throw new InvalidFieldError('aborted', 'must be a boolean');
  const provider = optionalString(input.route?.provider, 'route.provider');
  const model = optionalString(input.route?.model, 'route.model');
  return { agentId, code, aborted: input.aborted === true, provider, model };
}

/**
 * ReportAgentStatus: `agentId`, then a status of `idle` or `running`.
 * @throws InvalidFieldError naming `agentId` or `status`
 */
export function checkAgentStatus(input: AgentStatusInput): { agentId: string; status: 'idle' | 'running' } {
  const agentId = requireString(input.agentId, 'agentId');
  if (input.status !== 'idle' && input.status !== 'running') throw new InvalidFieldError('status', "must be 'idle' or 'running'");
  return { agentId, status: input.status };
}

/**
 * SearchContext: a string query (absent: ''), then an optional numeric limit.
 * @throws InvalidFieldError naming `query` or `limit`
 */
export function checkSearchInput(input: SearchContextInput): { query: string; limit: number | undefined } {
  const query = input.query ?? '';
  if (typeof query !== 'string') throw new InvalidFieldError('query', 'must be a string');
  if (input.limit !== undefined && typeof input.limit !== 'number') throw new InvalidFieldError('limit', 'must be a number');
  return { query, limit: input.limit };
}

/**
 * GetSearchContext: an optional finite limit.
 * @throws InvalidFieldError `limit: must be a number`
 */
export function checkSearchContextRequest(input: SearchContextRequestInput): void {
  if (input.limit !== undefined && (typeof input.limit !== 'number' || !Number.isFinite(input.limit))) throw new InvalidFieldError('limit', 'must be a number');
}
