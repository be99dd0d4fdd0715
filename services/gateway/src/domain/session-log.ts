/**
 * The session log and workspace routes (overflow-recovery §3.3), the checks: one body model
 * per route (pydantic-style 400s, unknown fields forbidden; an absent body counts as `{}`), the
 * `{aid}:status` path segment and Decompress's paging. Everything the sessions service decides
 * (an unknown session, a stale head, a malformed event) is its answer, not checked here.
 */
import { isAgentId, parseSeqText, SESSION_ID_RULE } from '@ctxmesh/kernel';
import { invalidArgument, RequestValidationError, type ValidationIssue } from './errors';
import { pagingQuery } from './query';
import { any, bool, fields, int32, intRange, isPlainObject, list, literal, model, str, validateModel, type FieldSpec, type ModelValues, type Validator } from './schema';

const INT64 = intRange({ ge: -Number.MAX_SAFE_INTEGER, le: Number.MAX_SAFE_INTEGER });

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

const WINDOW_FIELDS = fields({ name: 'context_tokens', type: int32, required: true }, { name: 'reserved_output_tokens', type: int32 });
const ROUTE_FIELDS = fields({ name: 'provider', type: str }, { name: 'model', type: str });

/** `POST …/events`: events in the log's own format (passed through verbatim), with the head the caller expects. */
export const EVENTS_FIELDS = fields(
  { name: 'events', type: list(any), required: true },
  { name: 'expected_head', type: intRange({ ge: -1, le: Number.MAX_SAFE_INTEGER }) },
  { name: 'agent_id', type: str },
);
/** `POST …/surface:project`. */
export const PROJECT_FIELDS = fields(
  { name: 'window', type: model(WINDOW_FIELDS) },
  { name: 'include_ranges', type: bool },
  { name: 'preserve_recent', type: int32 },
);
const COMPRESS_RANGE_FIELDS = fields(
  { name: 'start_seq', type: seq, required: true },
  { name: 'end_seq', type: seq, required: true },
  { name: 'summary', type: str, required: true },
  { name: 'topic', type: str },
  { name: 'verified_readings', type: list(str) },
);
/** `POST …/compress`. */
export const COMPRESS_FIELDS = fields(
  { name: 'request_id', type: str, required: true },
  { name: 'expected_generation', type: INT64 },
  { name: 'author', type: literal('model', 'human'), required: true },
  { name: 'route', type: model(ROUTE_FIELDS) },
  { name: 'ranges', type: list(model(COMPRESS_RANGE_FIELDS)), required: true },
);
/** `POST …/search`. */
export const SEARCH_CONTEXT_FIELDS = fields({ name: 'query', type: str, required: true }, { name: 'limit', type: int32 });
const FAILURE_FIELDS = fields({ name: 'code', type: str, required: true }, { name: 'message', type: str }, { name: 'provider_request_id', type: str });
/** `POST …/overflow:recover`. */
export const RECOVER_FIELDS = fields(
  { name: 'request_id', type: str, required: true },
  { name: 'agent_id', type: str, required: true },
  { name: 'failure', type: model(FAILURE_FIELDS), required: true },
  { name: 'aborted', type: bool },
  { name: 'window', type: model(WINDOW_FIELDS) },
  { name: 'route', type: model(ROUTE_FIELDS) },
);
/** `POST …/agents/{aid}:status`. */
export const AGENT_STATUS_FIELDS = fields({ name: 'status', type: literal('idle', 'running'), required: true });
/** `POST /api/v1/workspaces`, `PUT /api/v1/workspaces/active`. */
export const WORKSPACE_FIELDS = fields({ name: 'workspace', type: str, required: true });

/** A validated `window`. */
export type WindowBody = ModelValues<typeof WINDOW_FIELDS>;
/** A validated `route`. */
export type RouteBody = ModelValues<typeof ROUTE_FIELDS>;
/** A validated AppendEvents body: every event a JSON object. */
export type AppendEventsBody = Omit<ModelValues<typeof EVENTS_FIELDS>, 'events'> & { events: Array<Record<string, unknown>> };
/** A validated ProjectSurface body. */
export type ProjectSurfaceBody = ModelValues<typeof PROJECT_FIELDS>;
/** A validated Compress body. */
export type CompressBody = ModelValues<typeof COMPRESS_FIELDS>;
/** A validated SearchContext body. */
export type SearchContextBody = ModelValues<typeof SEARCH_CONTEXT_FIELDS>;
/** A validated RecoverOverflow body. */
export type RecoverOverflowBody = ModelValues<typeof RECOVER_FIELDS>;
/** A validated ReportAgentStatus body. */
export type AgentStatusBody = ModelValues<typeof AGENT_STATUS_FIELDS>;
/** A validated workspace body. */
export type WorkspaceBody = ModelValues<typeof WORKSPACE_FIELDS>;

/**
 * Validate a body against `fields`. An absent body counts as `{}`, so routes whose fields are
 * all optional accept an empty POST.
 * @throws RequestValidationError
 */
export function sessionLogBody<const F extends readonly FieldSpec[]>(raw: unknown, fields: F): ModelValues<F> {
  const r = validateModel(raw === undefined || raw === null || raw === '' ? {} : raw, fields);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.model.values;
}

/**
 * An AppendEvents body: the model, then every event a JSON object (each one that is not is
 * reported at `["body", "events", i]`).
 * @throws RequestValidationError
 */
export function validateAppendEventsBody(raw: unknown): AppendEventsBody {
  const b = sessionLogBody(raw, EVENTS_FIELDS);
  const issues: ValidationIssue[] = [];
  const events: Array<Record<string, unknown>> = [];
  b.events.forEach((e, i) => {
    if (isPlainObject(e)) events.push(e);
    else issues.push({ loc: ['body', 'events', i], msg: 'Input should be a valid dictionary', type: 'dict_type' });
  });
  if (issues.length > 0) throw new RequestValidationError(issues);
  return { ...b, events };
}

const AGENT_STATUS_SEGMENT = /^(.+):status$/;

/**
 * The agent of an `{aid}:status` path segment. (find-my-way cannot put a literal after a
 * parameter inside a segment, so the route matches the whole segment and the suffix is read here.)
 * @returns the agent id, or null when the segment is not `…:status` (no such route: a 404)
 * @throws DomainError INVALID_ARGUMENT for an agent id that breaks the kernel's id rule
 */
export function agentOfStatusSegment(segment: string): string | null {
  const m = AGENT_STATUS_SEGMENT.exec(segment);
  if (!m) return null;
  const agentId = m[1]!;
  if (!isAgentId(agentId)) throw invalidArgument(`Invalid agent id '${agentId}': ${SESSION_ID_RULE}`);
  return agentId;
}

/**
 * Decompress's page from the query (overflow-recovery §3.6: clamp, never reject): `offset`
 * (default 0) and `limit`, where 0 is the wire's "absent" (a full page) and an explicit 0 or
 * less clamps to 1.
 */
export function decompressPage(query: unknown): { offset: number; limit: number } {
  const offset = pagingQuery(query, 'offset') ?? 0;
  const limit = pagingQuery(query, 'limit');
  return { offset, limit: limit === undefined ? 0 : Math.max(1, limit) };
}
