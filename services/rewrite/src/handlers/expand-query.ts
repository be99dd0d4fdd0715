/** RewriteService.ExpandQuery: context-contract §8.1, failing closed to the original query. */
import type { rewrite } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { fuseMs } from '../domain/fuse';
import { buildExpansionPrompt } from '../domain/prompts';
import { mergeQueries, parsePlannedQueries } from '../domain/queries';
import { failureOf, type HandlerDeps } from './deps';

/**
 * ExpandQuery: `off` (original only) when intent analysis is disabled, no model is
 * configured, the query is blank or the session gave no context; otherwise one model call
 * under min(expansion fuse, `timeout_ms`, the call's deadline) → `used` with the original
 * first and at most three queries (even when nothing was added); any error or timeout →
 * `failed` with the original only. `reason` says why it was off or failed.
 */
export function expandQueryHandler(deps: HandlerDeps): Handler<rewrite.ExpandQueryRequest, rewrite.ExpandQueryResponse> {
  return async (req, ctx) => {
    const original = [req.query];
    const off = (reason: string) => ({ status: 'off', queries: original, reason });
    if (!deps.settings.enableIntent) return off('INTENT_DISABLED');
    if (!deps.chat) return off('NOT_CONFIGURED');
    if (!req.query.trim()) return off('EMPTY_QUERY');
    if (req.messages.length === 0 && !req.archiveOverview.trim()) return off('NO_CONTEXT');
    const timeoutMs = fuseMs(deps.settings.expansionTimeoutMs, req.timeoutMs, ctx.budget.remainingMs());
    try {
      const out = await deps.chat.complete(buildExpansionPrompt(req.query, req.messages, req.archiveOverview), {
        timeoutMs,
        signal: ctx.budget.signal,
      });
      return { status: 'used', queries: mergeQueries(req.query, parsePlannedQueries(out.content)), reason: '' };
    } catch (err) {
      return { status: 'failed', queries: original, reason: failureOf(err, ctx.log, 'query expansion').reason };
    }
  };
}
