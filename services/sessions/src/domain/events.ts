/**
 * The session event model (overflow-recovery §1.1, §3.1) and the validation of events a
 * harness appends (§3.6). An event's seq is its index in the log; no event is ever edited or
 * deleted. Message-bearing events become surface nodes; bookkeeping events never do;
 * `compaction/*` events, replace operations and checkpoint/prune stub sources are written by
 * the engine alone.
 */
import { InvalidFieldError } from './errors';

/** Plain text. */
export interface TextBlock {
  type: 'text';
  /** The text. */
  text: string;
}

/** An image, projected as a fixed placeholder such as `[image image/png shot.png 800x600 4.2KB]`. */
export interface ImageBlock {
  type: 'image';
  /** MIME type, e.g. `image/png`. */
  mimeType: string;
  /** File name. */
  name?: string;
  /** Width in pixels. */
  width?: number;
  /** Height in pixels. */
  height?: number;
  /** Size in bytes. */
  sizeBytes?: number;
}

/** A file attachment, projected as a fixed placeholder such as `[file notes.txt 1.0KB]`. */
export interface FileBlock {
  type: 'file';
  /** File name. */
  name: string;
  /** MIME type. */
  mimeType?: string;
  /** Size in bytes. */
  sizeBytes?: number;
}

/** A tool call inside an assistant message. */
export interface ToolCallBlock {
  type: 'tool-call';
  /** Call id, answered by a `tool/result` with the same `callId`. */
  callId: string;
  /** Tool name. */
  name: string;
  /** Arguments (any JSON value; absent means `{}`). */
  args?: unknown;
}

/** Blocks a user, system or tool message may hold. */
export type ContentBlock = TextBlock | ImageBlock | FileBlock;
/** Blocks an assistant message may hold. */
export type AssistantBlock = ContentBlock | ToolCallBlock;

/** One change of an agent-instructions row; `scope` identifies the file (one per worktree). */
export interface InstructionChange {
  /** Scope of the instruction file. */
  scope: string;
  /** Path of the file, informative. */
  path?: string;
}

/**
 * Where a user message came from. Absent means a real user turn. Known kinds: see
 * `classify.ts`; an unknown kind is classed as an instruction row (the conservative default).
 */
export interface MessageSource {
  /** Source kind. */
  kind: string;
  /** Plugin name, for `kind: 'plugin'`. */
  plugin?: string;
  /** Compaction id, for checkpoints. */
  compactionId?: string;
  /** Prune id, for prune stubs. */
  pruneId?: string;
  /** Instruction changes, for `kind: 'agent-instructions'`. */
  changes?: InstructionChange[];
}

/** The replace operation carried by an engine-written `user/message`. */
export interface SurfaceReplaceOp {
  op: 'replace';
  /** Seq of the first replaced surface node. */
  startSeq: number;
  /** Seq of the last replaced surface node. */
  endSeq: number;
}

/** A user message; checkpoints and prune stubs are engine-written user messages. */
export interface UserMessageEvent {
  type: 'user/message';
  content: ContentBlock[];
  source?: MessageSource;
  /** Engine only: splice this node over a positional surface span. */
  surfaceOp?: SurfaceReplaceOp;
  /** Engine only: the seqs the replace hides (positional slice). */
  sourceEventSeqs?: number[];
}

/** An assistant message with text and/or tool calls. */
export interface AssistantMessageEvent {
  type: 'assistant/message';
  content: AssistantBlock[];
}

/** The result of one tool call. */
export interface ToolResultEvent {
  type: 'tool/result';
  /** The call answered. */
  callId: string;
  /** Tool name; filled from the call when absent. */
  toolName?: string;
  /** The tool failed. */
  isError?: boolean;
  content: ContentBlock[];
}

/** The host system prompt; never replaced, never hidden. */
export interface SystemMessageEvent {
  type: 'system/message';
  content: ContentBlock[];
}

/** Turn bookkeeping; never a surface node. */
export interface TurnEvent {
  type: 'turn/start' | 'turn/end';
  /** Turn number. */
  turn?: number;
}

/** Start of a compaction transaction. */
export interface CompactionStartEvent {
  type: 'compaction/start';
  compactionId: string;
  /** The open turn at the time, or null. */
  turn: number | null;
}

/** End of a compaction transaction. */
export interface CompactionEndEvent {
  type: 'compaction/end';
  compactionId: string;
  turn: number | null;
}

/** Who wrote a block's summary. */
export type SummaryAuthor = 'model' | 'human' | 'engine';

