/**
 * Pure mapping between the validated search parameters (`../domain`) and the orchestrator's
 * messages, and from its answers to the exact `result` objects of context-contract §1.6.
 */
import { CATEGORIES, blockTokenAccount, detailToWire, type DeprecatedStats, type Tier } from '@ctxmesh/kernel';
import type { orchestrator } from '@ctxmesh/proto';
import type { Caller, ContextParams, FindParams } from '../domain';
import { contextExplainJson, type ContextExplainJson } from './explain';
import { filterToWire } from './filter';
import { protoIdentity } from './identity';
import { statsJson } from './stats';

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
    filter: filterToWire(p.filter),
    limit: p.limit,
    scoreThreshold: p.scoreThreshold ?? undefined,
    levels: p.levels ? [...p.levels] : [],
    sessionId: sessionId ?? '',
    asOfMs: p.asOfMs,
  };
}

/**
 * Context parameters (from `/search` mode context or the `/recall` folding) as an
 * `orchestrator.AssembleContextRequest`: quotas as NamedCount in their resolved order
 * (`bucketed` = quotas present, even `{}`), penalties as NamedValue over all seven categories
 * in contract order, `detail` absent for no pin, `rewrite` "off" | "on" | "auto",
 * `time_budget_ms` 0 for none, `packing` "" when the request named none (the server's default).
 */
export function toAssembleContextRequest(p: ContextParams, caller: Caller): orchestrator.AssembleContextRequest {
  return {
    identity: protoIdentity(caller),
    query: p.query,
    imageUrl: p.imageUrl ?? '',
    filter: filterToWire(p.filter),
    limit: p.limit,
    scoreThreshold: p.scoreThreshold ?? undefined,
    sessionId: p.sessionId ?? '',
    queryExpansion: p.queryExpansion,
    maxTokens: p.maxTokens,
    bucketed: p.quotas !== null,
    quotas: Object.entries(p.quotas ?? {}).map(([name, count]) => ({ name, count: count ?? 0 })),
    purpose: p.purpose ?? '',
    detail: detailToWire(p.detail),
    dedupTurns: p.dedupTurns,
    excludeUris: [...p.excludeUris],
    peerScope: p.peerScope,
    otherPeerPenalties: CATEGORIES.map((name) => ({ name, value: p.otherPeerPenalties[name] })),
    rewrite: p.rewrite,
    rewriteMaxBullets: p.rewriteMaxBullets,
    tokenizer: p.tokenizer,
    asOfMs: p.asOfMs,
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
  /** Only with `explain: true` (issue 14). */
  explain?: ContextExplainJson;
}

/** Route-specific parts of a context result. */
export interface ContextShaping {
  /** False for `/recall` with `render:false`: `rendered` becomes "". @default true */
  render?: boolean;
  /** `stats.ignored`: request fields the mode ignores (written only when not empty). @default [] */
  ignored?: readonly string[];
  /** `/recall`'s `stats.deprecated`, appended last. */
  deprecated?: DeprecatedStats;
}

/**
 * `AssembleContextResponse` → context `result` (§1.6): entries in §6.2 key order, `stats` in
 * §6.3 key order ({@link statsJson}) with `ignored` in its place and `/recall`'s `deprecated`
 * last, and `explain` only when the orchestrator sent one.
 */
export function contextResult(res: orchestrator.AssembleContextResponse, shaping: ContextShaping = {}): ContextResultJson {
  const stats = statsJson(res.stats, shaping.ignored);
  if (shaping.deprecated) stats.deprecated = shaping.deprecated;
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
  if (res.explain) {
    // The account of the block as served: `rendered` when it was rendered and no digest replaced it.
    const packing = res.stats?.packing || res.explain.packing;
    const account = res.rendered !== '' ? blockTokenAccount(res.rendered, res.entries.map((e) => ({ uri: e.uri, category: e.category, score: e.score, detail: e.detail as Tier, text: e.text })), packing, res.stats?.tokenizer ?? '') : null;
    out.explain = contextExplainJson(res.explain, account);
  }
  return out;
}
