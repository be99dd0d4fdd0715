/**
 * createServer(deps): the rewrite service, the mesh's model boundary. No env, no listening,
 * no side effects on import.
 */
import { rewrite } from '@ctxmesh/proto';
import { implement, type Handlers, type MountedService } from '@ctxmesh/rpc';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { ChatClient } from './clients/chat';
import { RerankClient } from './clients/rerank';
import type { RewriteSettings } from './config';
import { expandQueryHandler } from './handlers/expand-query';
import { rerankHandler } from './handlers/rerank';
import { rewriteDigestHandler } from './handlers/rewrite-digest';
import { rewriteQueryHandler } from './handlers/rewrite-query';

/** Dependencies of the rewrite service. */
export interface RewriteDeps {
  /** Endpoints and fuses (see `loadRewriteConfig`, `defaultSettings`). */
  settings: RewriteSettings;
  /** Logger. */
  log: Logger;
  /** Aborted when the server is forced down. */
  shutdownSignal?: AbortSignal;
  /** fetch used for provider calls (tests). @default globalThis.fetch */
  fetch?: typeof fetch;
}

/** The four handlers, typed against the generated service. */
export type RewriteHandlers = Handlers<rewrite.RewriteServiceServer>;

/**
 * Handlers callable in process (the all-in-one launcher, benchmarks): each takes
 * `(req, {budget, log, …})` and answers with a status instead of throwing for a provider problem.
 */
export function createHandlers(deps: Pick<RewriteDeps, 'settings' | 'fetch'>): RewriteHandlers {
  const { settings } = deps;
  const hd = {
    settings,
    chat: settings.llm ? new ChatClient(settings.llm, deps.fetch) : null,
    reranker: settings.rerank ? new RerankClient(settings.rerank, deps.fetch) : null,
  };
  return {
    expandQuery: expandQueryHandler(hd),
    rewriteDigest: rewriteDigestHandler(hd),
    rewriteQuery: rewriteQueryHandler(hd),
    rerank: rerankHandler(hd),
  };
}

/** Build the mounted service; `handlers` are the same functions the service runs. */
export function createServer(deps: RewriteDeps): MountedService & { handlers: RewriteHandlers } {
  const handlers = createHandlers(deps);
  return {
    name: 'ctxmesh.rewrite.v1.RewriteService',
    definition: rewrite.RewriteServiceService,
    implementation: implement<rewrite.RewriteServiceServer>(rewrite.RewriteServiceService, handlers, {
      domain: 'rewrite',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      observe: observeRpc,
    }),
    handlers,
  };
}
