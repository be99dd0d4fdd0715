/**
 * Content routes, pure parts: validation of `POST /api/v1/content/write` bodies and of the
 * `uri` query parameter, the `indexer.WriteOp` a write or delete publishes, and how an
 * indexer done notice becomes an answer.
 */
import { assertValidInterval, assertWritableUri, WORKSPACE_SLUG } from '@ctxmesh/kernel';
import { indexer } from '@ctxmesh/proto';
import type { DeadLetter, DoneNotice, WriteReceipt } from '@ctxmesh/stores';
import {
  assertTargetsAccessible,
  bool,
  DomainError,
  headerValue,
  invalidArgument,
  kernelRule,
  list,
  literal,
  normalizeTags,
  nullable,
  parseTimeBound,
  RequestValidationError,
  resolveRequestUri,
  str,
  validateModel,
  fields,
  type ApiErrorCode,
  type HeaderBag,
  type Identity,
} from '../domain';
import { protoIdentity, type Caller } from './search';

/** Subject every write and delete is published on (the indexer consumes it). */
export const INGEST_WRITE_SUBJECT = 'ctxmesh.ingest.write';

/** Write modes of the REST body. */
export type WriteModeName = 'replace' | 'append' | 'create';

/** `POST /api/v1/content/write` fields in declaration order (unknown fields are a 400). */
export const WRITE_FIELDS = fields(
  { name: 'uri', type: str, required: true },
  { name: 'content', type: str, required: true },
  { name: 'mode', type: literal('replace', 'append', 'create') },
  { name: 'wait', type: bool },
  { name: 'valid_from', type: nullable(str) },
  { name: 'valid_to', type: nullable(str) },
  { name: 'tags', type: nullable(list(str)) },
  { name: 'workspace', type: nullable(str) },
);

/** A validated write. */
export interface WriteParams {
  /** Node URI, validated and `~`-expanded. */
  uri: string;
  content: string;
  /** @default "replace" */
  mode: WriteModeName;
  /** Answer only once the new version is searchable. @default false */
  wait: boolean;
  /** Valid-time start, ms since the epoch; null = open. */
  validFromMs: number | null;
  /** Valid-time end (exclusive), ms since the epoch; null = open. */
  validToMs: number | null;
  /** Normalised `k=v` tags. */
  tags: string[];
  /** Workspace from the body, or null (then the `X-Workspace` header applies). */
  workspace: string | null;
}

/**
 * The workspace of a request: the body's `workspace` (writes), else the `X-Workspace` header,
 * else "" (the caller's default workspace, resolved downstream).
 * @throws DomainError INVALID_ARGUMENT for a value that is not a slug (`[A-Za-z0-9][A-Za-z0-9._-]{0,63}`)
 */
export function workspaceOf(headers: HeaderBag, fromBody: string | null = null): string {
  const raw = fromBody !== null && fromBody.trim() !== '' ? fromBody.trim() : headerValue(headers, 'x-workspace');
  if (raw === null) return '';
  if (!WORKSPACE_SLUG.test(raw)) throw invalidArgument(`Invalid workspace '${raw}': use letters, digits, '.', '_' and '-' (at most 64 characters)`);
  return raw;
}

/**
 * A URI a write or delete may address: valid, `~`-expanded, writable by the kernel's rule
 * (`assertWritableUri`: below a scope root, never `viking://`, `viking://resources` or a user
 * root itself, and no `#`) and, for an ordinary user, not in another user's space.
 * @throws DomainError INVALID_URI (naming the URI as the caller wrote it) or PERMISSION_DENIED
 */
export function writableUri(raw: string, identity: Pick<Identity, 'userId' | 'role'>): string {
  const uri = resolveRequestUri(raw, identity.userId);
  kernelRule(() => assertWritableUri(uri, raw.trim()));
  assertTargetsAccessible([uri], identity);
  // Directory sidecars (`D/.abstract.md`, `D/.overview.md`) are written like any file: they
  // are how a directory gets its abstract and overview (context-contract §2.1, §4.4).
  return uri;
}

const RELATIVE = /^\d+[smhdw]$/;

/**
 * `valid_from` / `valid_to`: an ISO-8601 date (start of that day, UTC) or date-time. The one
 * place the mesh reads validity text: the indexer gets the ms.
 * @returns ms since the epoch, or null when absent/blank (open)
 * @throws DomainError INVALID_ARGUMENT
 */
