/**
 * One error model for every service (STYLE B6): handlers throw `CtxError` with a real gRPC
 * code and an UPPER_SNAKE reason; the server adapter is the one place errors are turned into
 * gRPC statuses; clients turn statuses back into `CtxError` deliberately.
 */
import { Metadata, status, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { status as statusPb } from '@ctxmesh/proto';

/** gRPC status codes (re-exported so callers need not import grpc-js). */
export const Code = status;
export type Code = status;

const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const DETAILS_KEY = 'grpc-status-details-bin';

/** Options of a CtxError. */
export interface CtxErrorOptions {
  /** The underlying error; logged, never sent. */
  cause?: unknown;
  /** Facts about the error sent in ErrorInfo.metadata (strings only). */
  metadata?: Record<string, string>;
  /** Domain (service name) that raised the error; set by the server adapter when absent. */
  domain?: string;
}

/** A typed error with a gRPC code and an AIP-193 reason. */
export class CtxError extends Error {
  override readonly name = 'CtxError';
  /** gRPC status code. */
  readonly code: Code;
  /** UPPER_SNAKE reason, e.g. `EMPTY_QUERY`. */
  readonly reason: string;
  /** ErrorInfo metadata. */
  readonly metadata: Record<string, string>;
  /** Service that raised it. */
  domain: string;

  constructor(code: Code, reason: string, message: string, opts: CtxErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    this.reason = reason;
    this.metadata = opts.metadata ?? {};
    this.domain = opts.domain ?? '';
  }
}

/** True for a CtxError with one of the given codes. */
export function isCode(err: unknown, ...codes: Code[]): err is CtxError {
  return err instanceof CtxError && codes.includes(err.code);
}

/** Longest error message sent in a status, UTF-16 units (longer ones are cut, with `…`). */
export const MAX_STATUS_MESSAGE = 1024;
/** Longest ErrorInfo metadata value sent, UTF-16 units; at most {@link MAX_STATUS_METADATA_KEYS} keys. */
export const MAX_STATUS_METADATA_VALUE = 256;
/** Most ErrorInfo metadata entries sent. */
export const MAX_STATUS_METADATA_KEYS = 16;

function clip(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/**
 * Encode a CtxError as a grpc-js status with google.rpc.Status details.
 *
 * The message and metadata are bounded: they travel as HTTP/2 trailers (`grpc-message` and,
 * again, inside `grpc-status-details-bin`), and a message that echoed a 65,000-character input
 * made trailers too large for the peer — the call then hung until its deadline, and so did
 * every other call multiplexed on the same connection (issue 12, item 3).
 */
export function toStatus(err: CtxError, domain: string): Partial<StatusObject> {
  const message = clip(err.message, MAX_STATUS_MESSAGE);
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(err.metadata).slice(0, MAX_STATUS_METADATA_KEYS)) metadata[clip(k, 64)] = clip(v, MAX_STATUS_METADATA_VALUE);
  const info = statusPb.ErrorInfo.encode({
    reason: clip(err.reason, 128),
    domain: err.domain || domain,
    metadata,
  }).finish();
  const details = statusPb.RpcStatus.encode({
    code: err.code,
    message,
    details: [{ typeUrl: ERROR_INFO_TYPE, value: Buffer.from(info) }],
  }).finish();
  const trailers = new Metadata();
  trailers.set(DETAILS_KEY, Buffer.from(details.buffer, details.byteOffset, details.byteLength));
  return { code: err.code, details: message, metadata: trailers };
}

/** Decoded ErrorInfo of a failed call, when the server sent one. */
export interface ErrorDetails {
  /** Reason. */
  reason: string;
  /** Domain. */
  domain: string;
  /** Metadata. */
  metadata: Record<string, string>;
}

/** Read the ErrorInfo out of a ServiceError's trailers. */
export function errorDetailsOf(err: Pick<ServiceError, 'metadata'>): ErrorDetails | null {
  const raw = err.metadata?.get(DETAILS_KEY)?.[0];
  if (!raw || typeof raw === 'string') return null;
  try {
    const st = statusPb.RpcStatus.decode(raw);
    const any = st.details.find((d) => d.typeUrl === ERROR_INFO_TYPE);
    if (!any) return null;
    const info = statusPb.ErrorInfo.decode(any.value);
    return { reason: info.reason, domain: info.domain, metadata: info.metadata };
  } catch {
    return null;
  }
}

/** Generic reasons used across services. */
export const Reasons = {
  INTERNAL: 'INTERNAL',
  DEADLINE_EXCEEDED: 'DEADLINE_EXCEEDED',
  CANCELLED: 'CANCELLED',
  UNAVAILABLE: 'UNAVAILABLE',
  UNIMPLEMENTED: 'UNIMPLEMENTED',
  SHUTTING_DOWN: 'SHUTTING_DOWN',
} as const;

/** HTTP status for a gRPC code (connect's table; FAILED_PRECONDITION is 412 per the REST contract). */
export function httpStatusOf(code: Code): number {
  switch (code) {
    case status.OK:
      return 200;
    case status.CANCELLED:
      return 499;
    case status.INVALID_ARGUMENT:
    case status.OUT_OF_RANGE:
      return 400;
    case status.DEADLINE_EXCEEDED:
      return 504;
    case status.NOT_FOUND:
      return 404;
    case status.ALREADY_EXISTS:
    case status.ABORTED:
      return 409;
    case status.PERMISSION_DENIED:
      return 403;
    case status.RESOURCE_EXHAUSTED:
      return 429;
    case status.FAILED_PRECONDITION:
      return 412;
    case status.UNIMPLEMENTED:
      return 501;
    case status.UNAVAILABLE:
      return 503;
    case status.UNAUTHENTICATED:
      return 401;
    default:
      return 500;
  }
}

/** UPPER_SNAKE name of a code, e.g. `DEADLINE_EXCEEDED`. */
export function codeName(code: Code): string {
  return status[code] ?? 'UNKNOWN';
}
