/**
 * Retrieve routes (retrieve-contract): `POST /api/v1/retrieve` (passages, memories, group
 * memories and citations in one round trip) and `GET /api/v1/traces/{id}` (a retrieval trace),
 * gateway → orchestrator over gRPC.
 *
 * The request's workspace is the body's, else the `X-Workspace` header's; the orchestrator
 * falls back to the caller's persisted active workspace, then `default`, and answers an
 * unknown workspace with 404 and another account's with 403 — never an empty 200.
 */
import type { FastifyInstance } from 'fastify';
import type { OrchestratorPort } from '../clients/orchestrator';
import type { DeadlineConfig } from '../config';
import { validateRetrieveBody } from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { finiteJson } from '../http/json';
import { successEnvelope } from '../mapping/envelope';
import { protoIdentity } from '../mapping/identity';
import { retrieveResult, toRetrieveRequest } from '../mapping/retrieve';
import { traceJson } from '../mapping/trace';

/** What the retrieve routes need. */
export interface RetrieveRouteDeps {
  /** The orchestrator: one retrieve (NOT_FOUND, PERMISSION_DENIED and INVALID_ARGUMENT pass through) and one trace (NOT_FOUND and INVALID_ARGUMENT pass through). */
  orchestrator: Pick<OrchestratorPort, 'retrieve' | 'getTrace'>;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
}

/** Mount the retrieve routes on an authenticated scope. */
export function retrieveRoutes(api: FastifyInstance, deps: RetrieveRouteDeps): void {
  api.post('/api/v1/retrieve', async (request) => {
    const params = validateRetrieveBody(request.body);
    const res = await deps.orchestrator.retrieve(toRetrieveRequest(params, callerOf(request)), budgetOf(request, deps.deadlines));
    return finiteJson(successEnvelope(retrieveResult(res)));
  });

  api.get<{ Params: { id: string } }>('/api/v1/traces/:id', async (request) => {
    const { id } = request.params;
    const res = await deps.orchestrator.getTrace({ identity: protoIdentity(callerOf(request)), traceId: id }, budgetOf(request, deps.deadlines));
    // A trace is written by the orchestrator that answered its retrieve; an answer without one is a mesh fault.
    if (!res.trace) throw new Error('the orchestrator answered GetTrace without a trace');
    return successEnvelope(traceJson(res.trace));
  });
}