export function parseValidTime(value: string | null | undefined, field: 'valid_from' | 'valid_to'): number | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  const bad = () => invalidArgument(`Invalid ${field} value '${value}': use an ISO-8601 date (YYYY-MM-DD) or timestamp`);
  if (RELATIVE.test(value.trim())) throw bad();
  try {
    // 'since' = start of a date-only day: validity intervals are half-open [from, to).
    return parseTimeBound(value, 'since', 0);
  } catch {
    throw bad();
  }
}

/**
 * Validate a write body.
 * @throws RequestValidationError (400, §1.7 variant 1) or DomainError (INVALID_URI,
 *   PERMISSION_DENIED, INVALID_ARGUMENT for times and tags)
 */
export function validateWriteBody(body: unknown, identity: Pick<Identity, 'userId' | 'role'>): WriteParams {
  const r = validateModel(body, WRITE_FIELDS);
  if (!r.ok) throw new RequestValidationError(r.issues);
  const v = r.model.values;
  const uri = writableUri(v.uri, identity);
  const validFromMs = parseValidTime(v.valid_from, 'valid_from');
  const validToMs = parseValidTime(v.valid_to, 'valid_to');
  // Half-open [from, to): equal bounds are an empty interval, refused like reversed ones.
  kernelRule(() => assertValidInterval(validFromMs, validToMs));
  return {
    uri,
    content: v.content,
    mode: v.mode ?? 'replace',
    wait: v.wait ?? false,
    validFromMs,
    validToMs,
    tags: normalizeTags(v.tags),
    workspace: v.workspace ?? null,
  };
}

/**
 * A required query parameter (FastAPI: missing → 400 `["query", name]` "Field required";
 * repeated → the last value).
 * @throws RequestValidationError
 */
export function requiredQuery(query: unknown, name: string): string {
  const q = (query ?? {}) as Record<string, string | string[] | undefined>;
  const v = q[name];
  const value = Array.isArray(v) ? v[v.length - 1] : v;
  if (value === undefined) throw new RequestValidationError([{ loc: ['query', name], msg: 'Field required', type: 'missing' }]);
  return value;
}

/**
 * An optional boolean query parameter, lax like pydantic (`true/1/yes/on`, `false/0/no/off`).
 * @throws RequestValidationError for anything else
 */
export function boolQuery(query: unknown, name: string, fallback: boolean): boolean {
  const q = (query ?? {}) as Record<string, string | string[] | undefined>;
  const v = q[name];
  const value = Array.isArray(v) ? v[v.length - 1] : v;
  if (value === undefined) return fallback;
  const r = bool.check(value, ['query', name], false);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.value;
}

/**
 * An optional integer query parameter within [min, max].
 * @throws RequestValidationError naming the parameter and the range
 */
export function intQuery(query: unknown, name: string, fallback: number, min: number, max: number): number {
  const q = (query ?? {}) as Record<string, string | string[] | undefined>;
  const v = q[name];
  const value = Array.isArray(v) ? v[v.length - 1] : v;
  if (value === undefined) return fallback;
  const n = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(n >= min && n <= max)) {
    throw new RequestValidationError([{ loc: ['query', name], msg: `Input should be an integer from ${min} to ${max}`, type: 'int_range' }]);
  }
  return n;
}

/** Who may read a write receipt: its account, and in it the writer or an admin/root. */
export function mayReadReceipt(r: Pick<WriteReceipt, 'account' | 'user'>, caller: Pick<Identity, 'accountId' | 'userId' | 'role'>): boolean {
  return r.account === caller.accountId && (caller.role !== 'user' || r.user === caller.userId);
}

/** `result` of `GET /api/v1/content/status`. */
export function receiptJson(r: WriteReceipt): Record<string, unknown> {
  return {
    write_id: r.id,
    uri: r.uri,
    status: r.state,
    ...(r.state === 'applied' ? { content_hash: r.contentHash ?? '' } : {}),
    ...(r.state === 'failed' ? { reason: r.reason ?? '', message: r.message ?? '' } : {}),
    updated_at: new Date(r.atMs).toISOString(),
  };
}

/**
 * Dead letters as an admin sees them: only their own account's (root: every account's), each
 * with the write it carried (id, URI, mode, account) decoded when it is a WriteOp.
 */
