/**
 * The gateway's error catalogue: every error it answers with is a {@link RequestValidationError}
 * (context-contract §1.7 variant 1) or a {@link DomainError} (variant 2, also for failures of
 * the mesh: the bus, the indexer, the request budget), and {@link httpStatusOf} is the one
 * place an error code becomes an HTTP status. Plain data: `mapping/envelope.ts` writes their
 * envelopes and `http/errors.ts` answers them.
 */
import { InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';
import { Code, httpStatusOf as grpcHttpStatusOf } from '@ctxmesh/rpc';

/** A gRPC code's name (`DEADLINE_EXCEEDED`, …): the codes the mesh answers with (STYLE B6). */
export type GrpcCodeName = keyof typeof Code;

/**
 * `error.code`: a gRPC code name, or `INVALID_URI` (the contract's refinement of
 * INVALID_ARGUMENT for a URI, with `details: {uri, reason}`).
 */
export type ApiErrorCode = GrpcCodeName | 'INVALID_URI';

/**
 * Statuses HTTP has and gRPC has no code for, by the `details.reason` that asks for them: a
 * payload over a size limit (413, code RESOURCE_EXHAUSTED, whose own status is 429) and a body
 * the gateway cannot read (415, code INVALID_ARGUMENT).
 */
const STATUS_BY_REASON: Readonly<Record<string, number>> = Object.freeze({
  BODY_TOO_LARGE: 413,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
});

/**
 * HTTP status of an error: connect's code table (`@ctxmesh/rpc`, FAILED_PRECONDITION 412 per
 * the contract), `INVALID_URI` as INVALID_ARGUMENT, the reasons of {@link STATUS_BY_REASON}
 * first; an unknown code → 500.
 * @param code `error.code`
 * @param reason `error.details.reason`, when the error has one
 */
export function httpStatusOf(code: string, reason?: unknown): number {
  if (typeof reason === 'string' && Object.hasOwn(STATUS_BY_REASON, reason)) return STATUS_BY_REASON[reason]!;
  const name = code === 'INVALID_URI' ? 'INVALID_ARGUMENT' : code;
  const grpc: unknown = Object.hasOwn(Code, name) ? Code[name as GrpcCodeName] : undefined;
  return typeof grpc === 'number' ? grpcHttpStatusOf(grpc) : 500;
}

/** True for a status whose cause must be logged as a server fault: a 5xx other than 503 and 504. */
export function isFault(status: number): boolean {
  return status >= 500 && status !== 503 && status !== 504;
}

/** One request-validation problem, pydantic-v2 style. */
export interface ValidationIssue {
  /** Location, starting with `"body"`; list indices are numbers (as FastAPI reports them). */
  loc: Array<string | number>;
  /** Message (`msg`). */
  msg: string;
  /** pydantic error type, e.g. `extra_forbidden`, `missing`, `value_error`. */
  type: string;
}

/**
 * A request body failed validation (§1.7 variant 1): always HTTP 400 `INVALID_ARGUMENT`.
 * `message` = `"Invalid request parameters: " + loc.join(".") + ": " + first msg`.
 */
export class RequestValidationError extends Error {
  override readonly name = 'RequestValidationError';
  /** Always 400 (FastAPI's 422 remapped). */
  readonly status = 400;
  readonly code = 'INVALID_ARGUMENT' as const;
  /** Every problem found, in pydantic's order (fields in declaration order, then extras). */
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[]) {
    if (issues.length === 0) throw new RangeError('RequestValidationError needs at least one issue');
    const first = issues[0];
    super(`Invalid request parameters: ${first.loc.map(String).join('.')}: ${first.msg}`);
    this.issues = issues;
  }
}

