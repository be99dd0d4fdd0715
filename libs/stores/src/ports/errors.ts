/**
 * Errors every VectorIndex adapter throws for the same caller mistakes, so callers map them
 * once (e.g. gather: UnsupportedFilterError → INVALID_ARGUMENT) whatever store is configured.
 */

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
