/**
 * @ctxmesh/provider: the one HTTP client of OpenAI-compatible model providers, shared by the
 * embedder (`/v1/embeddings`) and the rewrite service (chat completions, rerank): `postJson`
 * under a fuse and the caller's signal, `openAiUrl` for the configured endpoints, and one
 * error tree (`ProviderError` and its five kinds).
 */
export * from './errors';
export * from './post-json';
