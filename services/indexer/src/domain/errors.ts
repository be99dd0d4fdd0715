/**
 * Every error of the indexer, in one place (the catalogue of `@ctxmesh/indexer`).
 */

/** A write that can never be applied (bad bytes, URI, mode, identity or validity). */
export class MalformedWriteError extends Error {
  override readonly name = 'MalformedWriteError';
  /** @param field the offending WriteOp field (snake_case, as in the proto) */
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** The caller's signal fired while a write was being prepared (nothing was written). */
export class ApplyAbortedError extends Error {
  override readonly name = 'ApplyAbortedError';
  constructor(cause: unknown) {
    super('write aborted before it was stored', { cause });
  }
}

/**
 * A record thread could not build a document: the thread stopped with the document in flight
 * (transient: the write is retried), or building it failed there (`remoteName` is the error's
 * name in the thread).
 */
export class RecordThreadError extends Error {
  override readonly name = 'RecordThreadError';
  constructor(
    message: string,
    readonly remoteName = '',
  ) {
    super(message);
  }
}
