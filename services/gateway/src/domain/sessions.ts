/**
 * Session capture (plugin-client: the capture hooks), the checks: the session id in the path
 * and the message bodies of `POST /api/v1/sessions/{id}/messages` and `/messages/batch`.
 */
import { isSessionId, SESSION_ID_RULE } from '@ctxmesh/kernel';
import { invalidArgument, RequestValidationError, type ValidationIssue } from './errors';
import { any as anyValue, fields, isPlainObject, list, literal, str, validateModel, type ModelValues } from './schema';

/** Messages one batch may carry. */
export const MAX_BATCH_MESSAGES = 1000;

/**
 * A session id from the path: 1..256 of `[A-Za-z0-9_.@:-]`, not `.` or `..` (the kernel's
 * `isSessionId`; the plugins send `cc-<uuid>`).
 * @throws DomainError INVALID_ARGUMENT
 */
export function sessionIdOf(raw: string): string {
  if (!isSessionId(raw)) throw invalidArgument(`Invalid session id '${raw}': ${SESSION_ID_RULE}`);
  return raw;
}

const MESSAGE_FIELDS = fields({ name: 'role', type: literal('user', 'assistant'), required: true }, { name: 'content', type: str, required: true });

/** A captured message: who said it and what (non-blank). */
export type CapturedMessage = ModelValues<typeof MESSAGE_FIELDS>;

/**
 * Only the declared keys: capture hooks may send more (ids, timestamps, parts), which the
 * reference's models ignore rather than reject.
 */
function known(body: unknown, names: readonly string[]): unknown {
  if (!isPlainObject(body)) return body;
  return Object.fromEntries(Object.entries(body).filter(([k]) => names.includes(k)));
}

function message(body: unknown, loc: Array<string | number>, issues: ValidationIssue[]): CapturedMessage | null {
  const r = validateModel(known(body, ['role', 'content']), MESSAGE_FIELDS, loc);
  if (!r.ok) {
    issues.push(...r.issues);
    return null;
  }
  const { role, content } = r.model.values;
  if (content.trim() === '') {
    issues.push({ loc: [...loc, 'content'], msg: 'Value error, content must not be empty', type: 'value_error' });
    return null;
  }
  return { role, content };
}

/**
 * `{role, content}`: role `user` | `assistant`, content a non-blank string.
 * @throws RequestValidationError
 */
export function validateMessageBody(body: unknown): CapturedMessage {
  const issues: ValidationIssue[] = [];
  const m = message(body, ['body'], issues);
  if (!m) throw new RequestValidationError(issues);
  return m;
}

/**
 * `{messages: [{role, content}, …]}` with 1..{@link MAX_BATCH_MESSAGES} items; every bad item
 * is reported at `["body","messages",i,…]`.
 * @throws RequestValidationError
 */
export function validateBatchBody(body: unknown): CapturedMessage[] {
  const r = validateModel(known(body, ['messages']), [{ name: 'messages', type: list(anyValue), required: true }]);
  if (!r.ok) throw new RequestValidationError(r.issues);
  const items = r.model.values.messages;
  if (items.length === 0) {
    throw new RequestValidationError([{ loc: ['body', 'messages'], msg: 'List should have at least 1 item after validation, not 0', type: 'too_short' }]);
  }
  if (items.length > MAX_BATCH_MESSAGES) {
    throw new RequestValidationError([
      { loc: ['body', 'messages'], msg: `List should have at most ${MAX_BATCH_MESSAGES} items after validation, not ${items.length}`, type: 'too_long' },
    ]);
  }
  const issues: ValidationIssue[] = [];
  const out: CapturedMessage[] = [];
  items.forEach((item, i) => {
    const m = message(item, ['body', 'messages', i], issues);
    if (m) out.push(m);
  });
  if (issues.length > 0) throw new RequestValidationError(issues);
  return out;
}
