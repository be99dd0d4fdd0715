import {
  PROVIDER_ERRORS,
  ProviderAbortedError,
  ProviderError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnavailableError,
} from './errors';
import { openAiUrl, postJson } from './post-json';

/** A fetch that never answers but rejects with the signal's reason when aborted, as undici does. */
const hangingFetch = (seen: { signal?: AbortSignal }) =>
  ((_url: string, init: RequestInit) =>
    new Promise((_resolve, reject) => {
      seen.signal = init.signal ?? undefined;
      init.signal?.addEventListener('abort', () => reject(init.signal!.reason));
    })) as unknown as typeof fetch;

const answering = (status: number, text: string, seen?: { init?: RequestInit; url?: string }) =>
  (async (url: string, init: RequestInit) => {
    if (seen) {
      seen.url = url;
      seen.init = init;
    }
    return new Response(text, { status });
  }) as unknown as typeof fetch;

describe('postJson', () => {
  it('POSTs JSON with a bearer key and parses the answer', async () => {
    const seen: { init?: RequestInit; url?: string } = {};
    const out = await postJson({ url: 'http://p/x', apiKey: 'k', body: { a: 1 }, timeoutMs: 1000, fetch: answering(200, '{"ok":true}', seen) });
    expect(out).toEqual({ ok: true });
    expect(seen.url).toBe('http://p/x');
    expect(seen.init?.method).toBe('POST');
    expect(seen.init?.body).toBe('{"a":1}');
    expect(seen.init?.headers).toEqual({ 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer k' });
  });

  it('sends no authorization header without a key', async () => {
    const seen: { init?: RequestInit } = {};
    await postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 1000, fetch: answering(200, '{}', seen) });
    expect(seen.init?.headers).not.toHaveProperty('authorization');
  });

  it('aborts the request and throws ProviderTimeoutError when the fuse expires', async () => {
    const seen: { signal?: AbortSignal } = {};
    const err = await postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 20, fetch: hangingFetch(seen) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderTimeoutError);
    expect((err as ProviderTimeoutError).timeoutMs).toBe(20);
    expect(seen.signal?.aborted).toBe(true);
  });

  it('throws ProviderAbortedError carrying the reason when the caller aborts first', async () => {
    const caller = new AbortController();
    const seen: { signal?: AbortSignal } = {};
    const p = postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 60_000, signal: caller.signal, fetch: hangingFetch(seen) });
    // What a Budget aborts with when its deadline passes (a CtxError there; any value here).
    const reason = Object.assign(new Error('deadline exceeded'), { code: 4 });
    caller.abort(reason);
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderAbortedError);
    expect((err as ProviderAbortedError).reason).toBe(reason);
    expect(seen.signal?.aborted).toBe(true);
  });

  it('sends nothing when the caller is already aborted or no time is left', async () => {
    let calls = 0;
    const counting = (async () => {
      calls++;
      return new Response('{}');
    }) as unknown as typeof fetch;
    const gone = new AbortController();
    gone.abort(new Error('x'));
    await expect(postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 100, signal: gone.signal, fetch: counting })).rejects.toBeInstanceOf(ProviderAbortedError);
    await expect(postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 0, fetch: counting })).rejects.toBeInstanceOf(ProviderTimeoutError);
    expect(calls).toBe(0);
  });

  it('throws ProviderHttpError with the status and the start of the body on non-2xx', async () => {
    const err = await postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 1000, fetch: answering(503, 'x'.repeat(900)) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect((err as ProviderHttpError).status).toBe(503);
    expect((err as ProviderHttpError).body).toHaveLength(500);
  });

  it('throws ProviderResponseError for a body that is not JSON', async () => {
    await expect(postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 1000, fetch: answering(200, 'not json') })).rejects.toBeInstanceOf(ProviderResponseError);
  });

  it('throws ProviderUnavailableError when fetch itself fails', async () => {
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as unknown as typeof fetch;
    const err = await postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 1000, fetch: failing }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as Error).name).toBe('ProviderUnavailableError');
  });
});

