/** Request checks shared by the ledger handlers. */
import type { common } from '@ctxmesh/proto';
import { Code, CtxError, requireCaller, type Budget } from '@ctxmesh/rpc';
import type { LedgerKey } from '@ctxmesh/stores';
import { LedgerRequestError } from '../domain/ledger';

/**
 * The ledger key of a request: one ledger per account, user and session.
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` when the identity lacks an account or user
 *   (the gateway always sets both; a ledger without them would be shared across tenants)
 */
export function ledgerKey(identity: common.Identity | undefined, sessionId: string): LedgerKey {
  const { account, user } = requireCaller(identity);
  return { account, user, sessionId };
}

/** Map a domain validation error to INVALID_ARGUMENT (reason `BAD_<FIELD>`); rethrow anything else. */
export function asInvalidArgument(err: unknown): never {
  if (err instanceof LedgerRequestError) {
    throw new CtxError(Code.INVALID_ARGUMENT, `BAD_${err.field.toUpperCase()}`, err.message, { metadata: { field: err.field } });
  }
  throw err;
}

/**
 * Run `fn` with a signal that fires at the request's deadline or after `capMs`, whichever is
 * first, so a hanging store degrades the call instead of consuming the caller's whole budget.
 */
export async function withStoreSignal<T>(budget: Budget, capMs: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const child = budget.child(capMs);
  try {
    return await fn(child.signal);
  } finally {
    child.dispose();
  }
}
