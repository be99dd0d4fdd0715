/**
 * The identifiers of a session log (overflow-recovery §3.3), in one place for the sessions
 * service, which owns them, and the gateway, which checks them at the HTTP edge: session and
 * agent ids, workspace slugs, and the message ids (`"295"`, `"295#callId"`) that
 * ProjectSurface hands out and Compress takes back as range edges.
 */

/** Session and agent ids: 1 to 256 of `[A-Za-z0-9_.@:-]` (the plugins send `cc-<uuid>`). */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_.@:-]{1,256}$/;

/** {@link SESSION_ID_PATTERN} in words, for error messages. */
export const SESSION_ID_RULE = "use 1 to 256 letters, digits, '_', '.', '@', ':' or '-'";

/**
 * A valid session id: {@link SESSION_ID_PATTERN}, and not `.` or `..`, because the id becomes
 * a URI segment (`viking://user/{u}/sessions/{id}`).
 */
export function isSessionId(raw: string): boolean {
  return SESSION_ID_PATTERN.test(raw) && raw !== '.' && raw !== '..';
}

/** A valid agent id: {@link SESSION_ID_PATTERN} (an agent id never becomes a URI segment). */
export function isAgentId(raw: string): boolean {
  return SESSION_ID_PATTERN.test(raw);
}

/**
 * Workspace slugs: 1 to 64 letters, digits, `.`, `_` and `-`, starting with a letter or digit
 * (the sessions service's workspaces; the gateway's `X-Workspace` header and `workspace` fields).
 */
export const WORKSPACE_SLUG = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The text form of a seq: decimal digits (leading blanks allowed), then optionally `#` and a call id. */
const SEQ_TEXT = /^\s*\d+(?:#.*)?$/;

/**
 * The id of a projected message: its seq, or `seq#callId` for each tool call of an assistant
 * message (one message per call). {@link parseSeqText} reads it back.
 * @param seq the message's seq (an integer ≥ 0)
 * @param callId the call's id, for one call of an assistant message
 */
export function messageId(seq: number, callId?: string): string {
  return callId === undefined ? String(seq) : `${seq}#${callId}`;
}

/**
 * The seq of a message id in text form: `"295"` → 295, `"295#callId"` → 295 (the suffix names
 * a split tool call and is dropped).
 * @returns the seq (a safe integer ≥ 0), or undefined when the text is not of that form
 */
export function parseSeqText(text: string): number | undefined {
  if (!SEQ_TEXT.test(text)) return undefined;
  const n = Number(text.split('#')[0]);
  return Number.isSafeInteger(n) ? n : undefined;
}
