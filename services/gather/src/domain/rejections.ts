/**
 * Request rejections raised from inside retrieval. The kernel re-raises only its own
 * `InvalidArgumentError` (and `InvalidUriError`) from a search call (context-contract §3.4), so
 * gather's rejections are that class, tagged with the reason the wire error carries.
 */
import { EMPTY_QUERY_MESSAGE, InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';

/** Reasons of gather's INVALID_ARGUMENT errors. */
export const RejectReason = {
  /** Blank query and no image (context-contract §1.7). */
  EMPTY_QUERY: 'EMPTY_QUERY',
  /** Image-only query on a text-only embedder (context-contract §3.7). */
  IMAGE_QUERY_UNSUPPORTED: 'IMAGE_QUERY_UNSUPPORTED',
  /** The request's filter is not one the index can evaluate. */
  BAD_FILTER: 'BAD_FILTER',
  /** A URI failed validation. */
  INVALID_URI: 'INVALID_URI',
  /** Anything else the kernel rejected. */
  INVALID_ARGUMENT: 'INVALID_ARGUMENT',
} as const;

const reasons = new WeakMap<Error, string>();

/** An `InvalidArgumentError` carrying `reason`. */
export function rejection(reason: string, message: string, cause?: unknown): InvalidArgumentError {
  const e = new InvalidArgumentError(message, cause === undefined ? undefined : { cause });
  reasons.set(e, reason);
  return e;
}

/** The reason of a kernel rejection: the tagged one, else derived from its class and message. */
export function reasonOf(e: InvalidArgumentError | InvalidUriError): string {
  const tagged = reasons.get(e);
  if (tagged) return tagged;
  if (e instanceof InvalidUriError) return RejectReason.INVALID_URI;
  return e.message === EMPTY_QUERY_MESSAGE ? RejectReason.EMPTY_QUERY : RejectReason.INVALID_ARGUMENT;
}

/**
 * The rejection for an image-only query: the Embedder port embeds texts, so an image cannot be
 * searched; this is said plainly rather than answered with a silent empty search.
 * @param supportsImages the embedder's own claim (changes the wording only)
 */
export function imageOnlyRejection(embedderId: string, supportsImages = false): InvalidArgumentError {
  const why = supportsImages
    ? `the configured embedder (${embedderId}) declares image support, but gather embeds query texts only`
    : `the configured embedder (${embedderId}) is text-only`;
  return rejection(RejectReason.IMAGE_QUERY_UNSUPPORTED, `image_url search needs an image-capable embedder; ${why} — send a text query`);
}

/** The rejection for a blank query without an image (the contract's exact message). */
export function emptyQueryRejection(): InvalidArgumentError {
  return rejection(RejectReason.EMPTY_QUERY, EMPTY_QUERY_MESSAGE);
}