/** The durable block: one per compaction. */
export interface CompactionSummaryEvent {
  type: 'compaction/summary';
  compactionId: string;
  /** The summary text, framed per §1.6 (identical to the checkpoint's text). */
  summary: string;
  topic: string;
  author: SummaryAuthor;
  /** 1 for plain compression; 2 or 3 for a distillation of earlier blocks. */
  tier: number;
  /** Blocks whose checkpoints this block hides (distillation lineage). */
  parentBlockIds: string[];
  shadowedRange: { start: number; end: number };
  /** The positional slice hidden (equals the checkpoint's `sourceEventSeqs`). */
  shadowedSeqs: number[];
  /** Claim price of the hidden nodes (see `tokens.ts`). */
  shadowedTokenCount: number;
  /** Claim estimator id. */
  estimatorId: string;
  provider: string;
  model: string;
  verifiedReadings: string[];
  /** ms since the epoch. */
  createdAt: number;
}

/** A hide that needs no summary: orphaned or broken tool pairing (written at append time). */
export interface CompactionPruneEvent {
  type: 'compaction/prune';
  pruneId: string;
  reason: 'unanswered-tool-call' | 'orphan-tool-result';
  shadowedRange: { start: number; end: number };
  shadowedSeqs: number[];
  shadowedTokenCount: number;
  estimatorId: string;
  createdAt: number;
}

/** A message-bearing event. */
export type MessageEvent = UserMessageEvent | AssistantMessageEvent | ToolResultEvent | SystemMessageEvent;

/** Any event of the log. */
export type LogEvent =
  | MessageEvent
  | TurnEvent
  | CompactionStartEvent
  | CompactionEndEvent
  | CompactionSummaryEvent
  | CompactionPruneEvent;

/** Types a harness may append. */
export const HARNESS_EVENT_TYPES = ['user/message', 'assistant/message', 'tool/result', 'system/message', 'turn/start', 'turn/end'] as const;
/** Types only the engine writes. */
export const ENGINE_EVENT_TYPES = ['compaction/start', 'compaction/summary', 'compaction/end', 'compaction/prune'] as const;
/** Source kind of a checkpoint. */
export const CHECKPOINT_SOURCE_KIND = 'compact-checkpoint';
/** Source kind of a prune stub. */
export const PRUNE_SOURCE_KIND = 'ctxmesh-prune';
/** Text of a prune stub. */
export const PRUNE_STUB_TEXT = '(removed by context management)';

/** True for the four message-bearing types. */
export function isMessageEvent(e: LogEvent): e is MessageEvent {
  return e.type === 'user/message' || e.type === 'assistant/message' || e.type === 'tool/result' || e.type === 'system/message';
}

/** True for a checkpoint (current or legacy source form). */
export function isCheckpointSource(source: MessageSource | undefined): boolean {
  if (!source) return false;
  return source.kind === CHECKPOINT_SOURCE_KIND || (source.kind === 'plugin' && source.plugin === 'compact');
}

/** Tool calls of an event (empty for anything but an assistant message). */
export function toolCallsOf(e: LogEvent): ToolCallBlock[] {
  if (e.type !== 'assistant/message') return [];
  return e.content.filter((b): b is ToolCallBlock => b.type === 'tool-call');
}

// ---------------------------------------------------------------------------------------------
// Validation of harness input (§3.6)

const ENGINE_OWNED = 'ENGINE_OWNED_EVENT';
const MALFORMED = 'MALFORMED_EVENT';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonNegInt(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0;
}

function bad(field: string, message: string, reason = MALFORMED): never {
  throw new InvalidFieldError(field, message, reason);
}

function checkOptionalString(obj: Record<string, unknown>, key: string, path: string): void {
  if (obj[key] !== undefined && typeof obj[key] !== 'string') bad(`${path}.${key}`, 'must be a string');
}

function checkOptionalNonNegInt(obj: Record<string, unknown>, key: string, path: string): void {
  if (obj[key] !== undefined && !isNonNegInt(obj[key])) bad(`${path}.${key}`, 'must be an integer >= 0');
}

function validateBlock(raw: unknown, path: string, allowToolCalls: boolean): void {
  if (!isPlainObject(raw)) bad(path, 'must be an object');
  const t = raw.type;
  switch (t) {
    case 'text':
      if (typeof raw.text !== 'string') bad(`${path}.text`, 'must be a string');
      return;
    case 'image':
      if (typeof raw.mimeType !== 'string' || raw.mimeType === '') bad(`${path}.mimeType`, 'must be a non-empty string');
      checkOptionalString(raw, 'name', path);
      checkOptionalNonNegInt(raw, 'width', path);
      checkOptionalNonNegInt(raw, 'height', path);
      checkOptionalNonNegInt(raw, 'sizeBytes', path);
      return;
    case 'file':
      if (typeof raw.name !== 'string' || raw.name === '') bad(`${path}.name`, 'must be a non-empty string');
      checkOptionalString(raw, 'mimeType', path);
      checkOptionalNonNegInt(raw, 'sizeBytes', path);
      return;
    case 'tool-call':
      if (!allowToolCalls) bad(`${path}.type`, 'tool calls are only allowed in assistant messages');
      if (typeof raw.callId !== 'string' || raw.callId === '') bad(`${path}.callId`, 'must be a non-empty string');
      if (typeof raw.name !== 'string' || raw.name === '') bad(`${path}.name`, 'must be a non-empty string');
      return;
    default:
      bad(`${path}.type`, `unknown block type ${JSON.stringify(t)}`);
  }
}

