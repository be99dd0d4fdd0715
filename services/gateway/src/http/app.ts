/**
 * buildApp(deps): the gateway's Fastify instance, not listening. Every response carries
 * `X-Request-ID` and `X-Process-Time`; `/api/**` routes authenticate first; every failure
 * is rendered by `renderError` into the contract's envelopes.
 */
import { createServer } from 'node:http';
import type { EventBus } from '@ctxmesh/stores';
import { httpDuration } from '@ctxmesh/telemetry';
import { fastify, LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from '@ctxmesh/runtime';
import { ingestPort } from '../clients/ingest';
import type { OrchestratorClient } from '../clients/orchestrator';
import type { SessionsClient } from '../clients/sessions';
import { transcriptReader } from '../clients/transcript';
import { DEFAULT_HOOKS, type DeadlineConfig, type HooksConfig, type ReceiveTimeouts } from '../config';
import { invalidJsonBody, requestIdFrom, resolveIdentity, routeNotFound, unsupportedMediaType, workspaceOf, type AuthConfig, type HeaderBag } from '../domain';
import { envelopeOf } from '../mapping/envelope';
import { mcpRoutes } from '../mcp/routes';
import { contentRoutes } from '../routes/content';
import { hookRoutes } from '../routes/hooks';
import { inspectRoutes } from '../routes/inspect';
import { opsRoutes, type ReadinessCheck } from '../routes/ops';
import { retrieveRoutes } from '../routes/retrieve';
import { searchRoutes } from '../routes/search';
import { sessionRoutes } from '../routes/sessions';
import { sessionsLogRoutes } from '../routes/sessions-log';
import { checkTimeoutHeader, disposeRequestState, elapsedMs, initRequestState, TIMEOUT_HEADER } from './context';
import { clientErrorResponse, renderError } from './errors';
import { isJsonContentType, JsonBodyError, parseBody, UnsupportedMediaTypeError } from './json';
import { assertJsonDepth, assertStringLimits, bodyTooLarge, DEFAULT_BODY_LIMIT_BYTES, DEFAULT_RECEIVE } from './limits';
import { routeLabel } from './metrics';

/** Everything the gateway talks to, injected (no env, no listening here). */
export interface GatewayDeps {
  /** Root logger; Fastify logs requests through it. */
  log: Logger;
  /** Authentication mode. */
  auth: AuthConfig;
  /** Request budgets. */
  deadlines: DeadlineConfig;
  /** Orchestrator client (search, context, reads, existence checks). */
  orchestrator: OrchestratorClient;
  /** Sessions client (message capture). */
  sessions: SessionsClient;
  /** Event bus that carries writes to the indexer. */
  bus: EventBus;
  /** Subject writes are published on (must match the indexer's ingest subjects). @default "ctxmesh.ingest.write" */
  ingestSubject?: string;
  /** Probes behind `GET /ready`. @default [] */
  readiness?: ReadinessCheck[];
  /** Reported by `GET /health`. @default "0.0.0" */
  version?: string;
  /** Largest request body, bytes (a larger one is a 413 naming the limit). @default 8 MiB */
  bodyLimitBytes?: number;
  /** Largest document a write may carry (`content`, UTF-8 bytes). @default 4 MiB */
  maxDocumentBytes?: number;
  /** How long a request may take to arrive. @default { headersMs: 10000, requestMs: 30000 } */
  receive?: ReceiveTimeouts;
  /** Clock in ms (relative `since`/`until`, `published_at_ms`). @default Date.now */
  now?: () => number;
  /** Write-id factory. @default crypto.randomUUID */
  newWriteId?: () => string;
  /** The harness hook routes (`/hooks/claude-code`, `/hooks/codex`; mounted with the session log). @default DEFAULT_HOOKS */
  hooks?: HooksConfig;
}

/** `X-Process-Time` as Python's `str(float)` would write the seconds. */
function seconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}.0` : String(s);
}

/**
 * The gateway's request logs: one line per request at `info` when it is answered (method, URL,
 * client, status, response time, request id) — an access log — where fastify writes two (the
 * arrival too, which now goes at `debug`). Failures keep their own lines.
 */
export class AccessLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    if (this.isLogDisabled(request)) return;
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (this.isLogDisabled(request)) return;
    if (error) reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Build the app. Call `ready()`/`listen()` (or `inject()`) on the result. */
export function buildApp(deps: GatewayDeps): FastifyInstance {
  const bodyLimitBytes = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const receive = deps.receive ?? DEFAULT_RECEIVE;
  const app = fastify({
    loggerInstance: deps.log,
    requestIdHeader: false,
    // The contract's echo rule (§1.1) is the request id of logs, traces and downstream calls.
    genReqId: (req) => requestIdFrom(req.headers as HeaderBag),
    logController: new AccessLogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: bodyLimitBytes,
    // Node answers 408 and closes a request that has not fully arrived in time, so a slow
    // sender cannot hold a connection and its buffers forever. Node checks these deadlines
    // on an interval (30 s by default): check every second.
    serverFactory: (handler) =>
      createServer(
        { requestTimeout: receive.requestMs, headersTimeout: receive.headersMs, connectionsCheckingInterval: Math.min(1000, receive.headersMs) },
        handler,
      ),
    return503OnClosing: true,
    // Connection-level failures (a request that did not arrive in time, oversized headers,
    // bytes that are not HTTP) come before any route: answer them in the contract's envelope.
    clientErrorHandler: (err, socket) => {
      if ((err as NodeJS.ErrnoException).code === 'ECONNRESET' || socket.destroyed) return;
      if (socket.writable) socket.write(clientErrorResponse((err as NodeJS.ErrnoException).code, receive));
      socket.destroy(err);
    },
    // Failures before routing (a malformed URL) skip the hooks: answer them in the same shape.
    frameworkErrors: (err, request, reply) => {
      const r = renderError(bodyTooLarge(err, bodyLimitBytes, request.id) ?? err, request.id);
      void (reply as unknown as FastifyReply).code(r.status).header('x-request-id', request.id).header('x-process-time', '0.0').send(r.body);
    },
  }) as unknown as FastifyInstance;

  app.decorateRequest('gw', null as never);
  app.addHook('onRequest', async (request, reply) => initRequestState(request, reply));
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header('x-request-id', request.id);
    reply.header('x-process-time', seconds(elapsedMs(request)));
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    httpDuration.labels(request.method, routeLabel(request.routeOptions.url), String(reply.statusCode)).observe(elapsedMs(request) / 1000);
    disposeRequestState(request);
  });

  // One parser for every content type: no content type or a JSON type is parsed as JSON (a
  // malformed body is the §1.7 json_invalid 400); any other type with a body is a 415 naming
  // application/json.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    try {
      // Depth first, on the raw text: nothing below may recurse into a 50,000-deep body.
      if (isJsonContentType(req.headers['content-type'])) assertJsonDepth(body as string);
      const parsed = parseBody(body as string, req.headers['content-type']);
      assertStringLimits(parsed);
      done(null, parsed);
    } catch (e) {
      // The reader's two refusals as the catalogue's errors.
      if (e instanceof JsonBodyError) done(invalidJsonBody(e.position), undefined);
      else if (e instanceof UnsupportedMediaTypeError) done(unsupportedMediaType(e.contentType, req.id), undefined);
      else done(e as Error, undefined);
    }
  });

  app.setErrorHandler(async (err, request, reply) => {
    const r = renderError(bodyTooLarge(err, bodyLimitBytes, request.id) ?? err, request.id);
    if (r.fault) request.log.error({ err }, 'request failed');
    else request.log.info({ status: r.status, code: r.body.error.code }, 'request rejected');
    return reply.code(r.status).type('application/json').send(r.body);
  });
  app.setNotFoundHandler(async (request, reply) => {
    const e = routeNotFound(request.method, request.url);
    return reply.code(e.status).send(envelopeOf(e));
  });

  opsRoutes(app, { version: deps.version ?? '0.0.0', readiness: deps.readiness ?? [], deadLetterCount: () => deps.bus.deadLetterCount() });
  inspectRoutes(app, { auth: deps.auth, version: deps.version ?? '0.0.0' });
  void app.register(async (api) => {
    // Auth after the body is read, as FastAPI resolves it: malformed JSON is a 400 even
    // unauthenticated; field validation comes after the 401.
    api.addHook('preValidation', async (request) => {
      checkTimeoutHeader(request.headers[TIMEOUT_HEADER]);
      const identity = resolveIdentity(request.headers as HeaderBag, deps.auth, () => request.id);
      request.gw.caller = { ...identity, workspace: workspaceOf(request.headers as HeaderBag) };
    });
    const { orchestrator, sessions, deadlines, now } = deps;
    searchRoutes(api, { orchestrator, deadlines, now });
    contentRoutes(api, {
      orchestrator,
      ingest: ingestPort(deps.bus, { subject: deps.ingestSubject, now, log: deps.log }),
      deadlines,
      maxDocumentBytes: deps.maxDocumentBytes,
      now,
      newWriteId: deps.newWriteId,
    });
    sessionRoutes(api, { sessions, deadlines });
    retrieveRoutes(api, { orchestrator, deadlines });
    mcpRoutes(api, { orchestrator, deadlines, now, version: deps.version });
    if (sessions?.log) {
      await sessionsLogRoutes(api, { sessions: sessions.log, deadlines });
      const hooks = deps.hooks ?? DEFAULT_HOOKS;
      const root = hooks.transcriptRoot;
      const transcripts = root === null ? undefined : transcriptReader(root, (path) => deps.log.warn({ path, root }, 'hook: transcript_path outside CTXMESH_HOOK_TRANSCRIPT_ROOT, not read'));
      hookRoutes(api, { orchestrator, sessions: sessions.log, hooks, transcripts, now });
    }
  });
  return app;
}
