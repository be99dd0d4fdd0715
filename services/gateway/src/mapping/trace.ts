/**
 * `ctxmesh.orchestrator.v1.RetrievalTrace` → the `result` of `GET /api/v1/traces/{id}`
 * (retrieve-contract "Traces"): the JSON keys, their order and the nulls of absent fields.
 */
import type { orchestrator } from '@ctxmesh/proto';
import { jsonNumber } from './stats';

const orNull = (n: number | undefined): number | null => (n === undefined ? null : jsonNumber(n));

/** An ISO-8601 instant (`YYYY-MM-DDTHH:MM:SS.mmmZ`) of ms since the epoch. */
const iso = (ms: number): string => new Date(ms).toISOString();

/** A retrieval trace as JSON. */
export function traceJson(t: orchestrator.RetrievalTrace): Record<string, unknown> {
  const p = t.params;
  const r = t.result;
  const entry = (e: orchestrator.TraceEntry) => ({ uri: e.uri, score: jsonNumber(e.score), tokens: e.tokens });
  return {
    trace_id: t.traceId,
    created_at: iso(t.createdAtMs),
    request_id: t.requestId || null,
    user: t.user,
    workspace: t.workspace,
    query: t.query,
    planned_queries: [...t.plannedQueries],
    params: {
      subject: p?.subject ?? '',
      top_k: p?.topK ?? 0,
      memory_k: p?.memoryK ?? 0,
      mmr_lambda: orNull(p?.mmrLambda),
      max_per_document: p?.maxPerDocument ?? 0,
      as_of: p?.asOfMs === undefined ? null : iso(p.asOfMs),
      token_budget: p?.tokenBudget ?? null,
      time_budget_ms: p?.timeBudgetMs ?? null,
      stages: { query_rewrite: p?.stages?.queryRewrite ?? false, graph_assist: p?.stages?.graphAssist ?? false, rerank: p?.stages?.rerank ?? false },
      tokenizer: p?.tokenizer ?? '',
    },
    stages: t.stages.map((s) => ({ stage: s.stage, outcome: s.outcome, ms: jsonNumber(s.ms), reason: s.reason || null, optional: s.optional })),
    degraded_stages: [...t.degradedStages],
    candidates: t.candidates.map((c) => ({
      uri: c.uri,
      doc_uri: c.docUri,
      score: jsonNumber(c.score),
      search_score: jsonNumber(c.searchScore),
      source: c.source,
      rerank_score: orNull(c.rerankScore),
    })),
    dropped: t.dropped.map((d) => ({ uri: d.uri, id: d.id || null, reason: d.reason })),
    result: {
      passages: (r?.passages ?? []).map((e) => ({ id: e.id, ...entry(e) })),
      memories: (r?.memories ?? []).map(entry),
      group_memories: (r?.groupMemories ?? []).map(entry),
      tokens_total: r?.tokensTotal ?? 0,
      dropped_count: r?.droppedCount ?? 0,
    },
  };
}
