/**
 * Body validation of `/find` (§1.2), `/search` (§1.3, both modes) and `/recall` (§1.4), then the
 * router-level checks (telemetry, URIs, filter), producing the normalised parameter objects the
 * orchestrator receives. Identity is resolved first (see `resolveIdentity`).
 */
import {
  EMPTY_QUERY_MESSAGE,
  foldRecall,
  normalizeDetailParam,
  normalizeQuotas,
  PACKINGS,
  resolvePenalties,
  rewriteModeOf,
  type ContextRequest,
  type DeprecatedStats,
  type RecallInput,
} from '@ctxmesh/kernel';
import type { FilterNode } from '@ctxmesh/stores';
import { invalidArgument, RequestValidationError } from './errors';
import { checkFilter, compileFilter, parseLevels } from './filter';
import type { Identity } from './headers';
import {
  any,
  bool,
  dict,
  float,
  int32,
  INT32_MAX,
  intRange,
  list,
  literal,
  nullable,
  str,
  union,
  validateModel,
  fields,
  type FieldSpec,
  type ModelOutcome,
  type ModelValues,
} from './schema';
import { parseAsOf } from './retrieve';
import { parseTelemetry } from './telemetry';
import { assertTargetsAccessible, MAX_EXCLUDE_URIS, normalizeExcludeUris, resolveImageUrl, resolveTargetUris } from './uris';

/** Quota keys accepted in context mode and `/recall`. */
export const ALLOWED_QUOTA_KEYS = ['events', 'entities', 'preferences', 'experiences', 'resources', 'skills'] as const;
/** `detail` object keys: the quota keys plus `memories`. */
export const ALLOWED_DETAIL_KEYS = [...ALLOWED_QUOTA_KEYS, 'memories'] as const;
/** Tokenizers a context request may name. */
export const TOKENIZER_NAMES = ['estimate', 'o200k_base', 'cl100k_base'] as const;
/** Packings a context request may name (`compat` = the contract's kernel, `evidence` = ctxmesh's). */
export const PACKING_NAMES = PACKINGS;

/**
 * Fields that require `mode:"context"` on `/search`: the contract's eleven plus this
 * project's additions `tokenizer`, `time_budget_ms` and `packing`.
 */
export const CONTEXT_ONLY_FIELDS = [
  'query_expansion',
  'max_tokens',
  'quotas',
  'purpose',
  'detail',
  'dedup_turns',
  'exclude_uris',
  'peer_scope',
  'other_peer_penalty',
  'rewrite',
  'rewrite_max_bullets',
  'tokenizer',
  'time_budget_ms',
  'packing',
  'explain',
] as const;

const detailType = nullable(union(literal('auto', 'abstract', 'overview', 'full'), dict(literal('abstract', 'overview', 'full'))));
const penaltyType = nullable(union(float, dict(float)));
const rewriteType = union(bool, literal('auto'));
const telemetryType = union(bool, dict(any));

/** `FindRequest` fields in declaration order. */
export const FIND_FIELDS = fields(
  { name: 'query', type: str },
  { name: 'image_url', type: nullable(str) },
  { name: 'target_uri', type: union(str, list(str)) },
  { name: 'context_type', type: nullable(union(str, list(str))) },
  { name: 'limit', type: int32 },
  { name: 'node_limit', type: nullable(int32) },
  { name: 'score_threshold', type: nullable(float) },
  { name: 'filter', type: nullable(dict(any)) },
  { name: 'include_provenance', type: bool },
  { name: 'tags', type: nullable(list(str)) },
  { name: 'since', type: nullable(str) },
  { name: 'until', type: nullable(str) },
  { name: 'time_field', type: nullable(literal('updated_at', 'created_at')) },
  { name: 'level', type: nullable(union(int32, str, list(int32))) },
  { name: 'telemetry', type: telemetryType },
  // ctxmesh addition (retrieve-contract `as_of`): a valid-time instant, both /search modes.
  { name: 'as_of', type: nullable(str) },
);

/** The last fields of both context-mode models, `/search` and `/recall`, in declaration order. */
const CONTEXT_TAIL_FIELDS = fields(
  { name: 'rewrite', type: rewriteType },
  { name: 'rewrite_max_bullets', type: intRange({ ge: 1, le: 20 }) },
  { name: 'tokenizer', type: literal(...TOKENIZER_NAMES) },
  { name: 'time_budget_ms', type: intRange({ ge: 1, le: INT32_MAX }) },
  { name: 'packing', type: literal(...PACKING_NAMES) },
  // ctxmesh addition (issue 14): answer with `explain`.
  { name: 'explain', type: bool },
);

