/**
 * Request plumbing shared by gather's handlers: the caller scope from the wire identity, the
 * `as_of` instant, and the one mapping from domain failures to wire errors.
 */
import { EmbedderError } from '@ctxmesh/embedder';
import { isRequestRejection } from '@ctxmesh/kernel';
import { common } from '@ctxmesh/proto';
import { Code, CtxError, requireCaller } from '@ctxmesh/rpc';
import { isUnsupportedFilter } from '../domain/context';
import { InvalidFilterError } from '../domain/filter';
import { reasonOf, RejectReason } from '../domain/rejections';
import { AccessDeniedError, type CallerScope } from '@ctxmesh/stores';

/**
 * The caller scope of a request. An empty workspace means "no workspace restriction": list and
 * context modes search the whole account (workspaces scope retrieve, which sets one).
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user
 */
export function scopeOf(identity: common.Identity | undefined): CallerScope {
  return requireCaller(identity);
}

/**
 * The valid-time instant of a request in ms: `""` means now (facts no longer valid are not
 * served by default).
 * @throws CtxError INVALID_ARGUMENT `BAD_AS_OF` for an unparsable time
 */
export function asOfMs(asOf: string, now: () => number): number {
  if (asOf.trim() === '') return now();
  const t = Date.parse(asOf.trim());
  if (Number.isNaN(t)) throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_AS_OF', `as_of is not an ISO-8601 time: ${JSON.stringify(asOf)}`);
  return t;
}

/**
 * Map a domain failure to the error that goes on the wire: request rejections → INVALID_ARGUMENT
 * (message verbatim, so the gateway can show it as a 400), a forbidden target → PERMISSION_DENIED,
 * an unreachable embedder → UNAVAILABLE. Anything else is rethrown (the adapter makes it INTERNAL).
 */
export function toWireError(e: unknown): never {
  if (e instanceof CtxError) throw e;
  if (isRequestRejection(e)) throw new CtxError(Code.INVALID_ARGUMENT, reasonOf(e), e.message, { cause: e });
  if (e instanceof InvalidFilterError || isUnsupportedFilter(e)) throw new CtxError(Code.INVALID_ARGUMENT, RejectReason.BAD_FILTER, e.message, { cause: e });
  if (e instanceof AccessDeniedError) throw new CtxError(Code.PERMISSION_DENIED, 'ACCESS_DENIED', e.message, { cause: e, metadata: { uri: e.uri } });
  if (e instanceof EmbedderError && e.retryable) throw new CtxError(Code.UNAVAILABLE, 'EMBEDDER_UNAVAILABLE', 'the embedder is unavailable', { cause: e });
  throw e;
}
