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
 * here (pydantic-style 400s, unknown fields forbidden); everything the service decides
 * (unknown session 404, stale head/generation 409 with the current ones, malformed events
 * 400 naming the field, a foreign workspace 403) comes back as its gRPC code and is rendered
 * by the app's error handler. Semantic refusals (`surface_error`, `guarded`, …) are 200s.
 * Event objects inside `events` are the log's own format and pass through verbatim.
 */
import { isAgentId, parseSeqText, SESSION_ID_RULE } from '@ctxmesh/kernel';
import { sessions } from '@ctxmesh/proto';
import { clientPort, Code, type Port } from '@ctxmesh/rpc';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DeadlineConfig } from '../config';
import {
  any as anyValue,
  bool,
  DomainError,
  int32,
  intRange,
  isPlainObject,
  list,
  literal,
  RequestValidationError,
  str,
  validateModel,
  type FieldSpec,
  type Loc,
  type ValidationIssue,
  type Validator,
} from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { protoIdentity, successEnvelope } from '../mapping/search';
import { sessionIdOf } from '../mapping/sessions';

/** What the routes need from the sessions service: one method per RPC, each under the request's Budget. */
export type SessionsLogPort = Pick<
  Port<sessions.SessionsServiceClient>,
  | 'appendEvents'
  | 'projectSurface'
  | 'listCompressibleRanges'
  | 'compress'
  | 'decompress'
  | 'searchContext'
  | 'recoverOverflow'
  | 'reportAgentStatus'
  | 'getStatus'
  | 'createWorkspace'
  | 'setActiveWorkspace'
  | 'getActiveWorkspace'
>;

/** Options of {@link sessionsLogRoutes}. */
export interface SessionsLogOptions {
  /** The sessions service (e.g. {@link sessionsLogPort} over a gRPC client). */
  sessions: SessionsLogPort;
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
}

/**
 * The codes the sessions service answers about the caller's own input or resources; they pass
 * through to the HTTP mapping. (INVALID_ARGUMENT is the caller's input: the routes send the
 * validated body fields as they are, and the service names the field it rejects.)
 */
const PASS = [Code.INVALID_ARGUMENT, Code.NOT_FOUND, Code.ABORTED, Code.PERMISSION_DENIED, Code.ALREADY_EXISTS, Code.FAILED_PRECONDITION];

/**
 * A {@link SessionsLogPort} over a connected gRPC client. Reads are retried on UNAVAILABLE;
 * writes are not (Compress and RecoverOverflow are idempotent only by the caller's request id).
 * @param client the sessions client (the caller owns and closes it)
 */
