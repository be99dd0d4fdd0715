/**
 * Typed domain errors of the sessions service. Each carries a gRPC code name and an
 * AIP-193-style UPPER_SNAKE reason, so the later wiring maps them to `CtxError` (gRPC) and to
 * HTTP statuses mechanically, without reading messages. Semantic refusals (`surface_error`,
 * `guarded`, …) are results, never errors (overflow-recovery §3.6, last paragraph).
 */

/** gRPC code names the domain raises. */
export type SessionsErrorCode =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'ABORTED'
  | 'FAILED_PRECONDITION'
  | 'PERMISSION_DENIED'
  | 'ALREADY_EXISTS'
  | 'INTERNAL';

/** Base class of every domain error. */
export class SessionsError extends Error {
  override name = 'SessionsError';
  /** gRPC code name. */
  readonly code: SessionsErrorCode;
  /** UPPER_SNAKE reason, scoped to the `sessions` domain. */
  readonly reason: string;
  /** Facts for ErrorInfo.metadata (strings only). */
  readonly metadata: Record<string, string>;

  constructor(code: SessionsErrorCode, reason: string, message: string, metadata: Record<string, string> = {}, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = code;
    this.reason = reason;
    this.metadata = metadata;
  }
}

/**
 * Malformed caller input (INVALID_ARGUMENT / 400). `field` names the offending field with its
 * path, e.g. `events[2].callId` or `ranges[0].summary`. (Not the kernel's `InvalidArgumentError`,
 * a plain rejection with no field: this one carries the field, reason and metadata of ErrorInfo.)
 */
export class InvalidFieldError extends SessionsError {
  override name = 'InvalidFieldError';
  /** Path of the offending field. */
  readonly field: string;

  constructor(field: string, message: string, reason = 'INVALID_FIELD', metadata: Record<string, string> = {}) {
    super('INVALID_ARGUMENT', reason, `${field}: ${message}`, { field, ...metadata });
    this.field = field;
  }
}

/** An unknown session, block or workspace (NOT_FOUND / 404). */
export class NotFoundError extends SessionsError {
  override name = 'NotFoundError';

  constructor(reason: 'SESSION_NOT_FOUND' | 'BLOCK_NOT_FOUND' | 'WORKSPACE_NOT_FOUND', message: string, metadata: Record<string, string> = {}) {
    super('NOT_FOUND', reason, message, metadata);
  }
}

/** A resource that belongs to another account, e.g. a foreign workspace (PERMISSION_DENIED / 403). */
export class PermissionDeniedError extends SessionsError {
  override name = 'PermissionDeniedError';

  constructor(reason: 'WORKSPACE_FOREIGN', message: string, metadata: Record<string, string> = {}) {
    super('PERMISSION_DENIED', reason, message, metadata);
  }
}

/** A name that another owner already holds, e.g. a workspace slug (ALREADY_EXISTS / 409). */
export class AlreadyExistsError extends SessionsError {
  override name = 'AlreadyExistsError';

  constructor(reason: 'WORKSPACE_TAKEN', message: string, metadata: Record<string, string> = {}) {
    super('ALREADY_EXISTS', reason, message, metadata);
  }
}

/**
 * A stale explicit expectation or an exhausted conflict retry (ABORTED / 409). Carries the
 * current head and generation so the caller can re-read and try again.
 */
export class ConflictError extends SessionsError {
  override name = 'ConflictError';
  /** Current head (-1 for an empty log). */
  readonly head: number;
  /** Current generation. */
  readonly generation: number;

  constructor(reason: 'STALE_EXPECTED_HEAD' | 'STALE_EXPECTED_GENERATION' | 'CONFLICT_RETRY_EXHAUSTED', message: string, head: number, generation: number) {
    super('ABORTED', reason, message, { head: String(head), generation: String(generation) });
    this.head = head;
    this.generation = generation;
  }
}

/**
 * A deployment configuration value is invalid; startup must fail: the runtime's `ConfigError`
 * (one problem per line), the one every service's configuration throws and `runMain` prints.
 */
export { ConfigError } from '@ctxmesh/runtime';

/** The stored log cannot be read as events (a corrupt store; INTERNAL). */
export class CorruptLogError extends SessionsError {
  override name = 'CorruptLogError';

  constructor(seq: number, message: string, cause?: unknown) {
    super('INTERNAL', 'CORRUPT_LOG', `event ${seq}: ${message}`, { seq: String(seq) }, cause);
  }
}
