/** LedgerService.RecordServed: record the entries a request returned, with eviction (context-contract §7). */
import type { ledger } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import type { LedgerStore } from '@ctxmesh/stores';
import { recordServed as domainRecordServed } from '../domain/ledger';
import { asInvalidArgument, ledgerKey, withStoreSignal } from './request';

/**
 * Build the RecordServed handler. Status `ok` when the entries were written or there was
 * nothing to write (`dedup_turns` 0 or no entries), `write_failed` when the store failed: a
 * store outage never fails the RPC.
 * @param store the ledger store
 * @param storeTimeoutMs longest wait for the store, ms
 */
export function recordServedHandler(store: LedgerStore, storeTimeoutMs: number): Handler<ledger.RecordServedRequest, ledger.RecordServedResponse> {
  return async (req, ctx) => {
    const key = ledgerKey(req.identity, req.sessionId);
    const out = await withStoreSignal(ctx.budget, storeTimeoutMs, (signal) =>
      domainRecordServed(
        store,
        { key, turn: req.turn, dedupTurns: req.dedupTurns, entries: req.entries.map((e) => ({ uri: e.uri, detail: e.detail })) },
        { signal, log: ctx.log },
      ),
    ).catch(asInvalidArgument);
    return { status: out.status === 'write_failed' ? 'write_failed' : 'ok' };
  };
}
