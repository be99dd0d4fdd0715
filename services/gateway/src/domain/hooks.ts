/**
 * Harness hooks (`POST /hooks/claude-code`, `POST /hooks/codex`), the checks: the event body a
 * Claude Code `http` hook posts (or `ctxmesh hook` forwards from a Codex command hook's stdin)
 * into one typed {@link HookEvent}, the session id the plugins use for it, and the rule that
 * keeps a transcript read inside the operator's root. Pure: no I/O.
 *
 * Shapes (Claude Code hooks reference; Codex hooks, which are a subset with `turn_id`/`model`
 * extras): every event has `session_id`, `hook_event_name`, `cwd`, `transcript_path`;
 * `UserPromptSubmit` `prompt`; `SessionStart` `source` (`startup|resume|clear|compact`);
 * `PreCompact` `trigger` (`manual|auto`) and `custom_instructions`; `PostCompact` `trigger` and
 * `compact_summary`; `Stop` `last_assistant_message` (newer builds) and `stop_hook_active`;
 * `PostToolUse` `tool_name`, `tool_input`, `tool_response`, `tool_use_id`; `SessionEnd`
 * `reason`. Unknown keys are ignored (the harnesses add keys between releases); an event this
 * route does not handle is `kind: "ignored"` (answered `{}`), never a 400.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { isSessionId } from '@ctxmesh/kernel';
import { RequestValidationError, type ValidationIssue } from './errors';
import { isPlainObject } from './schema';

/** The harnesses the route speaks for. */
export type Harness = 'claude-code' | 'codex';

/** Longest prompt sent as a query (the context route's own `query` limit). */
export const HOOK_MAX_QUERY_CHARS = 32_768;
/** Longest text captured from one event field (a tool's output, a summary, an assistant message). */
export const HOOK_MAX_CAPTURE_CHARS = 16_384;

/** Fields common to every hook event. */
interface HookBase {
  /** The harness's session id (raw, as sent). */
  harnessSessionId: string;
  /** The session id ctxmesh uses: `cc-<id>` (Claude Code) or `cx-<id>` (Codex), as the plugins do. */
  sessionId: string;
  /** `hook_event_name` as sent. */
  eventName: string;
  /** `transcript_path` as sent (read only under an operator's root; see {@link transcriptPathUnder}). */
  transcriptPath: string | null;
  /**
   * The agent captures are attributed to: the event's `agent_id` (a subagent) or
   * {@link HOOK_MAIN_AGENT}. An assistant message captured for it resets its overflow budget.
   */
  agentId: string;
}

/** The agent of a hook event without `agent_id`: the harness's main agent. */
export const HOOK_MAIN_AGENT = 'main';

/** One validated hook event. */
export type HookEvent =
  | (HookBase & { kind: 'prompt'; prompt: string })
  | (HookBase & { kind: 'session-start'; source: string })
  | (HookBase & { kind: 'pre-compact'; trigger: string; customInstructions: string })
  | (HookBase & { kind: 'post-compact'; trigger: string; compactSummary: string })
  | (HookBase & { kind: 'stop'; lastAssistantMessage: string | null })
  | (HookBase & { kind: 'tool-use'; toolName: string; toolUseId: string; toolInput: unknown; toolResponse: string })
  | (HookBase & { kind: 'ignored' });

/**
 * The session id of a harness session: the prefix (`cc-`, `cx-`) and the id with every
 * character outside `[A-Za-z0-9._-]` replaced by `_` (`codex:123` → `cx-codex_123`, the Codex
 * plugin's rule; Claude Code's ids are UUIDs and pass unchanged), at most 256 characters.
 */
export function hookSessionId(harness: Harness, raw: string): string {
  return `${harness === 'codex' ? 'cx-' : 'cc-'}${raw.replace(/[^A-Za-z0-9._-]/g, '_')}`.slice(0, 256);
}

function issue(field: string, msg: string, type = 'value_error'): ValidationIssue {
  return { loc: ['body', field], msg, type };
}

/** `value` cut to `max` characters with a note of what was cut. */
export function capText(value: string, max = HOOK_MAX_CAPTURE_CHARS): string {
  return value.length <= max ? value : `${value.slice(0, max)}\n[… ${value.length - max} more characters not captured]`;
}

/** A tool's response as text: a string as it is, anything else as its JSON. */
function responseText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  // Claude Code's Read answers {type:"text", file:{filePath, content}}: keep the content readable.
  if (isPlainObject(v) && isPlainObject(v.file) && typeof v.file.content === 'string') {
    return typeof v.file.filePath === 'string' ? `${v.file.filePath}\n${v.file.content}` : v.file.content;
  }
  return JSON.stringify(v);
}

