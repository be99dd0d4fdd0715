/**
 * Every error the kernel raises, in one place (the catalogue of `@ctxmesh/kernel`). Each says
 * what the caller did wrong; the services map them onto their codes (the gateway: 400s).
 */

/** Exact message for a retrieval call with a blank query and no image (context-contract §1.7). */
export const EMPTY_QUERY_MESSAGE = 'Search query or image_url must not be empty.';

/**
 * The caller's input is invalid; surfaces as 400 `INVALID_ARGUMENT` with `message` verbatim.
 * Search adapters should translate a downstream INVALID_ARGUMENT that concerns the caller's
 * input into this class so that gathering re-raises it (context-contract §3.4).
 */
export class InvalidArgumentError extends Error {
  override readonly name = 'InvalidArgumentError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A URI rejected by validation; the gateway answers 400 `INVALID_URI`. */
export class InvalidUriError extends Error {
  override readonly name = 'InvalidUriError';
  constructor(
    readonly uri: string,
    readonly reason: string,
  ) {
    super(`Invalid URI: ${uri} (${reason})`);
  }
}

/**
 * True for errors that reject the request rather than degrade it: {@link InvalidArgumentError}
 * and {@link InvalidUriError} (which the contract treats as its subclass).
 */
export function isRequestRejection(e: unknown): e is InvalidArgumentError | InvalidUriError {
  return e instanceof InvalidArgumentError || e instanceof InvalidUriError;
}

/** Raised for a packing name the kernel does not know. */
export class UnknownPackingError extends Error {
  override readonly name = 'UnknownPackingError';
  /** @param known the packings there are (`PACKINGS`) */
  constructor(
    readonly packing: string,
    known: readonly string[],
  ) {
    super(`unknown packing '${packing}'; known: ${known.join(', ')}`);
  }
}

/** A tokenizer name that is not one of `TOKENIZERS`; the gateway answers 400. */
export class UnknownTokenizerError extends Error {
  override readonly name = 'UnknownTokenizerError';
  /** @param known the tokenizers there are (`TOKENIZERS`) */
  constructor(
    readonly tokenizer: string,
    known: readonly string[],
  ) {
    super(`unknown tokenizer '${tokenizer}'; expected one of ${known.join(', ')}`);
  }
}

/** What is wrong with a directory overview's front matter. */
export type FrontMatterProblem = 'not_closed' | 'invalid_yaml' | 'not_an_object' | 'missing_directory';

/**
 * A directory `.overview.md` whose front matter the reference kernel refuses (it fails the
 * whole request). ctxmesh reports it instead and serves the directory without an overview.
 */
export class FrontMatterError extends Error {
  override readonly name = 'FrontMatterError';
  constructor(
    readonly problem: FrontMatterProblem,
    message: string,
  ) {
    super(message);
  }
}
