/** SessionsService.GetSearchContext: what query expansion reads from a session (context-contract §8.1). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. An unknown session without `create` is `exists: false`, not an error. */
export function getSearchContextHandler(deps: SessionsHandlerDeps): Handler<sessions.GetSearchContextRequest, sessions.GetSearchContextResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.getSearchContext(key, { create: req.create, limit: req.limit });
      return {
        exists: res.exists,
        created: res.created,
        messages: res.messages.map((m) => ({ role: m.role, content: m.content })),
        archiveOverview: res.archiveOverview,
      };
    });
}