/** `SearchRequest` fields in declaration order. */
export const SEARCH_FIELDS = fields(
  ...FIND_FIELDS,
  { name: 'session_id', type: nullable(str) },
  { name: 'mode', type: literal('list', 'context') },
  { name: 'query_expansion', type: literal('off', 'auto') },
  { name: 'max_tokens', type: intRange({ ge: 64, le: 32000 }) },
  { name: 'quotas', type: nullable(dict(int32)) },
  { name: 'purpose', type: nullable(literal('chat', 'coding')) },
  { name: 'detail', type: detailType },
  { name: 'dedup_turns', type: intRange({ ge: 0, le: 100 }) },
  { name: 'exclude_uris', type: list(str, { maxLength: MAX_EXCLUDE_URIS }) },
  { name: 'peer_scope', type: literal('actor', 'all') },
  { name: 'other_peer_penalty', type: penaltyType },
  ...CONTEXT_TAIL_FIELDS,
);

/** `RecallRequest` fields in declaration order. */
export const RECALL_FIELDS = fields(
  { name: 'query', type: str, required: true },
  { name: 'quotas', type: nullable(dict(int32)) },
  { name: 'max_chars', type: int32 },
  { name: 'min_score', type: float },
  { name: 'peer_scope', type: literal('actor', 'all') },
  { name: 'other_peer_penalty', type: penaltyType },
  { name: 'render', type: union(bool, literal('full', 'compact')) },
  { name: 'telemetry', type: telemetryType },
  { name: 'session_id', type: nullable(str) },
  { name: 'query_expansion', type: nullable(literal('off', 'auto')) },
  { name: 'max_tokens', type: nullable(intRange({ ge: 64, le: 32000 })) },
  { name: 'purpose', type: nullable(literal('chat', 'coding')) },
  { name: 'detail', type: detailType },
  { name: 'score_threshold', type: nullable(float) },
  { name: 'dedup_turns', type: nullable(intRange({ ge: 0, le: 100 })) },
  { name: 'exclude_uris', type: list(str, { maxLength: MAX_EXCLUDE_URIS }) },
  ...CONTEXT_TAIL_FIELDS,
);

/** What body validation needs from the caller and the clock. */
export interface RequestContext {
  /** The resolved caller. */
  identity: Pick<Identity, 'userId' | 'role'>;
  /** "Now" for relative `since`/`until`, ms since epoch. */
  nowMs: number;
}

/** `/find` parameters (also `/search` list mode, which adds `sessionId`). */
export interface FindParams {
  query: string;
  /** Resolved image query, or null. */
  imageUrl: string | null;
  /** Resolved targets; empty = default scope. */
  targetUris: string[];
  /** Effective filter (§1.8), or null. */
  filter: FilterNode | null;
  /** `node_limit` if given, else `limit`. @default 10 */
  limit: number;
  scoreThreshold: number | null;
  /** @default false */
  includeProvenance: boolean;
  /** Levels to keep, or null for all. */
  levels: number[] | null;
  /** True when the response must carry `telemetry`. */
  telemetry: boolean;
  /** Valid-time instant (`as_of`), ms since the epoch; absent = now. */
  asOfMs?: number;
}

/** `/search` list-mode parameters. */
export interface SearchListParams extends FindParams {
  /** Session for intent analysis, or null. */
  sessionId: string | null;
}

/** Context-mode parameters: the kernel's context request plus the envelope's telemetry flag. */
export interface ContextParams extends ContextRequest<FilterNode> {
  /** True when the response must carry `telemetry`. */
  telemetry: boolean;
  /** Valid-time instant (`as_of`), ms since the epoch; absent = now. */
  asOfMs?: number;
  /** `explain: true`: the answer carries `explain` (absent = false, and the answer keeps its bytes). */
  explain?: boolean;
}

/** `/recall` parameters: context parameters plus `stats.deprecated`. */
export interface RecallParams extends ContextParams {
  /** `stats.deprecated` (§9.4). */
  deprecated: DeprecatedStats;
}

/** A validated `/search` body. */
export type SearchParams = { mode: 'list'; params: SearchListParams } | { mode: 'context'; params: ContextParams };

/** A `/find` or `/search` body that is not JSON: FastAPI's `json_invalid` at `["body", position]`. */
export function invalidJsonBody(position: number): RequestValidationError {
  return new RequestValidationError([{ loc: ['body', position], msg: 'JSON decode error', type: 'json_invalid' }]);
}

