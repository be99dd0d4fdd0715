/**
 * The one error tree of model-provider calls. Every failure of {@link postJson} is one of
 * these five kinds, so callers classify by class (a timeout is not a broken provider) and by
 * {@link ProviderError.retryable}, never by parsing messages. A client may name the kinds
 * after itself by subclassing them (the embedder's `EmbedderHttpError`, …): the
 * classification stays here.
 */

/** Base class of every error a provider call throws. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  /** True when the same request may succeed if sent again later (408, 429, 5xx, network, timeout). */
  readonly retryable: boolean;
  constructor(message: string, opts: { retryable: boolean; cause?: unknown }) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.retryable = opts.retryable;
  }
}

/** The provider answered with a non-2xx status (retryable for 408, 429 and 5xx). */
export class ProviderHttpError extends ProviderError {
  override name = 'ProviderHttpError';
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** First 500 characters of the body (for logs only, never sent to callers). */
    readonly body: string,
    message = `provider answered HTTP ${status}`,
  ) {
    super(message, { retryable: status === 408 || status === 429 || status >= 500 });
  }
}

/** The provider did not answer within the fuse (retryable). */
export class ProviderTimeoutError extends ProviderError {
  override name = 'ProviderTimeoutError';
  constructor(
    /** The fuse that expired, in ms. */
    readonly timeoutMs: number,
    message = `provider did not answer within ${timeoutMs} ms`,
  ) {
    super(message, { retryable: true });
  }
}

/** The caller's signal aborted the call (its deadline, a client cancel, server shutdown); not retryable. */
export class ProviderAbortedError extends ProviderError {
  override name = 'ProviderAbortedError';
  constructor(
    /** The signal's abort reason. */
    readonly reason: unknown,
    message = 'provider call aborted by the caller',
  ) {
    super(message, { retryable: false, cause: reason });
  }
}

/** The provider could not be reached (refused, reset, DNS); retryable. */
export class ProviderUnavailableError extends ProviderError {
  override name = 'ProviderUnavailableError';
  constructor(cause: unknown, message = `provider unreachable: ${cause instanceof Error ? cause.message : String(cause)}`) {
    super(message, { retryable: true, cause });
  }
}

/** The provider answered 2xx with a body the client cannot use; not retryable. */
export class ProviderResponseError extends ProviderError {
  override name = 'ProviderResponseError';
  constructor(
    /** What is wrong with the body. */
    readonly problem: string,
    message = `invalid provider response: ${problem}`,
  ) {
    super(message, { retryable: false });
  }
}

/**
 * The classes {@link postJson} throws, one per kind: the `Provider*Error` classes by
 * default, or a client's own subclasses of them (same constructor arguments).
 */
export interface ProviderErrorClasses {
  /** Non-2xx answer. */
  http: new (status: number, body: string) => ProviderHttpError;
  /** The fuse expired. */
  timeout: new (timeoutMs: number) => ProviderTimeoutError;
  /** The caller's signal aborted. */
  aborted: new (reason: unknown) => ProviderAbortedError;
  /** Network failure. */
  unavailable: new (cause: unknown) => ProviderUnavailableError;
  /** Unusable 2xx body. */
  response: new (problem: string) => ProviderResponseError;
}

/** The default {@link ProviderErrorClasses}. */
export const PROVIDER_ERRORS: ProviderErrorClasses = Object.freeze({
  http: ProviderHttpError,
  timeout: ProviderTimeoutError,
  aborted: ProviderAbortedError,
  unavailable: ProviderUnavailableError,
  response: ProviderResponseError,
});
