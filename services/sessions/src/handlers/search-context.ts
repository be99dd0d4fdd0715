/** SessionsService.SearchContext: search blocks and hidden originals (read-only). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. An empty query → no hits; `limit` ≤ 0 → 5. */
export function searchContextHandler(deps: SessionsHandlerDeps): Handler<sessions.SearchContextRequest, sessions.SearchContextResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.searchContext(key, { query: req.query, limit: req.limit });
      return {
        hits: res.hits.map((h) => ({ kind: h.kind, blockId: h.blockId, seq: h.seq, role: h.role ?? '', score: h.score, preview: h.preview })),
      };
    });
}
