/** IndexerService.GetIndexStats: the caller's account's point and document counts, and write counters. */
import type { indexer } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import type { VectorIndex } from '@ctxmesh/stores';
import type { WriteStatusBook } from '../domain/status';

/**
 * Build the GetIndexStats handler. Counts are per account (never across tenants), so the
 * identity's `account_id` is required; the write counters are this process's since start.
 */
export function getIndexStatsHandler(index: VectorIndex, book: WriteStatusBook): Handler<indexer.GetIndexStatsRequest, indexer.GetIndexStatsResponse> {
  return async (req) => {
    const account = req.identity?.accountId ?? '';
    if (account === '') throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity.account_id is required');
    let stats;
    try {
      stats = await index.stats(account);
    } catch (err) {
      throw new CtxError(Code.UNAVAILABLE, 'INDEX_UNAVAILABLE', 'the index did not answer', { cause: err });
    }
    return { nodes: stats.points, documents: stats.documents, writesApplied: book.writesApplied, writesFailed: book.writesFailed };
  };
}
