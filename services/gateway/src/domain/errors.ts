/**
 * The two error envelopes of context-contract §1.7 and the HTTP status of each error code.
 * Plain data: the route layer serialises `toEnvelope()` with the status it reports.
 */
import { InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';

/** Error codes of the OpenViking dialect (`error.code`). */
export type ApiErrorCode =
  | 'INVALID_ARGUMENT'
  | 'INVALID_URI'
  | 'UNAUTHENTICATED'
  | 'PERMISSION_DENIED'
  | 'NOT_FOUND'
  | 'FAILED_PRECONDITION'
  | 'INTERNAL';

const STATUS: Readonly<Record<string, number>> = Object.freeze({
  INVALID_ARGUMENT: 400,
  INVALID_URI: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  FAILED_PRECONDITION: 412,
});

/** HTTP status of an error code (§1.7 table); unknown codes → 500. */
export function httpStatusOf(code: string): number {
  return STATUS[code] ?? 500;
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
 * Variant 1 envelope: `{status:"error", result:null, error:{code, message, details:{validation_errors}},
 * telemetry:null, profile:null}`. The reference omits the null members here; ctxmesh sends the
 * same top-level keys as every other error so a client reads one shape (issue 14).
 */
export interface ValidationEnvelope {
  status: 'error';
  result: null;
  error: {
    code: 'INVALID_ARGUMENT';
    message: string;
    details: { validation_errors: Array<{ loc: Array<string | number>; message: string; type: string }> };
  };
  telemetry: null;
  profile: null;
}

/** Variant 2 envelope, dumped without dropping nulls. */
export interface DomainEnvelope {
  status: 'error';
  result: null;
  error: { code: string; message: string; details: Record<string, unknown> };
  telemetry: null;
  profile: null;
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

  /** The response body. */
  toEnvelope(): ValidationEnvelope {
    return {
      status: 'error',
      result: null,
      error: {
        code: this.code,
        message: this.message,
        details: { validation_errors: this.issues.map((i) => ({ loc: [...i.loc], message: i.msg, type: i.type })) },
      },
      telemetry: null,
      profile: null,
    };
  }
}

/**
 * A domain error (§1.7 variant 2): status from {@link httpStatusOf}, `details` `{}` unless the
 * code defines some (INVALID_URI: `{uri, reason}`).
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

  /** HTTP status of {@link code}. */
  get status(): number {
    return httpStatusOf(this.code);
  }

  /** The response body. */
  toEnvelope(): DomainEnvelope {
    return {
      status: 'error',
      result: null,
      error: { code: this.code, message: this.message, details: { ...this.details } },
      telemetry: null,
      profile: null,
    };
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

/** 403 `PERMISSION_DENIED`. */
export function permissionDenied(message: string): DomainError {
  return new DomainError('PERMISSION_DENIED', message);
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