/**
 * Validate a hook event body.
 * @throws RequestValidationError 400 when the body is not an object, `hook_event_name` or
 *   `session_id` is missing or not a string, the session id is blank or makes no valid
 *   ctxmesh session id, or a handled event lacks the field it is about (`prompt` of
 *   `UserPromptSubmit`, `tool_name` of `PostToolUse`), each naming the field
 */
export function validateHookEvent(harness: Harness, body: unknown): HookEvent {
  if (!isPlainObject(body)) throw new RequestValidationError([{ loc: ['body'], msg: 'a hook event must be a JSON object', type: 'model_type' }]);
  const issues: ValidationIssue[] = [];
  const stringField = (name: string, required: boolean): string | null => {
    const v = body[name];
    if (v === undefined || v === null) {
      if (required) issues.push(issue(name, 'Field required', 'missing'));
      return null;
    }
    if (typeof v !== 'string') {
      issues.push(issue(name, 'Input should be a valid string', 'string_type'));
      return null;
    }
    return v;
  };
  const eventName = stringField('hook_event_name', true);
  const rawSession = stringField('session_id', true);
  const transcriptPath = stringField('transcript_path', false);
  const agentId = stringField('agent_id', false);
  let sessionId = '';
  if (rawSession !== null) {
    sessionId = hookSessionId(harness, rawSession.trim());
    if (rawSession.trim() === '' || !isSessionId(sessionId)) issues.push(issue('session_id', 'must be a non-blank session id'));
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
  const agent = agentId !== null && /^[A-Za-z0-9._:-]{1,128}$/.test(agentId) ? agentId : HOOK_MAIN_AGENT;
  const base: HookBase = { harnessSessionId: rawSession!, sessionId, eventName: eventName!, transcriptPath, agentId: agent };
  const done = <T extends HookEvent>(e: T): T => {
    if (issues.length > 0) throw new RequestValidationError(issues);
    return e;
  };
  switch (eventName) {
    case 'UserPromptSubmit':
      return done({ ...base, kind: 'prompt', prompt: stringField('prompt', true) ?? '' });
    case 'SessionStart':
      return done({ ...base, kind: 'session-start', source: stringField('source', false) ?? 'startup' });
    case 'PreCompact':
      return done({ ...base, kind: 'pre-compact', trigger: stringField('trigger', false) ?? '', customInstructions: stringField('custom_instructions', false) ?? '' });
    case 'PostCompact':
      return done({ ...base, kind: 'post-compact', trigger: stringField('trigger', false) ?? '', compactSummary: stringField('compact_summary', false) ?? '' });
    case 'Stop':
      return done({ ...base, kind: 'stop', lastAssistantMessage: stringField('last_assistant_message', false) });
    case 'PostToolUse': {
      const toolName = stringField('tool_name', true) ?? '';
      const toolUseId = stringField('tool_use_id', false) ?? '';
      return done({ ...base, kind: 'tool-use', toolName, toolUseId, toolInput: body.tool_input ?? {}, toolResponse: responseText(body.tool_response) });
    }
    default:
      return { ...base, kind: 'ignored' };
  }
}

/**
 * Whether `resolvedPath` (a real path, symlinks resolved) lies inside `resolvedRoot` (also
 * real). Both must be absolute; `..` segments cannot escape because the paths are already
 * resolved, and a sibling that shares a prefix (`/root-other`) is outside.
 */
export function transcriptPathUnder(resolvedRoot: string, resolvedPath: string): boolean {
  if (!isAbsolute(resolvedRoot) || !isAbsolute(resolvedPath)) return false;
  const rel = relative(resolvedRoot, resolvedPath);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/**
 * The text of the last assistant message in the tail of a Claude Code transcript (JSON lines
 * `{"type":"assistant","message":{"content":[{"type":"text","text"}…]}}`); lines that do not
 * parse (the first line of a tail read is usually cut) are skipped.
 * @returns the text, or null when the tail holds no assistant text
 */
export function lastAssistantText(jsonl: string): string | null {
  const lines = jsonl.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!.trim();
    if (!line.startsWith('{')) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isPlainObject(row) || row.type !== 'assistant' || !isPlainObject(row.message)) continue;
    const content = row.message.content;
    const text = typeof content === 'string'
      ? content
      : Array.isArray(content)
        ? content.filter((b): b is { type: string; text: string } => isPlainObject(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('\n')
        : '';
    if (text.trim() !== '') return text;
  }
  return null;
}
