/** SessionsService.RecoverOverflow: rescue a request the provider refused for overflowing the window. */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, routeOf, sessionKeyOf, windowOf, type SessionsHandlerDeps } from './request';

/**
 * Build the handler. Every `surface_error` reason is a successful answer; a missing
 * `agent_id` or `failure.code` (or a bad window) → INVALID_ARGUMENT; an unknown session →
 * NOT_FOUND. A repeated `request_id` returns the first answer and writes nothing.
 */
export function recoverOverflowHandler(deps: SessionsHandlerDeps): Handler<sessions.RecoverOverflowRequest, sessions.RecoverOverflowResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.recoverOverflow(key, {
        requestId: req.requestId,
        agentId: req.agentId,
        // An absent failure is a missing failure.code, which the domain names.
        failure: { code: req.failure?.code ?? '', message: req.failure?.message, providerRequestId: req.failure?.providerRequestId },
        aborted: req.aborted,
        window: windowOf(req.window),
        route: routeOf(req.route),
      });
      return {
        action: res.action,
        reason: res.reason,
        block: res.block
          ? { blockId: res.block.blockId, start: res.block.start, end: res.block.end, hiddenCount: res.block.hiddenCount, claimTokens: res.block.claimTokens }
          : undefined,
        budget: { used: res.budget.used, max: res.budget.max },
        generation: res.generation,
      };
    });
}
