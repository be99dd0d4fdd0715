/** LedgerService.BeginTurn: advance the session's clock and return the cooled URIs (context-contract §7). */
import type { ledger } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import type { LedgerStore } from '@ctxmesh/stores';
import { beginTurn as domainBeginTurn } from '../domain/ledger';
import { asInvalidArgument, ledgerKey, withStoreSignal } from './request';

/**
 * Build the BeginTurn handler. A store outage is not an error: the answer is status
 * `unavailable` (or `off` when `dedup_turns` is 0) with turn 0 and nothing cooled, because
 * proto3 has no null turn; callers read the turn only when the status is `new` or `ok`.
 * @param store the ledger store
 * @param storeTimeoutMs longest wait for the store, ms
 */
export function beginTurnHandler(store: LedgerStore, storeTimeoutMs: number): Handler<ledger.BeginTurnRequest, ledger.BeginTurnResponse> {
  return async (req, ctx) => {
    const key = ledgerKey(req.identity, req.sessionId);
    const out = await withStoreSignal(ctx.budget, storeTimeoutMs, (signal) =>
      domainBeginTurn(store, { key, dedupTurns: req.dedupTurns }, { signal, log: ctx.log }),
    ).catch(asInvalidArgument);
    return { status: out.status, turn: out.turn ?? 0, cooledUris: out.cooledUris, cooledTurns: out.cooledTurns };
  };
}