function valueError(message: string): RequestValidationError {
  return new RequestValidationError([{ loc: ['body'], msg: `Value error, ${message}`, type: 'value_error' }]);
}

/** Python's `sorted()` on strings: code point order. */
function pySorted(xs: readonly string[]): string[] {
  return [...xs].sort((a, b) => {
    const A = Array.from(a, (c) => c.codePointAt(0)!);
    const B = Array.from(b, (c) => c.codePointAt(0)!);
    for (let i = 0; i < Math.min(A.length, B.length); i++) if (A[i] !== B[i]) return A[i] - B[i];
    return A.length - B.length;
  });
}

function unknownKeys(obj: unknown, allowed: readonly string[]): string[] {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return [];
  return pySorted(Object.keys(obj).filter((k) => !allowed.includes(k)));
}

/** Context-mode key checks shared with `/recall` (model validator, loc `["body"]`). */
function checkContextKeys(values: Pick<RecallValues, 'quotas' | 'detail'>): void {
  const badQuotas = unknownKeys(values.quotas, ALLOWED_QUOTA_KEYS);
  if (badQuotas.length) throw valueError(`unknown quota keys: ${badQuotas.join(', ')}; allowed: ${ALLOWED_QUOTA_KEYS.join(', ')}`);
  const badDetail = unknownKeys(values.detail, ALLOWED_DETAIL_KEYS);
  if (badDetail.length) throw valueError(`unknown detail keys: ${badDetail.join(', ')}; allowed: ${ALLOWED_DETAIL_KEYS.join(', ')}`);
}

function validated<const F extends readonly FieldSpec[]>(body: unknown, fields: F): ModelOutcome<ModelValues<F>> {
  const r = validateModel(body, fields);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.model;
}

/** A validated `/find` body (list mode reads only these fields). */
type FindValues = ModelValues<typeof FIND_FIELDS>;
/** A validated `/search` body. */
type SearchValues = ModelValues<typeof SEARCH_FIELDS>;
/** A validated `/recall` body. */
type RecallValues = ModelValues<typeof RECALL_FIELDS>;

function filterOf(v: FindValues, nowMs: number): FilterNode | null {
  return compileFilter(
    { filter: v.filter ?? null, contextType: v.context_type, tags: v.tags, since: v.since, until: v.until, timeField: v.time_field },
    nowMs,
  );
}

/**
 * The effective filter checked for the stores ({@link checkFilter}). Called after every other
 * check of a body: gathering used to run this check, after the gateway's, so a body with
 * several problems still reports the same one first.
 */
function checkedLast(compiled: FilterNode | null, v: FindValues): FilterNode | null {
  // The client's own tree first, so a problem in it is named by the client's path (the
  // effective filter flattens nested ands and appends the other conditions).
  const own = v.filter;
  if (own !== null && own !== undefined && Object.keys(own).length > 0) checkFilter(own);
  return compiled === null ? null : checkFilter(compiled);
}

/** `{asOfMs}` when the body names an instant, else nothing (absent = now, and the parameters keep their v1 shape). */
function asOfOf(v: FindValues): { asOfMs?: number } {
  const asOfMs = parseAsOf(v.as_of);
  return asOfMs === null ? {} : { asOfMs };
}

function limitOf(v: FindValues): number {
  return v.node_limit ?? v.limit ?? 10;
}

function listParams(v: FindValues, ctx: RequestContext): FindParams {
  const telemetry = parseTelemetry(v.telemetry);
  const targetUris = resolveTargetUris(v.target_uri, ctx.identity.userId);
  assertTargetsAccessible(targetUris, ctx.identity);
  const imageUrl = resolveImageUrl(v.image_url, ctx.identity.userId);
  const compiled = filterOf(v, ctx.nowMs);
  const levels = parseLevels(v.level);
  const query = v.query ?? '';
  // Retrieval rejects this before searching; checking last keeps the reference's order.
  if (query.trim() === '' && !imageUrl) throw invalidArgument(EMPTY_QUERY_MESSAGE);
  const asOf = asOfOf(v);
  return {
    query,
    imageUrl,
    targetUris,
    filter: checkedLast(compiled, v),
    limit: limitOf(v),
    scoreThreshold: v.score_threshold ?? null,
    includeProvenance: v.include_provenance ?? false,
    levels,
    telemetry,
    ...asOf,
  };
}

/**
 * Validate a `/find` body.
 * @throws RequestValidationError (400, variant 1) or DomainError (INVALID_URI,
 *   PERMISSION_DENIED, INVALID_ARGUMENT for context_type/tags/time/image_url/level/telemetry
 *   and a blank query without image)
 */
