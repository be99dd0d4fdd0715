/**
 * Retrieve (retrieve-contract) on the wire: a validated body as an `orchestrator.RetrieveRequest`
 * and the orchestrator's answer as the contract's `result`.
 */
import { common, type orchestrator } from '@ctxmesh/proto';
import type { Caller, RetrieveParams } from '../domain';
import { retrieveExplainJson, type RetrieveExplainJson } from './explain';
import { protoIdentity } from './identity';

/** A passage of the answer. */
export interface PassageJson {
  id: string;
  uri: string;
  doc_uri: string;
  text: string;
  score: number;
  tokens: number;
  citation: string;
}

/** The `result` of a retrieve, keys in contract order. */
export interface RetrieveResultJson {
  passages: PassageJson[];
  memories: Array<{ uri: string; text: string; score: number; tokens: number; subject: string }>;
  groupMemories: Array<{ uri: string; text: string; score: number; tokens: number }>;
  citations: Array<{ id: string; doc_uri: string; title: string; passage_ids: string[] }>;
  tokens_total: number;
  dropped_count: number;
  searchMeta: { degradedStages: string[]; stageMs: Record<string, number>; budgetMs: number | null };
  trace_id: string | null;
  /** Only with `explain: true` (issue 14). */
  explain?: RetrieveExplainJson;
}

/**
 * A validated body as an `orchestrator.RetrieveRequest`: the body's workspace (else the
 * caller's `X-Workspace`) rides in the identity; absent optional fields stay absent.
 */
export function toRetrieveRequest(p: RetrieveParams, caller: Caller): orchestrator.RetrieveRequest {
  return {
    identity: protoIdentity({ ...caller, workspace: p.workspace ?? caller.workspace }),
    query: p.query,
    subject: p.subject ?? '',
    topK: p.topK,
    memoryK: p.memoryK,
    mmrLambda: p.mmrLambda ?? undefined,
    maxPerDocument: p.maxPerDocument,
    asOfMs: p.asOfMs ?? undefined,
    tokenBudget: p.tokenBudget ?? undefined,
    timeBudgetMs: p.timeBudgetMs ?? undefined,
    stages: Object.entries(p.stages).map(([name, enabled]) => ({ name, enabled: enabled === true })),
    tokenizer: p.tokenizer,
    explain: p.explain === true,
  };
}

/** `stageMs`: the stages that ran, ms rounded to 0.01, in run order. */
export function stageMsOf(stages: readonly common.StageResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of stages) if (s.status !== common.StageStatus.STAGE_STATUS_SKIPPED) out[s.stage] = Math.round(s.durationMs * 100) / 100;
  return out;
}

/** The orchestrator's answer as the contract's `result`. */
export function retrieveResult(res: orchestrator.RetrieveResponse): RetrieveResultJson {
  const out: RetrieveResultJson = {
    passages: res.passages.map((p) => ({ id: p.id, uri: p.uri, doc_uri: p.docUri, text: p.text, score: p.score, tokens: p.tokens, citation: p.citation })),
    memories: res.memories.map((m) => ({ uri: m.uri, text: m.text, score: m.score, tokens: m.tokens, subject: m.subject })),
    groupMemories: res.groupMemories.map((m) => ({ uri: m.uri, text: m.text, score: m.score, tokens: m.tokens })),
    citations: res.citations.map((c) => ({ id: c.id, doc_uri: c.docUri, title: c.title, passage_ids: [...c.passageIds] })),
    tokens_total: res.tokensTotal,
    dropped_count: res.droppedCount,
    searchMeta: { degradedStages: [...res.degradedStages], stageMs: stageMsOf(res.stages), budgetMs: res.budgetMs ?? null },
    trace_id: res.traceId || null,
  };
  if (res.explain) out.explain = retrieveExplainJson(res.explain);
  return out;
}
