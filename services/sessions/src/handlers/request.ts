/**
 * Request plumbing shared by the sessions handlers: the session key of a request, the one
 * place domain errors become `CtxError` (same code, reason and metadata), and the small
 * proto ↔ domain conversions several RPCs share.
 */
import type { common, sessions } from '@ctxmesh/proto';
import { Code, CtxError, requireCaller } from '@ctxmesh/rpc';
import { isStoreUnreachable, type SessionKey } from '@ctxmesh/stores';
import type { RangeRow, RouteInput, SessionLog, SessionsErrorCode, WindowInput, WorkspaceCaller, Workspaces } from '../domain';
import { SessionsError } from '../domain';

/** What every handler runs against. */
export interface SessionsHandlerDeps {
  /** The session log domain. */
  sessions: SessionLog;
  /** The workspaces domain. */
  workspaces: Workspaces;
}

const CODES: Readonly<Record<SessionsErrorCode, Code>> = {
  INVALID_ARGUMENT: Code.INVALID_ARGUMENT,
  NOT_FOUND: Code.NOT_FOUND,
  ABORTED: Code.ABORTED,
  FAILED_PRECONDITION: Code.FAILED_PRECONDITION,
  PERMISSION_DENIED: Code.PERMISSION_DENIED,
  ALREADY_EXISTS: Code.ALREADY_EXISTS,
  INTERNAL: Code.INTERNAL,
};

/**
 * A domain error as the `CtxError` that goes on the wire: the domain's code, reason and
 * metadata unchanged (ABORTED carries `head` and `generation`; INVALID_ARGUMENT names the
 * `field`); a store that cannot be reached is UNAVAILABLE `STORE_UNAVAILABLE`. Anything else is
 * rethrown as is (the server adapter turns it into INTERNAL).
 */
export function toCtxError(err: unknown): unknown {
  if (err instanceof SessionsError) return new CtxError(CODES[err.code], err.reason, err.message, { metadata: { ...err.metadata }, cause: err });
  // A store outage is the caller's to retry (503), not a server fault (500).
  if (isStoreUnreachable(err)) return new CtxError(Code.UNAVAILABLE, 'STORE_UNAVAILABLE', 'the session store is unreachable; nothing was changed, try again', { cause: err });
  return err;
}

/** Run a domain call, translating its errors with {@link toCtxError}. */
export async function domainCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toCtxError(err);
  }
}

/**
 * The caller's account and user.
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` when either is empty (the gateway always
 *   sets both; a session without them would be shared across tenants)
 */
export function callerOf(identity: common.Identity | undefined): WorkspaceCaller {
  const { account, user } = requireCaller(identity);
  return { account, user, hint: identity?.workspace ?? '' };
}

/** The session key of a request (the session id itself is checked by the domain). */
export function sessionKeyOf(identity: common.Identity | undefined, sessionId: string): SessionKey {
  const c = callerOf(identity);
  return { account: c.account, user: c.user, sessionId };
}

/** An optional proto window as the domain's (validated there). */
export function windowOf(w: sessions.Window | undefined): WindowInput | undefined {
  return w ? { contextTokens: w.contextTokens, reservedOutputTokens: w.reservedOutputTokens } : undefined;
}

/** An optional proto route as the domain's. */
export function routeOf(r: sessions.Route | undefined): RouteInput | undefined {
  return r ? { provider: r.provider, model: r.model } : undefined;
}

/** A range row as the proto `Range`. */
export function rangeOf(r: RangeRow): sessions.Range {
  return { start: r.start, end: r.end, count: r.count, rankTokens: r.rankTokens, toolPct: r.toolPct, images: r.images, files: r.files };
}
