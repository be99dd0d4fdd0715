/**
 * Cross-encoder rerank against a `/rerank` endpoint with plain fetch. Requests follow the
 * configured style (Jina/Cohere `documents`, or TEI `texts`); responses are accepted in
 * either common shape: `{results:[{index, relevance_score}]}` (Jina, Cohere, vLLM) or a bare
 * `[{index, score}]` array (TEI).
 */
import type { RerankEndpoint } from '../config';
import { postJson, ProviderResponseError } from '@ctxmesh/provider';

/** One scored document, as the provider returned it (raw score, any scale). */
export interface RawRerankResult {
  /** Index into the request's documents. */
  index: number;
  /** Provider score. */
  score: number;
}

/** Per-call options of {@link RerankClient.rerank}. */
export interface RerankCallOptions {
  /** Fuse in ms. */
  timeoutMs: number;
  /** Caller's signal (deadline, cancel). */
  signal?: AbortSignal;
}

/**
 * Parse a rerank response for a request of `count` documents.
 * @returns one result per scored document (documents the provider left out are absent)
 * @throws ProviderResponseError on an unknown shape, an index outside `0..count-1`, a
 *   repeated index or a non-finite score
 */
export function parseRerankResponse(body: unknown, count: number): RawRerankResult[] {
  let items: unknown;
  if (Array.isArray(body)) items = body;
  else if (body && typeof body === 'object') {
    const b = body as { results?: unknown; data?: unknown };
    items = Array.isArray(b.results) ? b.results : b.data;
  }
  if (!Array.isArray(items)) throw new ProviderResponseError('expected {results:[…]} or […]');
  const seen = new Set<number>();
  const out: RawRerankResult[] = [];
  for (const it of items) {
    if (!it || typeof it !== 'object') throw new ProviderResponseError('result is not an object');
    const r = it as { index?: unknown; relevance_score?: unknown; score?: unknown };
    const index = r.index;
    const score = typeof r.relevance_score === 'number' ? r.relevance_score : r.score;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count) {
      throw new ProviderResponseError(`index ${JSON.stringify(index)} outside 0..${count - 1}`);
    }
    if (seen.has(index)) throw new ProviderResponseError(`index ${index} repeated`);
    if (typeof score !== 'number' || !Number.isFinite(score)) throw new ProviderResponseError(`score of index ${index} is not a number`);
    seen.add(index);
    out.push({ index, score });
  }
  return out;
}

/** A client of one rerank endpoint. */
export class RerankClient {
  constructor(
    /** Endpoint, key, model and body style. */
    readonly endpoint: RerankEndpoint,
    private readonly fetchImpl?: typeof fetch,
  ) {}

  /**
   * The exact request body: `{model, query, documents, top_n}` (top_n = every document, so
   * the caller gets a score for each), or for TEI `{query, texts, raw_scores: false}`
   * (normalised scores, one per text).
   */
  requestBody(query: string, texts: string[]): Record<string, unknown> {
    if (this.endpoint.style === 'tei') return { query, texts, raw_scores: false };
    return { model: this.endpoint.model, query, documents: texts, top_n: texts.length };
  }

  /**
   * Score `texts` against `query` (one HTTP request, no retries).
   * @throws ProviderError subclasses
   */
  async rerank(query: string, texts: string[], opts: RerankCallOptions): Promise<RawRerankResult[]> {
    const body = await postJson({
      url: this.endpoint.url,
      apiKey: this.endpoint.apiKey,
      body: this.requestBody(query, texts),
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      fetch: this.fetchImpl,
    });
    return parseRerankResponse(body, texts.length);
  }
}