/**
 * An error answered in the §1.7 variant-2 envelope: the contract's own (`details` `{}` unless
 * the code defines some, INVALID_URI: `{uri, reason}`) and the mesh's (`details` `{reason,
 * domain, …, request_id}`, STYLE B6). Its status is {@link httpStatusOf} its code and reason.
 */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** HTTP status of {@link code} (and `details.reason`). */
  get status(): number {
    return httpStatusOf(this.code, this.details.reason);
  }
}

/** 400 `INVALID_ARGUMENT` with `message` verbatim. */
export function invalidArgument(message: string): DomainError {
  return new DomainError('INVALID_ARGUMENT', message);
}

/** 400 `INVALID_URI`: `"Invalid URI: <uri> (<reason>)"`, details `{uri, reason}`. */
export function invalidUri(uri: string, reason: string): DomainError {
  return new DomainError('INVALID_URI', `Invalid URI: ${uri} (${reason})`, { uri, reason });
}

/** 401 `UNAUTHENTICATED`. */
export function unauthenticated(message: string): DomainError {
  return new DomainError('UNAUTHENTICATED', message);
}

/** 404 `NOT_FOUND` for a path no route answers: `"Route not found: <METHOD> <path>"` (no query string). */
export function routeNotFound(method: string, url: string): DomainError {
  return new DomainError('NOT_FOUND', `Route not found: ${method} ${url.split('?')[0]}`);
}

/** 403 `PERMISSION_DENIED`. */
export function permissionDenied(message: string): DomainError {
  return new DomainError('PERMISSION_DENIED', message);
}

/**
 * 415: a body sent with a media type the gateway does not read (anything but JSON), naming
 * `application/json`. FastAPI hands such bodies to validation as bytes, which then fail as "not
 * an object" — a 400 that never says what to send instead.
 * @param contentType the request's `Content-Type`, as sent
 */
export function unsupportedMediaType(contentType: string, requestId: string): DomainError {
  return new DomainError('INVALID_ARGUMENT', `Unsupported Content-Type '${contentType}': send the body as application/json`, {
    reason: 'UNSUPPORTED_MEDIA_TYPE',
    domain: 'gateway',
    request_id: requestId,
    content_type: contentType,
    accepted: ['application/json'],
  });
}

/**
 * Map a kernel rejection to its domain error: `InvalidUriError` → `INVALID_URI`,
 * `InvalidArgumentError` → `INVALID_ARGUMENT`; a {@link DomainError} is returned as is.
 * @returns null for anything else (the route answers 500 and logs the cause)
 */
export function toDomainError(e: unknown): DomainError | null {
  if (e instanceof DomainError) return e;
  if (e instanceof InvalidUriError) return new DomainError('INVALID_URI', e.message, { uri: e.uri, reason: e.reason }, { cause: e });
  if (e instanceof InvalidArgumentError) return new DomainError('INVALID_ARGUMENT', e.message, {}, { cause: e });
  return null;
}

/**
 * Run a kernel rule (`assertWritableUri`, `normalizeTags`, …): its refusal is thrown as the
 * domain error it maps to ({@link toDomainError}), anything else as it is.
 */
export function kernelRule<T>(rule: () => T): T {
  try {
    return rule();
  } catch (e) {
    throw toDomainError(e) ?? e;
  }
}

/** A body the JSON parser could not read; the app answers the §1.7 `json_invalid` envelope (`invalidJsonBody`). */
export class JsonBodyError extends Error {
  override readonly name = 'JsonBodyError';
  /** @param position offset of the error (Python's `JSONDecodeError.pos`) */
  constructor(readonly position: number) {
    super(`JSON decode error at position ${position}`);
  }
}

/**
 * A body sent with a media type the gateway does not read (anything but JSON); the app answers
 * the catalogue's `unsupportedMediaType` 415.
 */
export class UnsupportedMediaTypeError extends Error {
  override readonly name = 'UnsupportedMediaTypeError';
  /** @param contentType the request's `Content-Type`, as sent */
  constructor(readonly contentType: string) {
    super(`Unsupported Content-Type '${contentType}': send the body as application/json`);
  }
}
