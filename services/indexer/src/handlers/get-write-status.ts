/** IndexerService.GetWriteStatus: the result of a recent write, from the in-memory status book. */
import type { indexer } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import type { WriteStatusBook } from '../domain/status';
import { responseOfRecord } from './results';

/**
 * Build the GetWriteStatus handler: PENDING while a write is being applied or waits for a
 * retry, APPLIED or FAILED once settled, UNSPECIFIED when the id is unknown here (never seen
 * by this process, or forgotten by its bounded memory).
 */
export function getWriteStatusHandler(book: WriteStatusBook): Handler<indexer.GetWriteStatusRequest, indexer.GetWriteStatusResponse> {
  return async (req) => {
    if (req.writeId === '') throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_WRITE_ID', 'write_id is required');
    return { result: responseOfRecord(book.get(req.writeId)) };
  };
}