export function sessionsLogPort(client: sessions.SessionsServiceClient): SessionsLogPort {
  const write = { retry: false };
  return clientPort(client, sessions.SessionsServiceService, {
    domain: 'sessions',
    requestIdFromIdentity: true,
    defaults: { pass: PASS, retry: true },
    methods: {
      appendEvents: write,
      compress: write,
      recoverOverflow: write,
      reportAgentStatus: write,
      createWorkspace: write,
      setActiveWorkspace: write,
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Validation

const INT64 = intRange({ ge: -Number.MAX_SAFE_INTEGER, le: Number.MAX_SAFE_INTEGER });

/** A model nested in a body: an object validated against `fields` at `loc`. */
function model(fields: readonly FieldSpec[]): Validator<Record<string, unknown>> {
  return {
    label: 'model',
    check(v, loc) {
      const r = validateModel(v, fields, loc);
      return r.ok ? { ok: true, value: r.model.values } : r;
    },
  };
}

/**
 * A seq edge: an integer ≥ 0, or the tool forms `"295"` and `"295#callId"` (the kernel's
 * `parseSeqText`: the suffix names a split tool call and is dropped).
 */
const seq: Validator<number> = {
  label: 'seq',
  check(v, loc, strict) {
    if (typeof v === 'string') {
      const n = parseSeqText(v);
      if (n !== undefined) return { ok: true, value: n };
      return { ok: false, issues: [{ loc: [...loc], msg: 'Input should be an integer >= 0 or a string like "295" or "295#callId"', type: 'seq_parsing' }] };
    }
    return intRange({ ge: 0, le: Number.MAX_SAFE_INTEGER }).check(v, loc, strict);
  },
};

const WINDOW_FIELDS: readonly FieldSpec[] = [
  { name: 'context_tokens', type: int32, required: true },
  { name: 'reserved_output_tokens', type: int32 },
];
const ROUTE_FIELDS: readonly FieldSpec[] = [
  { name: 'provider', type: str },
  { name: 'model', type: str },
];
const EVENTS_FIELDS: readonly FieldSpec[] = [
  { name: 'events', type: list(anyValue), required: true },
  { name: 'expected_head', type: intRange({ ge: -1, le: Number.MAX_SAFE_INTEGER }) },
  { name: 'agent_id', type: str },
];
const PROJECT_FIELDS: readonly FieldSpec[] = [
  { name: 'window', type: model(WINDOW_FIELDS) },
  { name: 'include_ranges', type: bool },
  { name: 'preserve_recent', type: int32 },
];
const COMPRESS_RANGE_FIELDS: readonly FieldSpec[] = [
  { name: 'start_seq', type: seq, required: true },
  { name: 'end_seq', type: seq, required: true },
  { name: 'summary', type: str, required: true },
  { name: 'topic', type: str },
  { name: 'verified_readings', type: list(str) },
];
const COMPRESS_FIELDS: readonly FieldSpec[] = [
  { name: 'request_id', type: str, required: true },
  { name: 'expected_generation', type: INT64 },
  { name: 'author', type: literal('model', 'human'), required: true },
  { name: 'route', type: model(ROUTE_FIELDS) },
  { name: 'ranges', type: list(model(COMPRESS_RANGE_FIELDS)), required: true },
];
const SEARCH_FIELDS: readonly FieldSpec[] = [
  { name: 'query', type: str, required: true },
  { name: 'limit', type: int32 },
];
const FAILURE_FIELDS: readonly FieldSpec[] = [
  { name: 'code', type: str, required: true },
  { name: 'message', type: str },
  { name: 'provider_request_id', type: str },
];
const RECOVER_FIELDS: readonly FieldSpec[] = [
  { name: 'request_id', type: str, required: true },
  { name: 'agent_id', type: str, required: true },
  { name: 'failure', type: model(FAILURE_FIELDS), required: true },
  { name: 'aborted', type: bool },
  { name: 'window', type: model(WINDOW_FIELDS) },
  { name: 'route', type: model(ROUTE_FIELDS) },
];
const STATUS_FIELDS: readonly FieldSpec[] = [{ name: 'status', type: literal('idle', 'running'), required: true }];
const WORKSPACE_FIELDS: readonly FieldSpec[] = [{ name: 'workspace', type: str, required: true }];

/**
 * Validate a body (an absent body counts as `{}`, so routes whose fields are all optional
 * accept an empty POST).
 * @throws RequestValidationError
 */
function body(raw: unknown, fields: readonly FieldSpec[]): Record<string, unknown> {
  const r = validateModel(raw === undefined || raw === null || raw === '' ? {} : raw, fields);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.model.values;
}

/** A query-string integer, validated like a body field at `["query", name]`. */
function queryInt(request: FastifyRequest, name: string, type: Validator<number> = int32): number | undefined {
  const raw = (request.query as Record<string, unknown> | undefined)?.[name];
  if (raw === undefined) return undefined;
  const loc: Loc = ['query', name];
  const r = type.check(Array.isArray(raw) ? raw[raw.length - 1] : raw, loc, false);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.value;
}

/**
 * A paging number of Decompress from the query: never an error (§3.6: clamp, not reject).
 * Non-numeric → undefined (the default); fractions truncate; the magnitude is capped so it
 * fits an int64.
 */
function pagingNumber(request: FastifyRequest, name: string): number | undefined {
  let raw = (request.query as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(raw)) raw = raw[raw.length - 1];
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return undefined;
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(n)));
}

const AGENT_STATUS_PARAM = /^(.+):status$/;

function windowOf(v: unknown): sessions.Window | undefined {
  if (v === undefined) return undefined;
  const w = v as Record<string, number | undefined>;
  return { contextTokens: w.context_tokens ?? 0, reservedOutputTokens: w.reserved_output_tokens ?? 0 };
}

function routeOf(v: unknown): sessions.Route | undefined {
  if (v === undefined) return undefined;
  const r = v as Record<string, string | undefined>;
  return { provider: r.provider ?? '', model: r.model ?? '' };
}

// ---------------------------------------------------------------------------------------------
// Response mapping (snake_case)

function rangeJson(r: sessions.Range) {
  return { start: r.start, end: r.end, count: r.count, rank_tokens: r.rankTokens, tool_pct: r.toolPct, images: r.images, files: r.files };
}

function messageJson(m: sessions.SurfaceMessage) {
  return {
    seq: m.seq,
    id: m.id,
    role: m.role,
    class: m.class,
    text: m.text,
    ...(m.toolCallId !== '' ? { tool_call_id: m.toolCallId } : {}),
    ...(m.toolName !== '' ? { tool_name: m.toolName } : {}),
    ...(m.toolArgs !== '' ? { tool_args: m.toolArgs } : {}),
  };
}

/** One Compress result: the landed block's fields, or the refusal's detail and extras. */
function compressResultJson(r: sessions.CompressResult) {
  if (r.status === 'landed') {
    return {
      status: r.status,
      block_id: r.blockId,
      kernel_ref: r.kernelRef,
      start: r.start,
      end: r.end,
      shadowed_seqs: r.shadowedSeqs,
      claim_tokens: r.claimTokens,
      tier: r.tier,
      adjusted: r.adjusted,
      recovered: r.recovered,
    };
  }
  return {
    status: r.status,
    detail: r.detail,
    ...(r.status === 'already_compressed' ? { covering_block_ids: r.coveringBlockIds } : {}),
    ...(r.status === 'guarded' ? { guarded_seqs: r.guardedSeqs, compressible: r.compressible.map(rangeJson) } : {}),
  };
}

function budgetJson(b: sessions.RetryBudget | undefined) {
  return { used: b?.used ?? 0, max: b?.max ?? 0 };
}

// ---------------------------------------------------------------------------------------------
// Routes

/**
 * Mount the session log and workspace routes on an authenticated scope. Usable both as a
 * Fastify plugin (`app.register(sessionsLogRoutes, opts)`) and called directly on a scope
 * (`void sessionsLogRoutes(api, opts)`: every route is added before the returned promise
 * settles). Handlers take the caller from `callerOf(request)` (set by the `/api` auth hook)
 * and the request's Budget from `budgetOf(request, deadlines)`.
 */
export async function sessionsLogRoutes(api: FastifyInstance, opts: SessionsLogOptions): Promise<void> {
  const svc = opts.sessions;
  const ctx = (request: FastifyRequest) => ({ identity: protoIdentity(callerOf(request)), budget: budgetOf(request, opts.deadlines) });
  const sid = (request: FastifyRequest) => sessionIdOf((request.params as { sid: string }).sid);

  api.post('/api/v1/sessions/:sid/events', async (request) => {
    const sessionId = sid(request);
    const b = body(request.body, EVENTS_FIELDS);
    const issues: ValidationIssue[] = [];
    const events = (b.events as unknown[]).map((e, i): sessions.SessionEvent => {
      if (!isPlainObject(e)) issues.push({ loc: ['body', 'events', i], msg: 'Input should be a valid dictionary', type: 'dict_type' });
      const type = isPlainObject(e) && typeof e.type === 'string' ? e.type : '';
      return { type, json: JSON.stringify(e), seq: 0 };
    });
    if (issues.length > 0) throw new RequestValidationError(issues);
    const { identity, budget } = ctx(request);
    const res = await svc.appendEvents(
      { identity, sessionId, expectedHead: b.expected_head as number | undefined, agentId: (b.agent_id as string | undefined) ?? '', events },
      budget,
    );
    return successEnvelope({
      seqs: res.seqs,
      head: res.head,
      generation: res.generation,
      prunes: res.prunes.map((p) => ({ prune_id: p.pruneId, reason: p.reason, shadowed_seqs: p.shadowedSeqs, stub_seq: p.stubSeq })),
    });
  });

  api.post('/api/v1/sessions/:sid/surface::project', async (request) => {
    const sessionId = sid(request);
    const b = body(request.body, PROJECT_FIELDS);
    const { identity, budget } = ctx(request);
    const includeRanges = b.include_ranges === true;
    const res = await svc.projectSurface(
      { identity, sessionId, window: windowOf(b.window), includeRanges, preserveRecent: b.preserve_recent as number | undefined },
      budget,
    );
    return successEnvelope({
      head: res.head,
      generation: res.generation,
      messages: res.messages.map(messageJson),
      usage: { rank_tokens: res.rankTokens },
      input_budget: res.inputBudget,
      over_window: res.overWindow,
      ...(includeRanges ? { ranges: res.ranges.map(rangeJson) } : {}),
    });
  });

  api.get('/api/v1/sessions/:sid/ranges', async (request) => {
    const sessionId = sid(request);
    const preserveRecent = queryInt(request, 'preserve_recent');
    const { identity, budget } = ctx(request);
    const res = await svc.listCompressibleRanges({ identity, sessionId, preserveRecent }, budget);
    return successEnvelope({ generation: res.generation, ranges: res.ranges.map(rangeJson) });
  });

  api.post('/api/v1/sessions/:sid/compress', async (request) => {
    const sessionId = sid(request);
    const b = body(request.body, COMPRESS_FIELDS);
    const { identity, budget } = ctx(request);
    const ranges = (b.ranges as Array<Record<string, unknown>>).map(
      (r): sessions.CompressRange => ({
        startSeq: r.start_seq as number,
        endSeq: r.end_seq as number,
        summary: r.summary as string,
        topic: (r.topic as string | undefined) ?? '',
        verifiedReadings: (r.verified_readings as string[] | undefined) ?? [],
      }),
    );
    const res = await svc.compress(
      {
        identity,
        sessionId,
        requestId: b.request_id as string,
        expectedGeneration: b.expected_generation as number | undefined,
        author: b.author as string,
        route: routeOf(b.route),
        ranges,
      },
      budget,
    );
    return successEnvelope({ generation: res.generation, results: res.results.map(compressResultJson) });
  });

  api.get('/api/v1/sessions/:sid/blocks/:ref/originals', async (request) => {
    const sessionId = sid(request);
    const ref = (request.params as { ref: string }).ref;
    const offset = pagingNumber(request, 'offset') ?? 0;
    const limitRaw = pagingNumber(request, 'limit');
    // 0 is the wire's "absent" (a full page); an explicit 0 or less clamps to 1 (§3.6).
    const limit = limitRaw === undefined ? 0 : Math.max(1, limitRaw);
    const { identity, budget } = ctx(request);
    const res = await svc.decompress({ identity, sessionId, ref, offset, limit }, budget);
    return successEnvelope({
      block_id: res.blockId,
      kind: res.kind,
      kernel_ref: res.kernelRef,
      summary: res.summary,
      tier: res.tier,
      total: res.total,
      offset: res.offset,
      items: res.items.map((i) => ({ seq: i.seq, role: i.role, text: i.text })),
      next_offset: res.nextOffset ?? null,
      note: res.note,
    });
  });

  api.post('/api/v1/sessions/:sid/search', async (request) => {
    const sessionId = sid(request);
    const b = body(request.body, SEARCH_FIELDS);
    const { identity, budget } = ctx(request);
    const res = await svc.searchContext({ identity, sessionId, query: b.query as string, limit: (b.limit as number | undefined) ?? 0 }, budget);
    return successEnvelope({
      hits: res.hits.map((h) => ({
        kind: h.kind,
        block_id: h.blockId,
        ...(h.seq !== undefined ? { seq: h.seq } : {}),
        ...(h.role !== '' ? { role: h.role } : {}),
        score: h.score,
        preview: h.preview,
      })),
    });
  });

  api.post('/api/v1/sessions/:sid/overflow::recover', async (request) => {
    const sessionId = sid(request);
    const b = body(request.body, RECOVER_FIELDS);
    const f = b.failure as Record<string, string | undefined>;
    const { identity, budget } = ctx(request);
    const res = await svc.recoverOverflow(
      {
        identity,
        sessionId,
        requestId: b.request_id as string,
        agentId: b.agent_id as string,
        failure: { code: f.code ?? '', message: f.message ?? '', providerRequestId: f.provider_request_id ?? '' },
        aborted: b.aborted === true,
        window: windowOf(b.window),
        route: routeOf(b.route),
      },
      budget,
    );
    return successEnvelope({
      action: res.action,
      reason: res.reason,
      ...(res.block
        ? { block: { block_id: res.block.blockId, start: res.block.start, end: res.block.end, hidden_count: res.block.hiddenCount, claim_tokens: res.block.claimTokens } }
        : {}),
      budget: budgetJson(res.budget),
      generation: res.generation,
    });
  });

  // `{aid}:status` is one path segment: find-my-way cannot put a literal after a parameter
  // inside a segment, so the suffix is matched here (anything else is the contract's 404).
  api.post('/api/v1/sessions/:sid/agents/:agentStatus', async (request) => {
    const m = AGENT_STATUS_PARAM.exec((request.params as { agentStatus: string }).agentStatus);
    if (!m) throw new DomainError('NOT_FOUND', `Route not found: ${request.method} ${request.url.split('?')[0]}`);
    const agentId = m[1]!;
    if (!isAgentId(agentId)) throw new DomainError('INVALID_ARGUMENT', `Invalid agent id '${agentId}': ${SESSION_ID_RULE}`);
    const sessionId = sid(request);
    const b = body(request.body, STATUS_FIELDS);
    const { identity, budget } = ctx(request);
    const res = await svc.reportAgentStatus({ identity, sessionId, agentId, status: b.status as string }, budget);
    return successEnvelope({ agent_id: agentId, budget: budgetJson(res.budget) });
  });

  api.get('/api/v1/sessions/:sid/status', async (request) => {
    const sessionId = sid(request);
    const { identity, budget } = ctx(request);
    const s = await svc.getStatus({ identity, sessionId }, budget);
    return successEnvelope({
      head: s.head,
      generation: s.generation,
      surface_nodes: s.surfaceNodes,
      rank_tokens: s.rankTokens,
      blocks: s.blocks.map((b) => ({
        block_id: b.blockId,
        kernel_ref: b.kernelRef,
        tier: b.tier,
        topic: b.topic,
        author: b.author,
        summary_seq: b.summarySeq,
        hidden_count: b.hiddenCount,
        claim_tokens: b.claimTokens,
        active: b.active,
      })),
      checkpoint_seqs: s.checkpointSeqs,
      budgets: s.budgets.map((b) => ({ agent_id: b.agentId, ...budgetJson(b.budget) })),
      claims: { appended: s.claims?.appended ?? 0, claimed: s.claims?.claimed ?? 0, projected: s.claims?.projected ?? 0 },
      estimator_id: s.estimatorId,
      dangling_compactions: s.danglingCompactions,
    });
  });

  api.post('/api/v1/workspaces', async (request) => {
    const b = body(request.body, WORKSPACE_FIELDS);
    const { identity, budget } = ctx(request);
    const res = await svc.createWorkspace({ identity, workspace: b.workspace as string }, budget);
    return successEnvelope({ workspace: res.workspace, created: res.created });
  });

  api.put('/api/v1/workspaces/active', async (request) => {
    const b = body(request.body, WORKSPACE_FIELDS);
    const { identity, budget } = ctx(request);
    const res = await svc.setActiveWorkspace({ identity, workspace: b.workspace as string }, budget);
    return successEnvelope({ workspace: res.workspace });
  });

  api.get('/api/v1/workspaces/active', async (request) => {
    const { identity, budget } = ctx(request);
    const res = await svc.getActiveWorkspace({ identity }, budget);
    return successEnvelope({ workspace: res.workspace, persisted: res.persisted });
  });
}
