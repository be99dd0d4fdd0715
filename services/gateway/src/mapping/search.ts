/**
 * Pure mapping between the validated search parameters (`../domain`) and the orchestrator's
 * messages, and from its answers to the exact success envelopes of context-contract §1.6.
 */
import { CATEGORIES, type DeprecatedStats } from '@ctxmesh/kernel';
import { common, type orchestrator } from '@ctxmesh/proto';
import type { ContextParams, FindParams, Identity } from '../domain';

/** The caller as the mesh sees it. */
export interface Caller extends Identity {
  /** Workspace slug ("" = the default workspace). */
  workspace: string;
}

const ROLE: Readonly<Record<Identity['role'], common.Role>> = {
  root: common.Role.ROLE_ROOT,
  admin: common.Role.ROLE_ADMIN,
  user: common.Role.ROLE_USER,
};

/** `ctxmesh.common.v1.Identity` of a caller (actor peer "" when absent). */
export function protoIdentity(c: Caller): common.Identity {
  return {
    accountId: c.accountId,
    userId: c.userId,
    role: ROLE[c.role],
    actorPeerId: c.actorPeerId ?? '',
    workspace: c.workspace,
    requestId: c.requestId,
  };
}

/** A filter tree as `filter_json` ("" = none). */
export function filterJson(filter: unknown): string {
  return filter === null || filter === undefined ? '' : JSON.stringify(filter);
}

/**
 * `/find` and `/search` list-mode parameters as an `orchestrator.SearchRequest`.
 * @param sessionId list-mode session for intent analysis (null = none)
 */
export function toSearchRequest(p: FindParams, caller: Caller, sessionId: string | null = null): orchestrator.SearchRequest {
  return {
    identity: protoIdentity(caller),
    query: p.query,
    imageUrl: p.imageUrl ?? '',
    targetUris: [...p.targetUris],
    filterJson: filterJson(p.filter),
    limit: p.limit,
    scoreThreshold: p.scoreThreshold ?? undefined,
    levels: p.levels ? [...p.levels] : [],
    sessionId: sessionId ?? '',
    asOf: p.asOf ?? '',
  };
}

/**
 * Context parameters (from `/search` mode context or the `/recall` folding) as an
 * `orchestrator.AssembleContextRequest`: quotas as NamedCount in their resolved order
 * (`bucketed` = quotas present, even `{}`), penalties as NamedValue over all seven categories
 * in contract order, `detail_json` "" for no pin, `rewrite` "off" | "on" | "auto",
 * `time_budget_ms` 0 for none, `packing` "" when the request named none (the server's default).
 */
export function toAssembleContextRequest(p: ContextParams, caller: Caller): orchestrator.AssembleContextRequest {
  return {
    identity: protoIdentity(caller),
    query: p.query,
    imageUrl: p.imageUrl ?? '',
    filterJson: filterJson(p.filter),
    limit: p.limit,
    scoreThreshold: p.scoreThreshold ?? undefined,
    sessionId: p.sessionId ?? '',
    queryExpansion: p.queryExpansion,
    maxTokens: p.maxTokens,
    bucketed: p.quotas !== null,
    quotas: Object.entries(p.quotas ?? {}).map(([name, count]) => ({ name, count: count ?? 0 })),
    purpose: p.purpose ?? '',
    detailJson: p.detail === null ? '' : JSON.stringify(p.detail),
    dedupTurns: p.dedupTurns,
    excludeUris: [...p.excludeUris],
    peerScope: p.peerScope,
    otherPeerPenalties: CATEGORIES.map((name) => ({ name, value: p.otherPeerPenalties[name] })),
    rewrite: p.rewrite,
    rewriteMaxBullets: p.rewriteMaxBullets,
    tokenizer: p.tokenizer,
    ignored: [...p.ignored],
    asOf: p.asOf ?? '',
    timeBudgetMs: p.timeBudgetMs ?? 0,
    stages: [],
    // §4.4 rule 2: a code file's overview is its structural skeleton, on every context route.
    codeOutline: true,
    // "" lets the orchestrator apply the server's default (CTXMESH_CONTEXT_PACKING).
    packing: p.packing ?? '',
    explain: p.explain === true,
  };
}

/** One list-mode hit: exactly these keys, in this order (§1.6). */
export interface ListHitJson {
  context_type: string;
  uri: string;
  level: number;
  score: number;
  abstract: string;
  tags: string[];
}

/** The list-mode `result` (FindResult). */
export interface ListResultJson {
  memories: ListHitJson[];
  resources: ListHitJson[];
  skills: ListHitJson[];
  total: number;
  /** Only when intent analysis ran. */
  query_plan?: { reasoning: string; queries: Array<{ query: string; context_type: string | null; intent: string; priority: number }> };
}

function hit(h: orchestrator.ListHit): ListHitJson {
  return { context_type: h.contextType, uri: h.uri, level: h.level, score: h.score, abstract: h.abstract, tags: [...h.tags] };
}

