/**
 * The answers of the writes with a semantic choice (Compress, RecoverOverflow), kept per
 * `requestId` so that a repeated request returns the first answer and writes nothing (§3.2).
 * A record names the call that wrote it: a request id reused for the other call is an error.
 */
import type { IdempotencyRecord, SessionKey, SessionStore } from '@ctxmesh/stores';
import { InvalidFieldError } from './errors';

/** Idempotency records live 1 h (§3.2). */
export const IDEMPOTENCY_TTL_SECONDS = 3600;

/** The call an idempotency record belongs to. */
export type IdemOp = 'compress' | 'recover';

/** Reads and writes the idempotency records of a store. */
export class IdempotencyRecords {
  /** @param store the store holding the records */
  constructor(private readonly store: SessionStore) {}

  /**
   * The first answer to `requestId`, or null when the request is new.
   * @throws InvalidFieldError `REQUEST_ID_REUSED` when the id was used for the other call
   */
  async cached<T>(key: SessionKey, requestId: string, op: IdemOp): Promise<T | null> {
    const raw = await this.store.getIdempotent(key, requestId);
    return raw === null ? null : this.decode<T>(raw, op);
  }

  /**
   * The answer a stored record holds.
   * @throws InvalidFieldError `REQUEST_ID_REUSED` when the record belongs to the other call
   */
  decode<T>(raw: string, op: IdemOp): T {
    const rec = JSON.parse(raw) as { op: IdemOp; response: T };
    if (rec.op !== op) throw new InvalidFieldError('requestId', `was already used for a ${rec.op} call`, 'REQUEST_ID_REUSED');
    return rec.response;
  }

  /** The record to write with a mutation, so the answer lands atomically with the change. */
  record(requestId: string, op: IdemOp, response: unknown): IdempotencyRecord {
    return { requestId, value: JSON.stringify({ op, response }), ttlSeconds: IDEMPOTENCY_TTL_SECONDS };
  }

  /** Record an answer that wrote nothing; a record written meanwhile by a twin call wins. */
  async remember<T>(key: SessionKey, requestId: string, op: IdemOp, response: T): Promise<T> {
    const existing = await this.store.putIdempotent(key, this.record(requestId, op, response));
    return existing === null ? response : this.decode<T>(existing, op);
  }
}
