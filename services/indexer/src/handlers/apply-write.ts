/** IndexerService.ApplyWrite: apply one write synchronously, on the same path as the bus consumer. */
import type { indexer } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import type { EventBus } from '@ctxmesh/stores';
import type { Applier } from '../domain/apply';
import type { WriteStatusBook } from '../domain/status';
import { MalformedWriteError, validateWrite } from '../domain/write';
import { noticeOf } from '../ingest/consumer';
import { recordOf, responseOfRecord } from './results';

/**
 * Build the ApplyWrite handler. A refused write (`create` on an existing URI) is an answer,
 * not an error: status FAILED with `error_reason` ALREADY_EXISTS. A malformed op is
 * INVALID_ARGUMENT (reason MALFORMED_WRITE, metadata `field`); a store or embedder failure is
 * UNAVAILABLE (reason INDEX_UNAVAILABLE), retryable.
 * @param bus when given, the outcome is also announced as a done notice (a replayed dead
 *   letter answers a gateway still waiting on it)
 */
export function applyWriteHandler(applier: Applier, book: WriteStatusBook, bus?: EventBus): Handler<indexer.ApplyWriteRequest, indexer.ApplyWriteResponse> {
  return async (req, ctx) => {
    if (req.op === undefined) throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_OP', 'op is required');
    let write;
    try {
      write = validateWrite(req.op);
    } catch (err) {
      if (err instanceof MalformedWriteError) throw new CtxError(Code.INVALID_ARGUMENT, 'MALFORMED_WRITE', err.message, { metadata: { field: err.field } });
      throw err;
    }
    book.pending(write.writeId);
    let result;
    try {
      result = await applier.apply(write, ctx.budget.signal);
    } catch (err) {
      // Out of time or cancelled: the server adapter reports the budget, not the symptom.
      if (ctx.budget.exhausted) throw err;
      throw new CtxError(Code.UNAVAILABLE, 'INDEX_UNAVAILABLE', 'the index could not apply the write; retry later', { cause: err });
    }
    const rec = recordOf(result);
    book.settle(write.writeId, rec);
    if (bus !== undefined && write.writeId !== '') {
      await bus.notifyDone(noticeOf(write.writeId, result)).catch((err: unknown) => ctx.log.warn({ err }, 'done notice not sent'));
    }
    return responseOfRecord(rec);
  };
}
