/**
 * Session log REST routes (overflow-recovery §3.3) and the workspace routes
 * (retrieve-contract "Scopes"), mapped one to one onto the sessions service's RPCs:
 *
 *   POST /api/v1/sessions/{sid}/events                    AppendEvents
 *   POST /api/v1/sessions/{sid}/surface:project           ProjectSurface
 *   GET  /api/v1/sessions/{sid}/ranges                    ListCompressibleRanges
 *   POST /api/v1/sessions/{sid}/compress                  Compress
 *   GET  /api/v1/sessions/{sid}/blocks/{ref}/originals    Decompress
 *   POST /api/v1/sessions/{sid}/search                    SearchContext
 *   POST /api/v1/sessions/{sid}/overflow:recover          RecoverOverflow
 *   POST /api/v1/sessions/{sid}/agents/{aid}:status       ReportAgentStatus
 *   GET  /api/v1/sessions/{sid}/status                    GetStatus
 *   POST /api/v1/workspaces                               CreateWorkspace
 *   PUT  /api/v1/workspaces/active                        SetActiveWorkspace
 *   GET  /api/v1/workspaces/active                        GetActiveWorkspace
 *
 * JSON is snake_case in the `{"status":"ok","result":…}` envelope. Bodies are validated
 * (`domain/session-log.ts`: pydantic-style 400s, unknown fields forbidden); everything the
 * service decides (unknown session 404, stale head/generation 409 with the current ones,
 * malformed events 400 naming the field, a foreign workspace 403) comes back as its gRPC code
 * and is rendered by the app's error handler. Semantic refusals (`surface_error`, `guarded`, …)
 * are 200s. Event objects inside `events` are the log's own format and pass through verbatim.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { SessionsLogPort } from '../clients/sessions';
import type { DeadlineConfig } from '../config';
import {
  AGENT_STATUS_FIELDS,
  agentOfStatusSegment,
  COMPRESS_FIELDS,
  decompressPage,
  PROJECT_FIELDS,
  RECOVER_FIELDS,
  routeNotFound,
  SEARCH_CONTEXT_FIELDS,
  sessionIdOf,
  sessionLogBody,
  validateAppendEventsBody,
  validatedIntQuery,
  WORKSPACE_FIELDS,
} from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { successEnvelope } from '../mapping/envelope';
import { protoIdentity } from '../mapping/identity';
import {
  agentStatusResult,
  appendEventsResult,
  compressResult,
  decompressResult,
  projectSurfaceResult,
  rangesResult,
  recoverOverflowResult,
  searchContextResult,
  statusResult,
  toAppendEventsRequest,
  toCompressRequest,
  toProjectSurfaceRequest,
  toRecoverOverflowRequest,
  toSearchContextRequest,
} from '../mapping/session-log';

/** The path parameter of a session's routes. */
interface SessionParams {
  sid: string;
}

/** Options of {@link sessionsLogRoutes}. */
export interface SessionsLogOptions {
  /** The sessions service (e.g. `sessionsLogPort` over a gRPC client). */
  sessions: SessionsLogPort;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
}

/**
 * Mount the session log and workspace routes on an authenticated scope. Usable both as a
 * Fastify plugin (`app.register(sessionsLogRoutes, opts)`) and called directly on a scope
 * (`void sessionsLogRoutes(api, opts)`: every route is added before the returned promise
 * settles). Handlers take the caller from `callerOf(request)` (set by the `/api` auth hook)
 * and the request's Budget from `budgetOf(request, deadlines)`.
 */
