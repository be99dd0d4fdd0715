/**
 * Writes and deletes on the wire: the `indexer.WriteOp` a validated write or delete publishes,
 * and the JSON of what comes back (a done notice, a receipt, the dead letters).
 */
import { indexer } from '@ctxmesh/proto';
import type { DeadLetter, DoneNotice, WriteReceipt } from '@ctxmesh/stores';
import { DomainError, mayReadDeadLetter, type ApiErrorCode, type Caller, type Identity, type WriteModeName, type WriteParams } from '../domain';
import { protoIdentity } from './identity';

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
    if (!mayReadDeadLetter(account, caller)) continue;
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
