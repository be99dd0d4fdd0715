import {
  openAiUrl,
  postJson,
  ProviderAbortedError,
  ProviderError,
  ProviderHttpError,
  ProviderResponseError,
  ProviderTimeoutError,
  ProviderUnavailableError,
  type ProviderErrorClasses,
} from '@ctxmesh/provider';
import { type Embedder, type EmbedOptions, l2normalize } from './embedder';

/*
 * The embedder's errors are the provider client's one error tree (@ctxmesh/provider), named
 * after the embedder: each class below only gives its kind the embedder's name and message;
 * what is retryable, and which fields an error carries, is decided there.
 */

/** Base class of every error the {@link HttpEmbedder} throws: the provider client's {@link ProviderError}. */
export const EmbedderError = ProviderError;
/** Base class of every error the {@link HttpEmbedder} throws. */
export type EmbedderError = ProviderError;

/** The endpoint answered with a non-2xx HTTP status (retryable for 408, 429 and 5xx). */
export class EmbedderHttpError extends ProviderHttpError {
  override name = 'EmbedderHttpError';
  constructor(
    /** HTTP status code. */
    status: number,
    /** First 500 characters of the response body (for logs; never forward it to clients). */
    body: string,
  ) {
    super(status, body, `embeddings endpoint answered HTTP ${status}`);
  }
}

/** The request did not complete within the configured timeout. */
export class EmbedderTimeoutError extends ProviderTimeoutError {
  override name = 'EmbedderTimeoutError';
  constructor(timeoutMs: number) {
    super(timeoutMs, `embeddings request timed out after ${timeoutMs} ms`);
  }
}

/** The caller's signal aborted the request (deadline or cancellation upstream). */
export class EmbedderAbortedError extends ProviderAbortedError {
  override name = 'EmbedderAbortedError';
  constructor(cause?: unknown) {
    super(cause, 'embeddings request aborted by the caller');
  }
}

