/**
 * Every error of `@ctxmesh/stores`, in one place (its catalogue). Adapters throw the same class
 * for the same condition, so callers map each once whatever store is configured (e.g. gather:
 * UnsupportedFilterError → INVALID_ARGUMENT; the gateway: AccessDeniedError → 403).
 */
import type { NodeRecord } from './vector-index';

/** A record or query that does not fit the index (wrong dimension, mixed documents or accounts, bad URI, no account). */
export class InvalidRecordError extends Error {
  override readonly name = 'InvalidRecordError';
}

/** A filter the index cannot evaluate (unknown field or op, bad value); callers map it to INVALID_ARGUMENT. */
export class UnsupportedFilterError extends Error {
  override readonly name = 'UnsupportedFilterError';
}

/** The store holds an index of another dense dimension than the one asked for. */
export class IndexDimensionMismatchError extends Error {
  override readonly name = 'IndexDimensionMismatchError';
  /**
   * @param stored dimension the existing index (SQLite file or Qdrant collection) was created with
   * @param requested dimension the caller opened it with (the embedder's)
   */
  constructor(
    readonly stored: number,
    readonly requested: number,
  ) {
    super(`vector index was created with dimension ${stored}, opened with ${requested}`);
  }
}

/**
 * Check the records of one `replaceDocument` call against the port's rules: a viking:// document
 * URI, at least one record, every record of that document with a unique viking:// URI, a vector
 * of the index's dimension and one shared account.
 * @returns the account of the document (every record's)
 * @throws InvalidRecordError naming the first broken rule
 */
export function validateDocumentRecords(docUri: string, records: readonly NodeRecord[], dimension: number): string {
  if (typeof docUri !== 'string' || !docUri.startsWith('viking://')) throw new InvalidRecordError(`docUri must be a viking:// URI: ${JSON.stringify(docUri)}`);
  // A document is (account, docUri), and an empty list names no account: deleting is deleteDocument's job.
  if (records.length === 0) throw new InvalidRecordError(`no records for ${docUri}: delete a document with deleteDocument(account, uri)`);
  const seen = new Set<string>();
  for (const r of records) {
    if (r.docUri !== docUri) throw new InvalidRecordError(`record ${r.uri} has docUri ${r.docUri}, expected ${docUri}`);
    if (!r.uri || !r.uri.startsWith('viking://')) throw new InvalidRecordError(`record uri must be a viking:// URI: ${JSON.stringify(r.uri)}`);
    if (seen.has(r.uri)) throw new InvalidRecordError(`duplicate uri ${r.uri} in one document`);
    seen.add(r.uri);
    if (!(r.vector instanceof Float32Array) || r.vector.length !== dimension) {
      throw new InvalidRecordError(`record ${r.uri} has a vector of length ${r.vector?.length}, expected ${dimension}`);
    }
    if (!r.account) throw new InvalidRecordError(`record ${r.uri} has no account`);
  }
  const account = records[0].account;
  if (records.some((r) => r.account !== account)) throw new InvalidRecordError(`records of ${docUri} span several accounts`);
  return account;
}

/** The event bus cannot take a message now (disconnected); callers answer 503 `BUS_UNAVAILABLE`. */
export class BusUnavailableError extends Error {
  override readonly name = 'BusUnavailableError';
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTCONN', 'EHOSTUNREACH', 'ENETUNREACH', 'NR_CLOSED']);

/**
 * True for an error that says a network store (Redis) could not be reached — refused, reset,
 * closed, or a command refused while the client reconnects — as opposed to a bad command or
 * bad data. Callers answer these 503 UNAVAILABLE, never 500.
 */
export function isStoreUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
  if (err.name === 'MaxRetriesPerRequestError' || err.name === 'BusUnavailableError') return true;
  // ioredis, with the offline queue off, refuses commands while it reconnects.
  return /Connection is closed|enableOfflineQueue|Stream isn't writeable/i.test(err.message);
}

/** A trace id that does not match `TRACE_ID`. */
export class InvalidTraceIdError extends Error {
  override readonly name = 'InvalidTraceIdError';
  constructor(readonly id: string) {
    super(`invalid trace id ${JSON.stringify(id)}: use 1 to 64 letters, digits, '_' or '-'`);
  }
}

/** A call on an index after `EmbeddedVectorIndex.close`. */
export class IndexClosedError extends Error {
  override readonly name = 'IndexClosedError';
  constructor() {
    super('the embedded vector index is closed');
  }
}

/** The SQLite file holds a vector index with another table layout (written by another ctxmesh version). */
export class IndexSchemaMismatchError extends Error {
  override readonly name = 'IndexSchemaMismatchError';
  constructor(
    readonly stored: string,
    readonly expected: string,
  ) {
    super(`vector index schema ${stored} is not supported (expected ${expected}); re-index into a new file`);
  }
}

/** A configured Qdrant could not be opened (unreachable, refused, or no such collection). */
export class VectorStoreUnavailableError extends Error {
  override readonly name = 'VectorStoreUnavailableError';
}

/** The in-process bus refused an operation (bad subject, or closed). */
export class InProcBusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InProcBusError';
  }
}

/** `awaitDone` stopped waiting: its signal fired or it was cancelled. */
export class AwaitDoneAbortedError extends Error {
  /** @param id the message id that was awaited */
  constructor(
    readonly id: string,
    cause?: unknown,
  ) {
    super(`stopped waiting for the done notice of ${id}`, { cause });
    this.name = 'AwaitDoneAbortedError';
  }
}

/** A target or read outside the caller's reach; the gateway answers 403 `PERMISSION_DENIED`. */
export class AccessDeniedError extends Error {
  override readonly name = 'AccessDeniedError';
  constructor(readonly uri: string) {
    super(`Access denied: ${uri} is outside the caller's scope`);
  }
}
