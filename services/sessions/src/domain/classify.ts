/**
 * Row classes of surface nodes (§1.1 "Row classes") and the per-node facts the range
 * algorithm needs. The default for anything unrecognised is `instruction`: such rows are
 * barriers, so an unknown injected row is never folded into a range by accident.
 */
import type { MessageEvent, MessageSource } from './events';
import { isCheckpointSource, PRUNE_SOURCE_KIND } from './events';

/** Class of a surface row. */
export type RowClass = 'real' | 'metadata' | 'checkpoint' | 'instruction';

/** Source kinds of audited host content channels: real content, but never a real user turn. */
export const CONTENT_CHANNEL_KINDS = ['runtime-context', 'approval', 'tool-context', 'subagent-relay'] as const;
/** Source kinds of engine/plugin bookkeeping rows (may be folded; never a user turn). */
export const METADATA_KINDS = [PRUNE_SOURCE_KIND, 'ctxmesh-nudge'] as const;
/** Source kind of an agent-instructions row (scoped by `changes[].scope`). */
export const INSTRUCTIONS_KIND = 'agent-instructions';

/**
 * Class of a message event.
 * - `system/message` → `instruction` (it is also a barrier on its own account);
 * - assistant messages and tool results → `real`;
 * - user messages: no source or `kind: 'user'` → `real`; a content channel → `real`;
 *   checkpoint (current or legacy form) → `checkpoint`; prune stub or nudge echo →
 *   `metadata`; agent instructions, skill catalogs, any plugin or unknown kind → `instruction`.
 */
export function classifyEvent(e: MessageEvent): RowClass {
  if (e.type === 'system/message') return 'instruction';
  if (e.type !== 'user/message') return 'real';
  return classifySource(e.source);
}

/** Class of a user message by its source. */
export function classifySource(source: MessageSource | undefined): RowClass {
  if (!source || source.kind === 'user') return 'real';
  if (isCheckpointSource(source)) return 'checkpoint';
  if ((METADATA_KINDS as readonly string[]).includes(source.kind)) return 'metadata';
  if ((CONTENT_CHANNEL_KINDS as readonly string[]).includes(source.kind)) return 'real';
  return 'instruction';
}

/** True for a real user turn: a user message typed by the user (no injected source). */
export function isRealUserTurn(e: MessageEvent): boolean {
  return e.type === 'user/message' && (!e.source || e.source.kind === 'user');
}

/** Instruction scopes of an agent-instructions row (empty for every other row). */
export function instructionScopes(e: MessageEvent): string[] {
  if (e.type !== 'user/message' || e.source?.kind !== INSTRUCTIONS_KIND) return [];
  const scopes = (e.source.changes ?? []).map((c) => c.scope);
  return [...new Set(scopes)];
}

/**
 * True when a node may be a range edge (`anchorsRangeEdge`): a user message with non-blank
 * text, an assistant message with tool calls or non-blank text, or any tool result. Never the
 * system node.
 */
export function isAnchorable(e: MessageEvent): boolean {
  switch (e.type) {
    case 'system/message':
      return false;
    case 'tool/result':
      return true;
    case 'user/message':
      return e.content.some((b) => b.type === 'text' && b.text.trim() !== '');
    case 'assistant/message':
      return e.content.some((b) => b.type === 'tool-call' || (b.type === 'text' && b.text.trim() !== ''));
  }
}