function validateContent(raw: Record<string, unknown>, path: string, allowToolCalls: boolean): void {
  const content = raw.content;
  if (!Array.isArray(content)) bad(`${path}.content`, 'must be an array of blocks');
  if (content.length === 0) bad(`${path}.content`, 'a message needs at least one block');
  content.forEach((b, j) => validateBlock(b, `${path}.content[${j}]`, allowToolCalls));
  if (allowToolCalls) {
    const seen = new Set<string>();
    content.forEach((b, j) => {
      const blk = b as { type: string; callId?: string };
      if (blk.type !== 'tool-call') return;
      if (seen.has(blk.callId!)) bad(`${path}.content[${j}].callId`, 'duplicate call id in one message');
      seen.add(blk.callId!);
    });
  }
}

function validateSource(raw: unknown, path: string): void {
  if (!isPlainObject(raw)) bad(path, 'must be an object');
  if (typeof raw.kind !== 'string' || raw.kind === '') bad(`${path}.kind`, 'must be a non-empty string');
  if (raw.kind === CHECKPOINT_SOURCE_KIND || raw.kind === PRUNE_SOURCE_KIND || (raw.kind === 'plugin' && raw.plugin === 'compact')) {
    bad(`${path}.kind`, 'engine-owned event type: checkpoints and prune stubs are written by the service', ENGINE_OWNED);
  }
  checkOptionalString(raw, 'plugin', path);
  if (raw.changes !== undefined) {
    if (!Array.isArray(raw.changes)) bad(`${path}.changes`, 'must be an array');
    raw.changes.forEach((c, j) => {
      if (!isPlainObject(c)) bad(`${path}.changes[${j}]`, 'must be an object');
      if (typeof c.scope !== 'string' || c.scope === '') bad(`${path}.changes[${j}].scope`, 'must be a non-empty string');
      checkOptionalString(c, 'path', `${path}.changes[${j}]`);
    });
  }
}

/**
 * Validate one event a harness wants to append.
 * @param raw the parsed event object
 * @param path field path used in error messages, e.g. `events[3]`
 * @returns the event, typed (the same object; extra fields are kept and stored)
 * @throws InvalidFieldError naming the field: reason `ENGINE_OWNED_EVENT` for `compaction/*`
 *   types, `surfaceOp`/`sourceEventSeqs` and checkpoint/prune sources; `MALFORMED_EVENT` otherwise
 */
export function validateHarnessEvent(raw: unknown, path: string): LogEvent {
  if (!isPlainObject(raw)) bad(path, 'must be a JSON object');
  const type = raw.type;
  if (typeof type !== 'string' || type === '') bad(`${path}.type`, 'must be a non-empty string');
  if ((ENGINE_EVENT_TYPES as readonly string[]).includes(type)) {
    bad(`${path}.type`, `engine-owned event type ${JSON.stringify(type)}: only the service writes compaction events`, ENGINE_OWNED);
  }
  if (!(HARNESS_EVENT_TYPES as readonly string[]).includes(type)) bad(`${path}.type`, `unknown event type ${JSON.stringify(type)}`);
  if ('surfaceOp' in raw) bad(`${path}.surfaceOp`, 'engine-owned event type: replace operations are written by the service', ENGINE_OWNED);
  if ('sourceEventSeqs' in raw) bad(`${path}.sourceEventSeqs`, 'engine-owned event type: replace operations are written by the service', ENGINE_OWNED);
  switch (type) {
    case 'user/message':
      validateContent(raw, path, false);
      if (raw.source !== undefined) validateSource(raw.source, `${path}.source`);
      break;
    case 'assistant/message':
      validateContent(raw, path, true);
      break;
    case 'tool/result':
      if (typeof raw.callId !== 'string' || raw.callId === '') bad(`${path}.callId`, 'a tool result needs the call id it answers');
      checkOptionalString(raw, 'toolName', path);
      if (raw.isError !== undefined && typeof raw.isError !== 'boolean') bad(`${path}.isError`, 'must be a boolean');
      validateContent(raw, path, false);
      break;
    case 'system/message':
      validateContent(raw, path, false);
      if (raw.source !== undefined) bad(`${path}.source`, 'a system message has no source');
      break;
    default:
      checkOptionalNonNegInt(raw, 'turn', path);
  }
  return raw as unknown as LogEvent;
}

/**
 * Parse one event JSON text sent by a harness (the proto carries events as JSON).
 * @throws InvalidFieldError `events[i].json` when the text is not JSON
 */
export function parseHarnessEventJson(json: string, path: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return bad(`${path}.json`, 'is not valid JSON');
  }
}
