/**
 * @ctxmesh/rewrite: the model boundary. Query expansion and digest rewrite against an
 * OpenAI-compatible chat endpoint (context-contract §8), retrieve's query rewrite and
 * cross-encoder rerank (retrieve-contract "Stages"), an extractive digest without a model.
 */
export { createServer, createHandlers, type RewriteDeps, type RewriteHandlers } from './server';
export {
  loadRewriteConfig,
  defaultSettings,
  settingsOf,
  chatCompletionsUrl,
  rerankUrl,
  schema,
  type RewriteConfig,
  type RewriteSettings,
  type ChatEndpoint,
  type RerankEndpoint,
} from './config';
export { startRewrite, type StartOptions } from './start';
export { main } from './main';
export { extractiveDigest, splitSentences, EXTRACTIVE_SCORE_FLOOR } from './domain/extractive';
export {
  ProviderError,
  ProviderTimeoutError,
  ProviderAbortedError,
  ProviderHttpError,
  ProviderUnavailableError,
  ProviderResponseError,
} from '@ctxmesh/provider';
