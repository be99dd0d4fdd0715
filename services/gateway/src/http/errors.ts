/**
 * The one place the gateway turns a failure into an HTTP answer: the catalogue's errors
 * (`domain/errors.ts`: validation errors, context-contract §1.7 variant 1, and domain errors,
 * variant 2), failures of the mesh (a gRPC code from a downstream or the request budget),
 * which use the variant-2 shape with `code` = the gRPC code name and `details` =
 * `{reason, domain, request_id, …}` (STYLE B6), and the HTTP server's own refusals.
 */
import { Code, codeName, CtxError } from '@ctxmesh/rpc';
import { AwaitDoneAbortedError } from '@ctxmesh/stores';
import { DomainError, httpStatusOf, isFault, RequestValidationError, toDomainError } from '../domain';
import { envelopeOf, errorEnvelope, type DomainEnvelope, type ValidationEnvelope } from '../mapping/envelope';

/** A rendered error. */
export interface HttpError {
  /** HTTP status. */
  status: number;
  /** Response body. */
  body: ValidationEnvelope | DomainEnvelope;
  /** True when the cause must be logged as a server fault (5xx other than 503/504). */
  fault: boolean;
}

/**
 * A downstream gRPC failure as the contract's envelope. INVALID_ARGUMENT is the caller's
 * input (gathering's "Search query or image_url must not be empty."), so it is rendered
 * exactly like the domain error the reference server raises (`details: {}`), or as
 * `INVALID_URI` with `{uri, reason}` when the downstream said so.
 */
export function renderCtxError(e: CtxError, requestId: string): HttpError {
  if (e.code === Code.INVALID_ARGUMENT) {
    if (e.reason === 'INVALID_URI' && e.metadata.uri !== undefined) {
      return { status: 400, body: errorEnvelope('INVALID_URI', e.message, { uri: e.metadata.uri, reason: e.metadata.reason ?? '' }), fault: false };
    }
    return { status: 400, body: errorEnvelope('INVALID_ARGUMENT', e.message, {}), fault: false };
  }
  const status = httpStatusOf(codeName(e.code));
  const details: Record<string, unknown> = { reason: e.reason, domain: e.domain || 'gateway', request_id: requestId };
  if (Object.keys(e.metadata).length > 0) details.metadata = { ...e.metadata };
  // Internal causes stay in the logs (connect-es `cause`); the caller gets the code only.
  const message = e.code === Code.INTERNAL || e.code === Code.UNKNOWN ? 'internal error' : e.message;
  return { status, body: errorEnvelope(codeName(e.code), message, details), fault: isFault(status) };
}

/**
 * The raw HTTP answer to a connection-level client error, which Node raises before any route
 * or hook runs (so there is no request id and no reply object): a request that did not fully
 * arrive within the receive timeout (408 `REQUEST_TIMEOUT`, naming the limit), headers over
 * Node's size limit (431 `HEADERS_TOO_LARGE`), or bytes that are not HTTP (400
 * `MALFORMED_REQUEST`). The body is the contract's error envelope, as for every other error.
 * @param code Node's error code (`ERR_HTTP_REQUEST_TIMEOUT`, `HPE_HEADER_OVERFLOW`, …)
 * @param receive the receive timeouts named in the 408's message
 */
export function clientErrorResponse(code: string | undefined, receive: { headersMs: number; requestMs: number }): string {
  let status: number;
  let body: DomainEnvelope;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = errorEnvelope(
      'REQUEST_TIMEOUT',
      `the request did not arrive in time: headers within ${receive.headersMs} ms (GATEWAY_HEADERS_TIMEOUT_MS), the whole request within ${receive.requestMs} ms (GATEWAY_REQUEST_TIMEOUT_MS)`,
      { headers_timeout_ms: receive.headersMs, request_timeout_ms: receive.requestMs },
    );
  } else if (code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = errorEnvelope('HEADERS_TOO_LARGE', 'the request headers exceed the server limit', {});
  } else {
    status = 400;
    body = errorEnvelope('MALFORMED_REQUEST', 'the request is not valid HTTP', {});
  }
  const text = JSON.stringify(body);
  const reason = status === 408 ? 'Request Timeout' : status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${text}`;
}

interface FastifyLikeError {
  statusCode?: unknown;
  code?: unknown;
  message?: unknown;
}

/**
 * Render anything a route or hook threw.
 * @param requestId the response's `X-Request-ID`
 */
export function renderError(err: unknown, requestId: string): HttpError {
  if (err instanceof RequestValidationError) return { status: 400, body: envelopeOf(err), fault: false };
  const domain = toDomainError(err);
  if (domain instanceof DomainError) return { status: domain.status, body: envelopeOf(domain), fault: isFault(domain.status) };
  if (err instanceof CtxError) return renderCtxError(err, requestId);
  if (err instanceof AwaitDoneAbortedError && err.cause instanceof CtxError) return renderCtxError(err.cause, requestId);
  // Fastify's own 4xx (body too large, bad media type…) keep their status.
  const f = err as FastifyLikeError | null;
  if (f && typeof f.statusCode === 'number' && f.statusCode >= 400 && f.statusCode < 500) {
    const code = f.statusCode === 413 ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARGUMENT';
    return {
      status: f.statusCode,
      body: errorEnvelope(code, typeof f.message === 'string' ? f.message : 'bad request', { reason: typeof f.code === 'string' ? f.code : 'BAD_REQUEST', domain: 'gateway', request_id: requestId }),
      fault: false,
    };
  }
  return { status: 500, body: errorEnvelope('INTERNAL', 'internal error', { reason: 'INTERNAL', domain: 'gateway', request_id: requestId }), fault: true };
}
