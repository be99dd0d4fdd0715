/**
 * One JSON POST to a model provider with plain `fetch`, under a fuse (a timeout of its own)
 * and the caller's abort signal. Every failure is a typed {@link ProviderError}, so handlers
 * can tell a timeout from a broken provider without parsing messages.
 */

/** Base class of every error a provider call throws. */
export class ProviderError extends Error {
  override name = 'ProviderError';
  constructor(message: string, opts?: { cause?: unknown }) {
    super(message, opts?.cause === undefined ? undefined : { cause: opts.cause });
  }
}

/** The provider did not answer within the fuse. */
export class ProviderTimeoutError extends ProviderError {
  override name = 'ProviderTimeoutError';
  constructor(
    /** The fuse that expired, in ms. */
    readonly timeoutMs: number,
  ) {
    super(`provider did not answer within ${timeoutMs} ms`);
  }
}

/** The caller's signal aborted the call (its deadline, a client cancel, server shutdown). */
export class ProviderAbortedError extends ProviderError {
  override name = 'ProviderAbortedError';
  constructor(
    /** The signal's abort reason. */
    readonly reason: unknown,
  ) {
    super('provider call aborted by the caller', { cause: reason });
  }
}

/** The provider answered with a non-2xx status. */
export class ProviderHttpError extends ProviderError {
  override name = 'ProviderHttpError';
  constructor(
    /** HTTP status. */
    readonly status: number,
    /** First 500 characters of the body (for logs only, never sent to callers). */
    readonly body: string,
  ) {
    super(`provider answered HTTP ${status}`);
  }
}

/** The provider could not be reached (refused, reset, DNS). */
export class ProviderUnavailableError extends ProviderError {
  override name = 'ProviderUnavailableError';
  constructor(cause: unknown) {
    super(`provider unreachable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The provider answered 2xx with a body this client cannot use. */
export class ProviderResponseError extends ProviderError {
  override name = 'ProviderResponseError';
  constructor(message: string) {
    super(`invalid provider response: ${message}`);
  }
}

/** Options of {@link postJson}. */
export interface PostJsonOptions {
  /** Endpoint URL. */
  url: string;
  /** Bearer key; no `Authorization` header when empty. */
  apiKey: string;
  /** JSON body. */
  body: unknown;
  /** Fuse in ms: the request is aborted after it (a value ≤ 0 fails at once, no request sent). */
  timeoutMs: number;
  /** Caller's signal (the request's deadline and cancellation). */
  signal?: AbortSignal;
  /** fetch implementation (tests). @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * POST `body` as JSON and parse the JSON answer.
 * @returns the parsed body
 * @throws ProviderTimeoutError when the fuse expires (the request is aborted, so the
 *   provider sees its connection close), ProviderAbortedError when `signal` aborts first,
 *   ProviderHttpError on non-2xx, ProviderUnavailableError on network failure,
 *   ProviderResponseError when the body is not JSON
 */
export async function postJson(opts: PostJsonOptions): Promise<unknown> {
  if (opts.signal?.aborted) throw new ProviderAbortedError(opts.signal.reason);
  if (opts.timeoutMs <= 0) throw new ProviderTimeoutError(0);
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort(new ProviderTimeoutError(opts.timeoutMs));
  }, opts.timeoutMs);
  const onAbort = () => ctrl.abort(opts.signal?.reason);
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  try {
    // The same signal covers the body read: a provider that sends headers and then stalls
    // is cut by the fuse as well.
    const res = await (opts.fetch ?? globalThis.fetch)(opts.url, {
      method: 'POST',
      headers,
      body: JSON.stringify(opts.body),
      signal: ctrl.signal,
    });
    const text = await res.text();
    if (!res.ok) throw new ProviderHttpError(res.status, text.slice(0, 500));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new ProviderResponseError(`body is not JSON (${JSON.stringify(text.slice(0, 80))})`);
    }
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (timedOut) throw new ProviderTimeoutError(opts.timeoutMs);
    if (opts.signal?.aborted) throw new ProviderAbortedError(opts.signal.reason);
    throw new ProviderUnavailableError(err);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
