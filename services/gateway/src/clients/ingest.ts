/**
 * The ingest port: how the gateway hands writes to the indexer over the event bus (content-api
 * §5) — publish a `WriteOp`, record its receipt, wait for its done notice — and reads back
 * receipts and dead letters. Every bus failure is answered from the error catalogue here, so
 * the routes see the bus as a client like the gRPC ones.
 */
import { indexer } from '@ctxmesh/proto';
import { Code, isCode, type Budget } from '@ctxmesh/rpc';
import type { Logger } from '@ctxmesh/runtime';
import { AwaitDoneAbortedError, type DeadLetter, type DoneNotice, type EventBus, type WriteReceipt } from '@ctxmesh/stores';
import { DomainError } from '../domain';

/** Subject every write and delete is published on (the indexer consumes it). */
export const INGEST_WRITE_SUBJECT = 'ctxmesh.ingest.write';

/** What the content routes need from the event bus. */
export interface IngestPort {
  /**
   * Publish `op` (its write id is the message id, its URI the ordering key) and record a
   * `queued` receipt. With `wait`, answer the indexer's done notice; without, null. The waiter
   * is subscribed before the publish, so a fast indexer cannot answer unseen.
   * @throws DomainError 503 UNAVAILABLE `BUS_UNAVAILABLE` when the bus refuses the write (nothing
   *   was written) or closes while waiting (the write stays queued); 504 DEADLINE_EXCEEDED
   *   `WRITE_PENDING` when the budget ends first (the write will still be applied)
   */
  submit(op: indexer.WriteOp, wait: boolean, budget: Budget, requestId: string): Promise<DoneNotice | null>;
  /**
   * The receipt of a write, or null when unknown or expired.
   * @throws DomainError 503 UNAVAILABLE `BUS_UNAVAILABLE` when the bus does not answer
   */
  receipt(writeId: string, requestId: string): Promise<WriteReceipt | null>;
  /** The newest `limit` dead letters. */
  deadLetters(limit: number): Promise<DeadLetter[]>;
}

/** Options of {@link ingestPort}. */
export interface IngestPortOptions {
  /** Subject writes are published on. @default INGEST_WRITE_SUBJECT */
  subject?: string;
  /** Clock of the receipts, ms since the epoch. @default Date.now */
  now?: () => number;
  /** Where a receipt that could not be recorded is reported. */
  log: Pick<Logger, 'warn'>;
}

/** An {@link IngestPort} over an event bus (the caller owns and closes the bus). */
export function ingestPort(bus: EventBus, opts: IngestPortOptions): IngestPort {
  const subject = opts.subject ?? INGEST_WRITE_SUBJECT;
  const now = opts.now ?? Date.now;
  return {
    async submit(op, wait, budget, requestId) {
      const waiter = wait ? bus.awaitDone(op.writeId, budget.signal) : null;
      try {
        await bus.publish({ subject, id: op.writeId, data: indexer.WriteOp.encode(op).finish(), key: op.uri }, { timeoutMs: budget.natsTimeoutMs() });
      } catch (err) {
        waiter?.cancel();
        waiter?.done.catch(() => undefined);
        budget.throwIfExhausted();
        throw new DomainError(
          'UNAVAILABLE',
          'the event bus did not accept the write; nothing was written',
          { reason: 'BUS_UNAVAILABLE', domain: 'gateway', uri: op.uri, request_id: requestId },
          { cause: err },
        );
      }
      // The receipt a caller who does not wait can poll (GET /api/v1/content/status): recorded
      // only if absent, so it never hides an outcome the indexer already recorded.
      const identity = op.identity!;
      await bus
        .putReceipt({ id: op.writeId, state: 'queued', uri: op.uri, account: identity.accountId, user: identity.userId, atMs: now() }, { ifAbsent: true })
        .catch((err: unknown) => opts.log.warn({ err, writeId: op.writeId }, 'write receipt not recorded'));
      if (!waiter) return null;
      try {
        return await waiter.done;
      } catch (err) {
        const cause = err instanceof AwaitDoneAbortedError ? err.cause : undefined;
        if (isCode(cause, Code.DEADLINE_EXCEEDED) || (err instanceof AwaitDoneAbortedError && budget.remainingMs() <= 0)) {
          throw new DomainError('DEADLINE_EXCEEDED', `write ${op.writeId} is queued but was not applied within the request budget; it will still be applied`, {
            reason: 'WRITE_PENDING',
            domain: 'gateway',
            uri: op.uri,
            write_id: op.writeId,
            request_id: requestId,
          });
        }
        if (isCode(cause, Code.CANCELLED)) throw cause;
        throw new DomainError(
          'UNAVAILABLE',
          `stopped waiting for write ${op.writeId}: the event bus closed; the write is queued`,
          { reason: 'BUS_UNAVAILABLE', domain: 'gateway', uri: op.uri, write_id: op.writeId, request_id: requestId },
          { cause: err },
        );
      }
    },

    receipt: (writeId, requestId) =>
      bus.getReceipt(writeId).catch((err: unknown) => {
        throw new DomainError('UNAVAILABLE', 'the event bus did not answer; try again', { reason: 'BUS_UNAVAILABLE', domain: 'gateway', request_id: requestId }, { cause: err });
      }),

    deadLetters: (limit) => bus.deadLetters(limit),
  };
}
