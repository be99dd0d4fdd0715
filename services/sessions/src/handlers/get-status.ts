/** SessionsService.GetStatus: head, generation, blocks, live checkpoints, budgets, claims (read-only). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. An unknown session → NOT_FOUND. */
export function getStatusHandler(deps: SessionsHandlerDeps): Handler<sessions.GetStatusRequest, sessions.GetStatusResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const s = await deps.sessions.getStatus(key);
      return {
        head: s.head,
        generation: s.generation,
        surfaceNodes: s.surfaceNodes,
        rankTokens: s.rankTokens,
        blocks: s.blocks.map((b) => ({
          blockId: b.blockId,
          kernelRef: b.kernelRef,
          tier: b.tier,
          topic: b.topic,
          summarySeq: b.summarySeq,
          hiddenCount: b.hiddenCount,
          active: b.active,
          author: b.author,
          claimTokens: b.claimTokens,
        })),
        budgets: s.budgets.map((b) => ({ agentId: b.agentId, budget: { used: b.used, max: b.max } })),
        checkpointSeqs: s.checkpointSeqs,
        claims: { appended: s.claims.appended, claimed: s.claims.claimed, projected: s.claims.projected },
        estimatorId: s.estimatorId,
        danglingCompactions: s.danglingCompactions,
      };
    });
}