export function validateFindBody(body: unknown, ctx: RequestContext): FindParams {
  return listParams(validated(body, FIND_FIELDS).values, ctx);
}

/**
 * Validate a `/search` body: field validation, then the mode cross-validation (list mode with
 * any context-only field present; context mode with a truthy `target_uri`; unknown quota or
 * detail keys), then the router checks of the selected mode.
 * @throws RequestValidationError or DomainError (see {@link validateFindBody}; in context mode
 *   a blank query is not rejected here: gathering rejects it when it makes a retrieval call)
 */
export function validateSearchBody(body: unknown, ctx: RequestContext): SearchParams {
  const { values, provided } = validated(body, SEARCH_FIELDS);
  const mode = values.mode ?? 'list';
  if (mode === 'list') {
    const present = CONTEXT_ONLY_FIELDS.filter((f) => provided.has(f));
    if (present.length) throw valueError(`${pySorted(present).join(', ')} require mode='context'; set mode='context' or drop these fields`);
    return { mode, params: { ...listParams(values, ctx), sessionId: values.session_id ?? null } };
  }
  const target = values.target_uri;
  if (target !== undefined && target.length > 0) throw valueError("target_uri is not supported in mode='context'");
  checkContextKeys(values);
  return { mode, params: contextParams(values, provided, ctx) };
}

function contextParams(v: SearchValues, provided: ReadonlySet<string>, ctx: RequestContext): ContextParams {
  const telemetry = parseTelemetry(v.telemetry);
  const imageUrl = resolveImageUrl(v.image_url, ctx.identity.userId);
  const excludeUris = normalizeExcludeUris(v.exclude_uris, ctx.identity.userId);
  const compiled = filterOf(v, ctx.nowMs);
  const purpose = v.purpose ?? null;
  const quotas = normalizeQuotas(v.quotas ?? null, purpose);
  const ignored: string[] = [];
  if (v.level !== undefined && v.level !== null) ignored.push('level');
  if (quotas !== null && (provided.has('limit') || (v.node_limit !== undefined && v.node_limit !== null))) ignored.push('limit');
  const penalties = resolvePenalties(v.other_peer_penalty ?? null);
  const asOf = asOfOf(v);
  return {
    query: v.query ?? '',
    imageUrl,
    filter: checkedLast(compiled, v),
    limit: limitOf(v),
    scoreThreshold: v.score_threshold ?? null,
    sessionId: v.session_id ?? null,
    queryExpansion: v.query_expansion ?? 'auto',
    maxTokens: v.max_tokens ?? 1600,
    quotas,
    purpose,
    detail: normalizeDetailParam(v.detail),
    dedupTurns: v.dedup_turns ?? 0,
    excludeUris,
    peerScope: v.peer_scope ?? 'all',
    otherPeerPenalties: penalties,
    rewrite: rewriteModeOf(v.rewrite ?? false),
    rewriteMaxBullets: v.rewrite_max_bullets ?? 6,
    tokenizer: v.tokenizer ?? 'estimate',
    ignored,
    timeBudgetMs: v.time_budget_ms ?? null,
    render: true,
    packing: v.packing ?? null,
    telemetry,
    ...asOf,
    ...explainOf(v),
  };
}

/** `{explain: true}` when the body asks for it, else nothing (the parameters keep their v1 shape). */
function explainOf(v: { explain?: boolean }): { explain?: true } {
  return v.explain === true ? { explain: true } : {};
}

/**
 * Validate a `/recall` body and fold it into context parameters (§9.1) with `stats.deprecated`.
 * @throws RequestValidationError (incl. missing `query`, null `max_chars`/`min_score`, unknown
 *   quota/detail keys) or DomainError (telemetry, `exclude_uris`)
 */
export function validateRecallBody(body: unknown, ctx: Pick<RequestContext, 'identity'>): RecallParams {
  const { values } = validated(body, RECALL_FIELDS);
  checkContextKeys(values);
  const telemetry = parseTelemetry(values.telemetry);
  const { explain: _explain, telemetry: _telemetry, ...recall } = values;
  const input: RecallInput = { ...recall };
  if (values.exclude_uris !== undefined) input.exclude_uris = normalizeExcludeUris(values.exclude_uris, ctx.identity.userId);
  const { request, deprecated } = foldRecall(input);
  return { ...request, filter: null, telemetry, deprecated, ...explainOf(values) };
}