/** `SearchResponse` → list `result`; `total` = number of hits; `query_plan` only when present. */
export function listResult(res: orchestrator.SearchResponse): ListResultJson {
  const out: ListResultJson = {
    memories: res.memories.map(hit),
    resources: res.resources.map(hit),
    skills: res.skills.map(hit),
    total: res.memories.length + res.resources.length + res.skills.length,
  };
  if (res.hasQueryPlan) {
    out.query_plan = {
      reasoning: res.queryPlanReasoning,
      queries: res.queryPlan.map((q) => ({ query: q.query, context_type: q.contextType === '' ? null : q.contextType, intent: q.intent, priority: q.priority })),
    };
  }
  return out;
}

/** One context entry: `{uri, category, score, detail, text, origin}` in that order (§6.2). */
export interface EntryJson {
  uri: string;
  category: string;
  score: number;
  detail: string;
  text: string;
  /** Omitted only when empty. */
  origin?: string;
}

/** The context-mode `result`. */
export interface ContextResultJson {
  entries: EntryJson[];
  rendered: string;
  digest: string;
  stats: Record<string, unknown>;
  /** Only with `explain: true` (issue 14): the orchestrator's explain object, as it sent it. */
  explain?: Record<string, unknown>;
}

/** Thrown when the orchestrator's `stats_json` is not a JSON object (a mesh fault → 500). */
export class StatsJsonError extends Error {
  override readonly name = 'StatsJsonError';
}

/**
 * Parse `stats_json` keeping the orchestrator's key order. "" is an empty object.
 * @throws StatsJsonError when it is not a JSON object
 */
export function parseStats(json: string): Record<string, unknown> {
  if (json === '') return {};
  return parseJsonObject(json, 'stats_json');
}

/**
 * Parse a JSON object field of a mesh answer, keeping its key order.
 * @throws StatsJsonError when it is not a JSON object
 */
export function parseJsonObject(json: string, field: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch (e) {
    throw new StatsJsonError(`${field} is not JSON: ${(e as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new StatsJsonError(`${field} is not a JSON object`);
  return v as Record<string, unknown>;
}

/** Route-specific parts of a context result. */
export interface ContextShaping {
  /** False for `/recall` with `render:false`: `rendered` becomes "". @default true */
  render?: boolean;
  /** `/recall`'s `stats.deprecated`, appended last. */
  deprecated?: DeprecatedStats;
}

/**
 * `AssembleContextResponse` → context `result` (§1.6): entries in §6.2 key order, `stats`
 * from `stats_json` with its key order (the orchestrator already placed `ignored`), and
 * `/recall`'s `deprecated` appended last.
 * @throws StatsJsonError on a malformed `stats_json`
 */
export function contextResult(res: orchestrator.AssembleContextResponse, shaping: ContextShaping = {}): ContextResultJson {
  const stats = parseStats(res.statsJson);
  if (shaping.deprecated) {
    // Re-inserting keeps "deprecated" last even if a downstream ever sent one.
    delete stats.deprecated;
    stats.deprecated = shaping.deprecated;
  }
  const out: ContextResultJson = {
    entries: res.entries.map((e) => {
      const entry: EntryJson = { uri: e.uri, category: e.category, score: e.score, detail: e.detail, text: e.text };
      if (e.origin !== '') entry.origin = e.origin;
      return entry;
    }),
    rendered: shaping.render === false ? '' : res.rendered,
    digest: res.digest,
    stats,
  };
  if (res.explainJson !== '') out.explain = parseJsonObject(res.explainJson, 'explain_json');
  return out;
}

/** The `telemetry` member of a success envelope. */
export interface TelemetryJson {
  /** The request id. */
  id: string;
  summary: {
    /** e.g. `search.search`. */
    operation: string;
    /** Gateway wall time so far, ms. */
    duration_ms: number;
    /** Orchestrator stages (context mode), in run order. */
    stages?: Array<{ stage: string; status: string; duration_ms: number; reason?: string }>;
  };
}

const STAGE_STATUS: Readonly<Record<number, string>> = {
  [common.StageStatus.STAGE_STATUS_OK]: 'ok',
  [common.StageStatus.STAGE_STATUS_SKIPPED]: 'skipped',
  [common.StageStatus.STAGE_STATUS_FAILED]: 'failed',
  [common.StageStatus.STAGE_STATUS_TIMEOUT]: 'timeout',
};

/** Build the `telemetry` member (requested with `telemetry: true` or `{"summary": true}`). */
export function telemetryOf(requestId: string, operation: string, durationMs: number, stages?: readonly common.StageResult[]): TelemetryJson {
  const t: TelemetryJson = { id: requestId, summary: { operation, duration_ms: Math.round(durationMs * 1000) / 1000 } };
  if (stages) {
    t.summary.stages = stages.map((s) => {
      const row: { stage: string; status: string; duration_ms: number; reason?: string } = {
        stage: s.stage,
        status: STAGE_STATUS[s.status] ?? 'unspecified',
        duration_ms: s.durationMs,
      };
      if (s.reason !== '') row.reason = s.reason;
      return row;
    });
  }
  return t;
}

/** `{"status":"ok","result":…}` plus `telemetry` only when given (§1.6: no `null` members). */
export function successEnvelope<R>(result: R, telemetry?: TelemetryJson | null): { status: 'ok'; result: R; telemetry?: TelemetryJson } {
  return telemetry ? { status: 'ok', result, telemetry } : { status: 'ok', result };
}
