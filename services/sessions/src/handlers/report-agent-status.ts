/** SessionsService.ReportAgentStatus: `idle` resets the agent's overflow budget. */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. A missing `agent_id` or another status → INVALID_ARGUMENT. */
export function reportAgentStatusHandler(deps: SessionsHandlerDeps): Handler<sessions.ReportAgentStatusRequest, sessions.ReportAgentStatusResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.reportAgentStatus(key, { agentId: req.agentId, status: req.status });
      return { budget: { used: res.budget.used, max: res.budget.max } };
    });
}
