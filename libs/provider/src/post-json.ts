/**
 * One JSON POST to an OpenAI-compatible model provider with plain `fetch`, under a fuse (a
 * timeout of its own) and the caller's abort signal. Every failure is one of the typed
 * {@link ProviderError} kinds.
 */
import { PROVIDER_ERRORS, ProviderError, type ProviderErrorClasses } from './errors';

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
  /** The classes thrown, for a client that names its errors. @default PROVIDER_ERRORS */
  errors?: ProviderErrorClasses;
}

/**
 * POST `body` as JSON and parse the JSON answer. Exactly one request: retrying is the
 * caller's policy (see {@link ProviderError.retryable}).
 * @returns the parsed body
 * @throws ProviderTimeoutError when the fuse expires first (the request is aborted, so the
 *   provider sees its connection close), ProviderAbortedError when `signal` aborts first,
 *   ProviderHttpError on non-2xx, ProviderUnavailableError on network failure,
 *   ProviderResponseError when the body is not JSON (or `opts.errors`' subclasses of them)
 */
export async function postJson(opts: PostJsonOptions): Promise<unknown> {
  const errors = opts.errors ?? PROVIDER_ERRORS;
  if (opts.signal?.aborted) throw new errors.aborted(opts.signal.reason);
  if (opts.timeoutMs <= 0) throw new errors.timeout(0);
  const ctrl = new AbortController();
  // Whichever aborts first names the failure: both may have fired by the time fetch rejects.
  let first: 'fuse' | 'caller' | undefined;
  const timer = setTimeout(() => {
    first ??= 'fuse';
    ctrl.abort(new errors.timeout(opts.timeoutMs));
  }, opts.timeoutMs);
  const onAbort = () => {
    first ??= 'caller';
    ctrl.abort(opts.signal?.reason);
  };
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
    if (!res.ok) throw new errors.http(res.status, text.slice(0, 500));
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new errors.response(`body is not JSON (${JSON.stringify(text.slice(0, 80))})`);
    }
  } catch (err) {
    if (err instanceof ProviderError) throw err;
    if (first === 'fuse') throw new errors.timeout(opts.timeoutMs);
    if (first === 'caller') throw new errors.aborted(opts.signal?.reason);
    throw new errors.unavailable(err);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The URL of an OpenAI-style route (`embeddings`, `chat/completions`) from what a user
 * configures: a URL already ending in the route is used as is; a base ending in `/v1` gets
 * the route appended; any other base gets `/v1/<route>`. Trailing slashes are ignored.
 */
export function openAiUrl(url: string, route: string): string {
  const u = url.replace(/\/+$/, '');
  if (u.endsWith(`/${route}`)) return u;
  if (u.endsWith('/v1')) return `${u}/${route}`;
  return `${u}/v1/${route}`;
}
