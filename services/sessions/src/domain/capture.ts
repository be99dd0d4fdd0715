/**
 * The plugins' capture hooks and the search context query expansion reads
 * (context-contract §7.1, §8.1): captured `{role, content}` pairs become ordinary
 * `user/message` / `assistant/message` events of the same log (AppendMessages), and the search
 * context is the latest real conversation messages plus the newest written summary as the
 * "archive overview" (GetSearchContext).
 */
import type { SessionKey } from '@ctxmesh/stores';
import { appendEvents } from './append';
import { isRealUserTurn } from './classify';
import type { LogDeps } from './deps';
import { InvalidFieldError } from './errors';
import type { AssistantMessageEvent, LogEvent, UserMessageEvent } from './events';
import type { SearchContextRequestInput } from './inputs';
import { checkKey, checkSearchContextRequest } from './inputs';
import type { SessionView } from './projection';
import { contentText } from './text';
import { CLAIM_ESTIMATOR_ID } from './tokens';

/** Roles a capture hook may send. */
export const CAPTURE_ROLES = ['user', 'assistant'] as const;
/** Most messages one capture call may carry. */
export const MAX_CAPTURE_MESSAGES = 1000;
/** Messages in a search context when the caller asks for none or ≤ 0 (context-contract §8.1: up to 20). */
export const DEFAULT_SEARCH_CONTEXT_MESSAGES = 20;
/** Most messages one search context returns. */
export const MAX_SEARCH_CONTEXT_MESSAGES = 200;

/** A captured message. */
export interface CapturedMessage {
  /** `user` or `assistant`. */
  role: 'user' | 'assistant';
  /** Text. */
  content: string;
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

/**
 * AppendMessages: `{role, content}` pairs become `user/message` / `assistant/message` events,
 * appended like AppendEvents (creating the session on first capture; concurrent captures race
 * for the tail and are retried).
 * @throws InvalidFieldError naming `messages[i].role` / `messages[i].content`
 */
export async function appendMessages(deps: LogDeps, key: SessionKey, input: { messages: unknown }): Promise<AppendMessagesResult> {
  checkKey(key);
  const events = capturedEvents(input.messages);
  const res = await appendEvents(deps, key, { events });
  const view = await deps.log.requireView(key);
  return { seqs: res.seqs, messageCount: capturedMessageCount(view), head: res.head, generation: res.generation };
}

/**
 * GetSearchContext: the latest real messages and the archive overview query expansion reads.
 * An unknown session is not an error: `exists` is false, unless `create` asks to materialise
 * it (an empty log, get-or-create like the reference).
 * @throws InvalidFieldError `limit` when it is not a finite number
 */
export async function getSearchContext(deps: LogDeps, key: SessionKey, input: SearchContextRequestInput = {}): Promise<SearchContextResult> {
  checkKey(key);
  checkSearchContextRequest(input);
  let loaded = await deps.log.load(key);
  let created = false;
  if (!loaded) {
    if (!input.create) return { exists: false, created: false, messages: [], archiveOverview: '' };
    const epoch = deps.newId();
    await deps.store.commit(key, {
      expect: { head: -1, generation: 0 },
      events: [],
      surfaceOps: [],
      generation: 0,
      create: { estimatorId: CLAIM_ESTIMATOR_ID, createdAt: deps.clock(), epoch },
    });
    loaded = await deps.log.load(key);
    if (!loaded) throw new Error('session missing right after its creation');
    // A racing creator's commit also lands (as a no-op), and one that appended first makes
    // ours stale: only the epoch we minted says that this call created the session.
    created = loaded.entry.epoch === epoch;
  }
  const { view } = loaded;
  return { exists: true, created, messages: recentMessages(view, input.limit ?? 0), archiveOverview: archiveOverview(view) };
}

/**
 * Validate captured messages and turn them into log events (one text block each).
 * @throws InvalidFieldError naming `messages`, `messages[i].role` or `messages[i].content`
 */
export function capturedEvents(raw: unknown): LogEvent[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new InvalidFieldError('messages', 'at least one message is required');
  if (raw.length > MAX_CAPTURE_MESSAGES) throw new InvalidFieldError('messages', `at most ${MAX_CAPTURE_MESSAGES} messages per call`);
  return raw.map((m: unknown, i): LogEvent => {
    const { role, content } = (typeof m === 'object' && m !== null ? m : {}) as Record<string, unknown>;
    if (role !== 'user' && role !== 'assistant') throw new InvalidFieldError(`messages[${i}].role`, "must be 'user' or 'assistant'");
    if (typeof content !== 'string' || content.trim() === '') throw new InvalidFieldError(`messages[${i}].content`, 'must be a non-blank string');
    const blocks = [{ type: 'text' as const, text: content }];
    return role === 'user' ? ({ type: 'user/message', content: blocks } satisfies UserMessageEvent) : ({ type: 'assistant/message', content: blocks } satisfies AssistantMessageEvent);
  });
}

/** The conversation message at `seq` as a captured message, or null for anything else. */
function conversationMessage(e: LogEvent): CapturedMessage | null {
  // Real user turns only: injected rows (instructions, runtime snapshots, checkpoints, prune
  // stubs) are not what the user said, and would steer the expansion.
  if (e.type === 'user/message' && isRealUserTurn(e)) {
    const text = contentText(e.content);
    return text.trim() === '' ? null : { role: 'user', content: text };
  }
  if (e.type === 'assistant/message') {
    // Tool calls carry no prose for the planner; an assistant turn with only calls is skipped.
    const text = contentText(e.content);
    return text.trim() === '' ? null : { role: 'assistant', content: text };
  }
  return null;
}

/**
 * Messages of the session as a capture client counts them: every user and assistant message
 * event the harness appended (engine-written checkpoints and prune stubs excluded).
 */
export function capturedMessageCount(view: SessionView): number {
  let n = 0;
  for (let s = 0; s <= view.head; s++) {
    const e = view.events[s]!;
    if (e.type === 'assistant/message') n++;
    else if (e.type === 'user/message' && view.node(s).cls !== 'checkpoint' && view.node(s).cls !== 'metadata') n++;
  }
  return n;
}

/**
 * The latest `limit` real user/assistant messages, oldest first. Hidden originals count too:
 * the log, not the surface, is the conversation (a compaction must not blind the expansion).
 * @param limit ≤ 0 means {@link DEFAULT_SEARCH_CONTEXT_MESSAGES}; capped at {@link MAX_SEARCH_CONTEXT_MESSAGES}
 */
export function recentMessages(view: SessionView, limit: number): CapturedMessage[] {
  const n = limit > 0 ? Math.min(Math.trunc(limit), MAX_SEARCH_CONTEXT_MESSAGES) : DEFAULT_SEARCH_CONTEXT_MESSAGES;
  const out: CapturedMessage[] = [];
  for (let s = view.head; s >= 0 && out.length < n; s--) {
    const m = conversationMessage(view.events[s]!);
    if (m) out.push(m);
  }
  return out.reverse();
}

/**
 * The "latest archive overview" of context-contract §8.1: the stored summary of the newest active block that a
 * model or human wrote. Engine markers are skipped: they say only that something was hidden.
 * @returns '' when there is none
 */
export function archiveOverview(view: SessionView): string {
  for (let i = view.blocks.length - 1; i >= 0; i--) {
    const b = view.blocks[i]!;
    if (b.active && b.author !== 'engine') return b.summary;
  }
  return '';
}