export function deadLettersJson(letters: readonly DeadLetter[], caller: Pick<Identity, 'accountId' | 'role'>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const l of letters) {
    let op: indexer.WriteOp | null = null;
    try {
      op = indexer.WriteOp.decode(l.message.data);
    } catch {
      op = null; // poison bytes: no account to show it under, so only root sees it
    }
    const account = op?.identity?.accountId ?? '';
    if (caller.role !== 'root' && account !== caller.accountId) continue;
    out.push({
      seq: l.seq,
      write_id: l.message.id,
      subject: l.message.subject,
      uri: op?.uri ?? l.message.key,
      account,
      user: op?.identity?.userId ?? '',
      mode: op ? indexer.writeModeToJSON(op.mode) : '',
      attempts: l.attempts,
      error: l.error,
    });
  }
  return out;
}

const MODE: Readonly<Record<WriteModeName, indexer.WriteMode>> = {
  replace: indexer.WriteMode.WRITE_MODE_REPLACE,
  append: indexer.WriteMode.WRITE_MODE_APPEND,
  create: indexer.WriteMode.WRITE_MODE_CREATE,
};

/** The `WriteOp` a write publishes. */
export function writeOp(p: WriteParams, caller: Caller, writeId: string, nowMs: number): indexer.WriteOp {
  return {
    writeId,
    identity: protoIdentity(caller),
    uri: p.uri,
    content: p.content,
    mode: MODE[p.mode],
    validFromMs: p.validFromMs ?? undefined,
    validToMs: p.validToMs ?? undefined,
    tags: [...p.tags],
    publishedAtMs: nowMs,
    subject: '',
  };
}

/** The `WriteOp` a delete publishes (mode DELETE; a directory loses its subtree). */
export function deleteOp(uri: string, caller: Caller, writeId: string, nowMs: number): indexer.WriteOp {
  return {
    writeId,
    identity: protoIdentity(caller),
    uri,
    content: '',
    mode: indexer.WriteMode.WRITE_MODE_DELETE,
    validFromMs: undefined,
    validToMs: undefined,
    tags: [],
    publishedAtMs: nowMs,
    subject: '',
  };
}

/** `result` of a write or delete. */
export interface WriteResultJson {
  uri: string;
  write_id: string;
  /** `queued` (not awaited) or `applied`. */
  status: 'queued' | 'applied';
  /** Only when applied. */
  content_hash?: string;
}

/**
 * The reasons an indexer may fail a write with, and the code each is answered with (the status
 * follows the code, and a too-large document's 413 its reason: `httpStatusOf`). Any other
 * reason is the indexer's fault: INTERNAL.
 */
const FAILURE_CODES: Readonly<Record<string, ApiErrorCode>> = {
  ALREADY_EXISTS: 'ALREADY_EXISTS',
  INVALID_URI: 'INVALID_URI',
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
  INVALID_CONTENT: 'INVALID_ARGUMENT',
  NOT_FOUND: 'NOT_FOUND',
  PERMISSION_DENIED: 'PERMISSION_DENIED',
  FAILED_PRECONDITION: 'FAILED_PRECONDITION',
  RESOURCE_EXHAUSTED: 'RESOURCE_EXHAUSTED',
  TOO_LARGE: 'RESOURCE_EXHAUSTED',
  UNAVAILABLE: 'UNAVAILABLE',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
};

/**
 * A done notice as the write's answer: applied → the result; failed → a {@link DomainError}
 * whose code follows the notice's reason (ALREADY_EXISTS → 409, INVALID_URI → 400,
 * NOT_FOUND → 404, TOO_LARGE → 413, …; an unknown reason → 500 INTERNAL with the indexer's message).
 */
export function writeOutcome(notice: DoneNotice, uri: string, requestId: string): WriteResultJson | DomainError {
  if (notice.status === 'applied') return { uri, write_id: notice.id, status: 'applied', content_hash: notice.contentHash ?? '' };
  const reason = notice.reason ?? 'INTERNAL';
  const code = Object.hasOwn(FAILURE_CODES, reason) ? FAILURE_CODES[reason]! : 'INTERNAL';
  const message = notice.message || (reason === 'ALREADY_EXISTS' ? `URI already exists: ${uri}` : `write ${notice.id} failed (${reason})`);
  return new DomainError(code, message, { reason, domain: 'indexer', uri, write_id: notice.id, request_id: requestId });
}
