/**
 * Search routes (context-contract §1): `POST /api/v1/search/find`, `/search` (list and
 * context modes) and `/recall` (the deprecated preset), gateway → orchestrator over gRPC.
 */
import type { common } from '@ctxmesh/proto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OrchestratorPort } from '../clients/orchestrator';
import type { DeadlineConfig } from '../config';
import { validateFindBody, validateRecallBody, validateSearchBody, type ContextParams, type FindParams, type RequestContext } from '../domain';
import { budgetOf, callerOf, elapsedMs } from '../http/context';
import { finiteJson } from '../http/json';
import { successEnvelope, telemetryOf } from '../mapping/envelope';
import { contextResult, listResult, toAssembleContextRequest, toSearchRequest, type ContextShaping } from '../mapping/search';

/** What the search routes need. */
export interface SearchRouteDeps {
  /** The orchestrator: list mode (`search`) and context assembly (`assembleContext`). */
  orchestrator: Pick<OrchestratorPort, 'search' | 'assembleContext'>;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
  /** Clock of relative `since`/`until`, ms since the epoch. @default Date.now */
  now?: () => number;
}

/** `Link` of a successful `/recall` (§9.3). */
export const RECALL_LINK = '</api/v1/search/search>; rel="successor-version"';

/** Mount the search routes on an authenticated scope. */
export function searchRoutes(api: FastifyInstance, deps: SearchRouteDeps): void {
  const now = deps.now ?? Date.now;
  const ctxOf = (request: FastifyRequest): RequestContext => ({ identity: callerOf(request), nowMs: now() });
  const telemetry = (request: FastifyRequest, wanted: boolean, operation: string, stages?: readonly common.StageResult[]) =>
    wanted ? telemetryOf(request.id, operation, elapsedMs(request), stages) : null;

  const list = async (request: FastifyRequest, params: FindParams, sessionId: string | null, operation: string) => {
    const res = await deps.orchestrator.search(toSearchRequest(params, callerOf(request), sessionId), budgetOf(request, deps.deadlines));
    return finiteJson(successEnvelope(listResult(res), telemetry(request, params.telemetry, operation)));
  };

  const context = async (request: FastifyRequest, params: ContextParams, shaping: ContextShaping, operation: string) => {
    const res = await deps.orchestrator.assembleContext(toAssembleContextRequest(params, callerOf(request)), budgetOf(request, deps.deadlines));
    return finiteJson(successEnvelope(contextResult(res, { ignored: params.ignored, ...shaping }), telemetry(request, params.telemetry, operation, res.stages)));
  };

  api.post('/api/v1/search/find', async (request) => {
    const params = validateFindBody(request.body, ctxOf(request));
    return list(request, params, null, 'search.find');
  });

  api.post('/api/v1/search/search', async (request) => {
    const v = validateSearchBody(request.body, ctxOf(request));
    if (v.mode === 'list') return list(request, v.params, v.params.sessionId, 'search.search');
    return context(request, v.params, {}, 'search.search');
  });

  api.post('/api/v1/search/recall', async (request, reply) => {
    const params = validateRecallBody(request.body, ctxOf(request));
    const body = await context(request, params, { render: params.render, deprecated: params.deprecated }, 'search.recall');
    // Only here, after success: an error response never carries the deprecation headers.
    void reply.header('deprecation', 'true').header('link', RECALL_LINK);
    return body;
  });
}
