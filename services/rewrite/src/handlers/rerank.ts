/** RewriteService.Rerank: cross-encoder scores from a `/rerank` endpoint. */
import type { rewrite } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { fuseMs } from '../domain/fuse';
import { toRelevances } from '../domain/rerank';
import { failureOf, type HandlerDeps } from './deps';

/**
 * Rerank: one call under min(rerank fuse, `timeout_ms`, the call's deadline) → `ok` with
 * one score in 0..1 per document the provider scored, best first; error → `failed`, fuse or
 * deadline → `timeout`, both with no scores (the caller keeps its own order). Never throws
 * for a provider problem. No rerank endpoint → `off`; no documents → `ok` with no call.
 */
export function rerankHandler(deps: HandlerDeps): Handler<rewrite.RerankRequest, rewrite.RerankResponse> {
  return async (req, ctx) => {
    if (!deps.reranker) return { scores: [], status: 'off' };
    if (req.documents.length === 0) return { scores: [], status: 'ok' };
    const timeoutMs = fuseMs(deps.settings.rerankTimeoutMs, req.timeoutMs, ctx.budget.remainingMs());
    try {
      const raw = await deps.reranker.rerank(
        req.query,
        req.documents.map((d) => d.text),
        { timeoutMs, signal: ctx.budget.signal },
      );
      return { scores: toRelevances(raw).map((r) => ({ id: req.documents[r.index].id, score: r.score })), status: 'ok' };
    } catch (err) {
      return { scores: [], status: failureOf(err, ctx.log, 'rerank').status };
    }
  };
}
