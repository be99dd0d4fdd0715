/**
 * Search routes (context-contract §1): `POST /api/v1/search/find`, `/search` (list and
 * context modes) and `/recall` (the deprecated preset), gateway → orchestrator over gRPC.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { validateFindBody, validateRecallBody, validateSearchBody, type RequestContext } from '../domain';
import type { GatewayDeps } from '../http/app';
import { budgetOf, callerOf, elapsedMs } from '../http/context';
import { finiteJson } from '../http/json';
import {
  contextResult,
  listResult,
  successEnvelope,
  telemetryOf,
  toAssembleContextRequest,
  toSearchRequest,
  type ContextShaping,
} from '../mapping/search';
import type { ContextParams } from '../domain';
import type { common } from '@ctxmesh/proto';

/** `Link` of a successful `/recall` (§9.3). */
export const RECALL_LINK = '</api/v1/search/search>; rel="successor-version"';

/** Mount the search routes on an authenticated scope. */
export function searchRoutes(api: FastifyInstance, deps: GatewayDeps): void {
  const now = deps.now ?? Date.now;
  const ctxOf = (request: FastifyRequest): RequestContext => ({ identity: callerOf(request), nowMs: now() });
  const telemetry = (request: FastifyRequest, wanted: boolean, operation: string, stages?: readonly common.StageResult[]) =>
    wanted ? telemetryOf(request.id, operation, elapsedMs(request), stages) : null;

  const list = async (request: FastifyRequest, params: ReturnType<typeof validateFindBody>, sessionId: string | null, operation: string) => {
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