describe('postJson - who aborted first', () => {
  /** A fetch that rejects only when told to, after whatever aborts its signal. */
  function heldFetch() {
    const held: { signal?: AbortSignal; reject?: (e: unknown) => void } = {};
    const fetchImpl = ((_url: string, init: RequestInit) =>
      new Promise((_resolve, reject) => {
        held.signal = init.signal ?? undefined;
        held.reject = reject;
      })) as unknown as typeof fetch;
    const aborted = () => new Promise<void>((r) => (held.signal!.aborted ? r() : held.signal!.addEventListener('abort', () => r(), { once: true })));
    return { held, fetchImpl, aborted };
  }

  it('the fuse, then the caller - ProviderTimeoutError', async () => {
    const { held, fetchImpl, aborted } = heldFetch();
    const caller = new AbortController();
    const p = postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 5, signal: caller.signal, fetch: fetchImpl }).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
    await aborted();
    caller.abort(new Error('deadline'));
    held.reject!(new TypeError('aborted'));
    expect(await p).toBeInstanceOf(ProviderTimeoutError);
  });

  it('the caller, then the fuse - ProviderAbortedError', async () => {
    const { held, fetchImpl } = heldFetch();
    const caller = new AbortController();
    const p = postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 5, signal: caller.signal, fetch: fetchImpl }).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
    const reason = new Error('deadline');
    caller.abort(reason);
    // Let the fuse fire as well before fetch gives up.
    await new Promise((r) => setTimeout(r, 20));
    held.reject!(new TypeError('aborted'));
    const err = await p;
    expect(err).toBeInstanceOf(ProviderAbortedError);
    expect((err as ProviderAbortedError).reason).toBe(reason);
  });
});

describe('ProviderError kinds', () => {
  it.each([
    ['HTTP 408', true, new ProviderHttpError(408, '')],
    ['HTTP 429', true, new ProviderHttpError(429, '')],
    ['HTTP 500', true, new ProviderHttpError(500, '')],
    ['HTTP 503', true, new ProviderHttpError(503, '')],
    ['HTTP 400', false, new ProviderHttpError(400, '')],
    ['HTTP 404', false, new ProviderHttpError(404, '')],
    ['a timeout', true, new ProviderTimeoutError(10)],
    ['a refused connection', true, new ProviderUnavailableError(new Error('ECONNREFUSED'))],
    ['a caller abort', false, new ProviderAbortedError(new Error('x'))],
    ['an unusable body', false, new ProviderResponseError('no data')],
  ])('%s - retryable %p', (_what, retryable, err) => {
    expect(err).toBeInstanceOf(ProviderError);
    expect(err.retryable).toBe(retryable);
  });

  it('throws a client’s own subclasses when given them', async () => {
    class MyHttpError extends ProviderHttpError {
      override name = 'MyHttpError';
    }
    const err = await postJson({ url: 'http://p', apiKey: '', body: {}, timeoutMs: 1000, fetch: answering(502, 'bad gateway'), errors: { ...PROVIDER_ERRORS, http: MyHttpError } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(MyHttpError);
    expect(err).toMatchObject({ name: 'MyHttpError', status: 502, body: 'bad gateway', retryable: true });
  });
});

describe('openAiUrl', () => {
  it.each([
    ['http://h:1/v1', 'embeddings', 'http://h:1/v1/embeddings'],
    ['http://h:1/', 'embeddings', 'http://h:1/v1/embeddings'],
    ['http://h:1/v1/embeddings', 'embeddings', 'http://h:1/v1/embeddings'],
    ['http://h:1/v1/', 'chat/completions', 'http://h:1/v1/chat/completions'],
    ['http://h:1', 'chat/completions', 'http://h:1/v1/chat/completions'],
    ['http://h:1/openai/v1/chat/completions//', 'chat/completions', 'http://h:1/openai/v1/chat/completions'],
  ])('%s + %s = %s', (url, route, want) => {
    expect(openAiUrl(url, route)).toBe(want);
  });
});
