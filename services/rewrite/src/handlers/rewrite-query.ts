/** RewriteService.RewriteQuery: retrieve's optional query-rewrite stage. */
import type { rewrite } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { fuseMs } from '../domain/fuse';
import { buildQueryRewritePrompt } from '../domain/prompts';
import { mergeQueries, parsePlannedQueries } from '../domain/queries';
import { failureOf, type HandlerDeps } from './deps';

/**
 * RewriteQuery: with a model, one call under min(query-rewrite fuse, `timeout_ms`, the
 * call's deadline) asking for up to two alternative queries → `ok` with the original first
 * (at most three); error → `failed`, fuse or deadline → `timeout`, both with the original
 * only. No model, or a blank query → `off` with the original only (no call).
 */
export function rewriteQueryHandler(deps: HandlerDeps): Handler<rewrite.RewriteQueryRequest, rewrite.RewriteQueryResponse> {
  return async (req, ctx) => {
    if (!deps.chat || !req.query.trim()) return { queries: [req.query], status: 'off' };
    const timeoutMs = fuseMs(deps.settings.queryRewriteTimeoutMs, req.timeoutMs, ctx.budget.remainingMs());
    try {
      const out = await deps.chat.complete(buildQueryRewritePrompt(req.query), { timeoutMs, signal: ctx.budget.signal });
      return { queries: mergeQueries(req.query, parsePlannedQueries(out.content)), status: 'ok' };
    } catch (err) {
      return { queries: [req.query], status: failureOf(err, ctx.log, 'query rewrite').status };
    }
  };
}