export async function sessionsLogRoutes(api: FastifyInstance, opts: SessionsLogOptions): Promise<void> {
  const svc = opts.sessions;
  const identity = (request: FastifyRequest) => protoIdentity(callerOf(request));
  const budget = (request: FastifyRequest) => budgetOf(request, opts.deadlines);
  // The path is checked before the body, as FastAPI validates path parameters first.
  const session = (request: FastifyRequest<{ Params: SessionParams }>) => ({ sessionId: sessionIdOf(request.params.sid), identity: identity(request) });

  api.post<{ Params: SessionParams }>('/api/v1/sessions/:sid/events', async (request) => {
    const ref = session(request);
    const b = validateAppendEventsBody(request.body);
    return successEnvelope(appendEventsResult(await svc.appendEvents(toAppendEventsRequest(ref, b), budget(request))));
  });

  api.post<{ Params: SessionParams }>('/api/v1/sessions/:sid/surface::project', async (request) => {
    const ref = session(request);
    const b = sessionLogBody(request.body, PROJECT_FIELDS);
    const res = await svc.projectSurface(toProjectSurfaceRequest(ref, b), budget(request));
    return successEnvelope(projectSurfaceResult(res, b.include_ranges === true));
  });

  api.get<{ Params: SessionParams }>('/api/v1/sessions/:sid/ranges', async (request) => {
    const ref = session(request);
    const preserveRecent = validatedIntQuery(request.query, 'preserve_recent');
    return successEnvelope(rangesResult(await svc.listCompressibleRanges({ ...ref, preserveRecent }, budget(request))));
  });

  api.post<{ Params: SessionParams }>('/api/v1/sessions/:sid/compress', async (request) => {
    const ref = session(request);
    const b = sessionLogBody(request.body, COMPRESS_FIELDS);
    return successEnvelope(compressResult(await svc.compress(toCompressRequest(ref, b), budget(request))));
  });

  api.get<{ Params: SessionParams & { ref: string } }>('/api/v1/sessions/:sid/blocks/:ref/originals', async (request) => {
    const ref = session(request);
    const page = decompressPage(request.query);
    const res = await svc.decompress({ ...ref, ref: request.params.ref, ...page }, budget(request));
    return successEnvelope(decompressResult(res));
  });

  api.post<{ Params: SessionParams }>('/api/v1/sessions/:sid/search', async (request) => {
    const ref = session(request);
    const b = sessionLogBody(request.body, SEARCH_CONTEXT_FIELDS);
    return successEnvelope(searchContextResult(await svc.searchContext(toSearchContextRequest(ref, b), budget(request))));
  });

  api.post<{ Params: SessionParams }>('/api/v1/sessions/:sid/overflow::recover', async (request) => {
    const ref = session(request);
    const b = sessionLogBody(request.body, RECOVER_FIELDS);
    return successEnvelope(recoverOverflowResult(await svc.recoverOverflow(toRecoverOverflowRequest(ref, b), budget(request))));
  });

  // `{aid}:status` is one path segment: anything but `…:status` in it is the contract's 404.
  api.post<{ Params: SessionParams & { agentStatus: string } }>('/api/v1/sessions/:sid/agents/:agentStatus', async (request) => {
    const agentId = agentOfStatusSegment(request.params.agentStatus);
    if (agentId === null) throw routeNotFound(request.method, request.url);
    const ref = session(request);
    const b = sessionLogBody(request.body, AGENT_STATUS_FIELDS);
    const res = await svc.reportAgentStatus({ ...ref, agentId, status: b.status }, budget(request));
    return successEnvelope(agentStatusResult(agentId, res));
  });

  api.get<{ Params: SessionParams }>('/api/v1/sessions/:sid/status', async (request) => {
    const ref = session(request);
    return successEnvelope(statusResult(await svc.getStatus(ref, budget(request))));
  });

  api.post('/api/v1/workspaces', async (request) => {
    const b = sessionLogBody(request.body, WORKSPACE_FIELDS);
    const res = await svc.createWorkspace({ identity: identity(request), workspace: b.workspace }, budget(request));
    return successEnvelope({ workspace: res.workspace, created: res.created });
  });

  api.put('/api/v1/workspaces/active', async (request) => {
    const b = sessionLogBody(request.body, WORKSPACE_FIELDS);
    const res = await svc.setActiveWorkspace({ identity: identity(request), workspace: b.workspace }, budget(request));
    return successEnvelope({ workspace: res.workspace });
  });

  api.get('/api/v1/workspaces/active', async (request) => {
    const res = await svc.getActiveWorkspace({ identity: identity(request) }, budget(request));
    return successEnvelope({ workspace: res.workspace, persisted: res.persisted });
  });
}