/** The endpoint could not be reached (DNS, refused connection, reset). */
export class EmbedderUnavailableError extends ProviderUnavailableError {
  override name = 'EmbedderUnavailableError';
  constructor(cause: unknown) {
    super(cause, `embeddings endpoint unreachable: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** The endpoint answered 2xx with a body that is not a valid embeddings response. */
export class EmbedderResponseError extends ProviderResponseError {
  override name = 'EmbedderResponseError';
  constructor(problem: string) {
    super(problem, `invalid embeddings response: ${problem}`);
  }
}

/** What {@link postJson} throws for the embedder. */
const EMBEDDER_ERRORS: ProviderErrorClasses = Object.freeze({
  http: EmbedderHttpError,
  timeout: EmbedderTimeoutError,
  aborted: EmbedderAbortedError,
  unavailable: EmbedderUnavailableError,
  response: EmbedderResponseError,
});

/** Options of the {@link HttpEmbedder}. */
export interface HttpEmbedderOptions {
  /**
   * Endpoint: a full `…/embeddings` URL is used as is; a base ending in `/v1` gets
   * `/embeddings` appended; any other base gets `/v1/embeddings`.
   */
  url: string;
  /** API key sent as `Authorization: Bearer <key>`; omitted when empty. */
  apiKey?: string;
  /** Model name sent in every request. */
  model: string;
  /** Expected vector length; a response of any other length is an {@link EmbedderResponseError}. */
  dimension: number;
  /**
   * Also send `dimensions: <dimension>` (for models with adjustable output size, e.g.
   * OpenAI text-embedding-3-*). @default false
   */
  sendDimensions?: boolean;
  /** Texts per request. @default 64 */
  batchSize?: number;
  /** Requests in flight at once for a large batch. @default 2 */
  concurrency?: number;
  /** Per-request timeout in milliseconds. @default 10000 */
  timeoutMs?: number;
  /** Retries of a retryable failure (with 100 ms · 2^n backoff). @default 0 */
  maxRetries?: number;
  /** L2-normalise returned vectors, so dot products are cosines. @default true */
  normalize?: boolean;
  /** Identifier override. @default `http:<model>:<dimension>` */
  id?: string;
  /** fetch implementation (tests). @default globalThis.fetch */
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: Array<{ embedding?: unknown; index?: unknown }>;
}

/** Resolve the endpoint URL as documented on {@link HttpEmbedderOptions.url}. */
export function embeddingsEndpoint(url: string): string {
  return openAiUrl(url, 'embeddings');
}

/**
 * Embedder for any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, vLLM, TEI, Ollama…),
 * using plain `fetch`. Large inputs are split into batches of `batchSize` sent with bounded
 * concurrency; results come back in input order. Every failure is a typed {@link EmbedderError}.
 */
export class HttpEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly supportsImages = false;
  private readonly endpoint: string;
  private readonly opts: Required<Omit<HttpEmbedderOptions, 'apiKey' | 'id' | 'fetch'>> & { apiKey: string };
  private readonly fetchImpl: typeof fetch;

  constructor(opts: HttpEmbedderOptions) {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    if (!opts.model) throw new RangeError('model is required');
    this.endpoint = embeddingsEndpoint(opts.url);
    this.dimension = opts.dimension;
    this.id = opts.id ?? `http:${opts.model}:${opts.dimension}`;
    this.fetchImpl = opts.fetch ?? globalThis.fetch;
    this.opts = {
      url: opts.url,
      apiKey: opts.apiKey ?? '',
      model: opts.model,
      dimension: opts.dimension,
      sendDimensions: opts.sendDimensions ?? false,
      batchSize: Math.max(1, opts.batchSize ?? 64),
      concurrency: Math.max(1, opts.concurrency ?? 2),
      timeoutMs: Math.max(1, opts.timeoutMs ?? 10_000),
      maxRetries: Math.max(0, opts.maxRetries ?? 0),
      normalize: opts.normalize ?? true,
    };
  }

  /**
   * Embed `texts` (batched). @returns vectors in input order
   * @throws EmbedderError subclasses; the first failing batch fails the whole call
   */
  async embed(texts: string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    const out = new Array<Float32Array>(texts.length);
    const batches: Array<[number, string[]]> = [];
    for (let i = 0; i < texts.length; i += this.opts.batchSize) batches.push([i, texts.slice(i, i + this.opts.batchSize)]);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < batches.length) {
        const [start, batch] = batches[next++];
        const vecs = await this.withRetries(batch, options.signal);
        for (let j = 0; j < vecs.length; j++) out[start + j] = vecs[j];
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.concurrency, batches.length) }, worker));
    return out;
  }

  private async withRetries(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.request(batch, signal);
      } catch (err) {
        if (!(err instanceof ProviderError) || !err.retryable || attempt >= this.opts.maxRetries || signal?.aborted) throw err;
        await new Promise((r) => setTimeout(r, 100 * 2 ** attempt));
      }
    }
  }

  private async request(batch: string[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    const body: Record<string, unknown> = { model: this.opts.model, input: batch, encoding_format: 'float' };
    if (this.opts.sendDimensions) body.dimensions = this.dimension;
    const parsed = (await postJson({
      url: this.endpoint,
      apiKey: this.opts.apiKey,
      body,
      timeoutMs: this.opts.timeoutMs,
      signal,
      fetch: this.fetchImpl,
      errors: EMBEDDER_ERRORS,
    })) as EmbeddingsResponse | null;
    if (!parsed || !Array.isArray(parsed.data)) throw new EmbedderResponseError('missing data array');
    if (parsed.data.length !== batch.length) throw new EmbedderResponseError(`expected ${batch.length} embeddings, got ${parsed.data.length}`);
    const out = new Array<Float32Array>(batch.length);
    parsed.data.forEach((item, pos) => {
      // OpenAI returns `index`; servers that omit it return input order.
      const idx = typeof item.index === 'number' ? item.index : pos;
      if (!Number.isInteger(idx) || idx < 0 || idx >= batch.length || out[idx]) throw new EmbedderResponseError(`bad index ${String(item.index)}`);
      const emb = item.embedding;
      if (!Array.isArray(emb) || emb.length !== this.dimension) {
        throw new EmbedderResponseError(`embedding ${idx} has length ${Array.isArray(emb) ? emb.length : 'n/a'}, expected ${this.dimension}`);
      }
      const v = new Float32Array(this.dimension);
      for (let i = 0; i < emb.length; i++) {
        const x = emb[i];
        if (typeof x !== 'number' || !Number.isFinite(x)) throw new EmbedderResponseError(`embedding ${idx} has a non-numeric value`);
        v[i] = x;
      }
      out[idx] = this.opts.normalize ? l2normalize(v) : v;
    });
    return out;
  }
}
