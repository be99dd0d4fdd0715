/**
 * Request-rejection errors of the kernel. A retrieval call that rejects the caller's input
 * raises {@link InvalidArgumentError}; gathering re-raises it (→ HTTP 400) instead of degrading
 * it into `stats.retrieval_errors` (context-contract §3.4).
 */
import { InvalidUriError } from '../uri';

/** Exact message for a retrieval call with a blank query and no image (context-contract §1.7). */
export const EMPTY_QUERY_MESSAGE = 'Search query or image_url must not be empty.';

/**
 * The caller's input is invalid; surfaces as 400 `INVALID_ARGUMENT` with `message` verbatim.
 * Search adapters should translate a downstream INVALID_ARGUMENT that concerns the caller's
 * input into this class so that gathering re-raises it.
 */
export class InvalidArgumentError extends Error {
  override readonly name = 'InvalidArgumentError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * True for errors that reject the request rather than degrade it: {@link InvalidArgumentError}
 * and `InvalidUriError` (which the contract treats as its subclass).
 */
export function isRequestRejection(e: unknown): e is InvalidArgumentError | InvalidUriError {
  return e instanceof InvalidArgumentError || e instanceof InvalidUriError;
}
