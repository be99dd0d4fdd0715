/**
 * The `explain` object of context mode (issue 14): one row per candidate considered — the
 * kernel's fate of every candidate the plan saw (rank order), then gathering's fate of every
 * hit that never became a candidate (cooled, excluded, below threshold, over quota, below the
 * relevance floor) — plus the stage time line, the floor/upgrade split and the trace id. Built
 * only when the request asks for it; a request without `explain` keeps its bytes. The messages
 * are `ctxmesh.orchestrator.v1.ContextExplain` / `RetrieveExplain`; the gateway writes the JSON.
 */
import { categoryOfUri } from '@ctxmesh/kernel';
import type { common, gather, orchestrator } from '@ctxmesh/proto';
import type { StageRecord } from './stages';

/** What {@link contextExplain} reads from a finished pipeline. */
export interface ExplainInput {
  traceId: string | null;
  /** The packing that ran. */
  packing: string;
  /** Candidates in the order the plan saw them (for their origin). */
  candidates: readonly gather.Candidate[];
  /** Gathering's fates: the hits that are not candidates. */
  gatherFates: readonly common.CandidateFate[];
  /** The plan's fates, one per candidate, in candidate order. */
  planFates: readonly common.CandidateFate[];
  records: readonly StageRecord[];
  usedTokens: number;
  floorTokens: number;
}

const round2 = (ms: number) => Math.round(ms * 100) / 100;

/** The stage records as the explanation's time line: start offset and duration, ms rounded to 0.01. */
function stageLine(records: readonly StageRecord[]): orchestrator.ExplainStage[] {
  return records.map((r) => ({ stage: r.stage, outcome: r.outcome, startMs: round2(r.startMs), ms: round2(r.ms), reason: r.reason }));
}

/** A fate's tier costs (an unpriced or over-block tier is absent). */
function tokensOf(f: common.CandidateFate): orchestrator.TierTokens {
  const at = (tier: string) => {
    const n = f.costs.find((c) => c.tier === tier)?.tokens;
    return n !== undefined && Number.isFinite(n) ? n : undefined;
  };
  return { uri: at('uri'), abstract: at('abstract'), overview: at('overview'), full: at('full') };
}

function row(f: common.CandidateFate, rank: number | undefined, origin: string): orchestrator.ContextExplainRow {
  return {
    rank,
    uri: f.uri,
    category: f.category,
    origin,
    score: f.score,
    rankedScore: f.rankedScore,
    tier: f.tier,
    tokens: tokensOf(f),
    reason: f.fate,
    cooledTurn: f.fate === 'cooled' && f.cooledTurn !== undefined ? Number(f.cooledTurn) : undefined,
  };
}

/** Assemble the context explanation. */
export function contextExplain(input: ExplainInput): orchestrator.ContextExplain {
  const ranked = input.planFates.map((f, i) => row(f, i + 1, input.candidates[i]?.origin ?? ''));
  const left = input.gatherFates.map((f) => row(f, undefined, ''));
  return {
    traceId: input.traceId ?? '',
    packing: input.packing,
    stages: stageLine(input.records),
    floorTokens: input.floorTokens,
    upgradeTokens: input.usedTokens - input.floorTokens,
    candidates: [...ranked, ...left],
  };
}

/** Why a passage or memory of `/retrieve` is, or is not, in the answer. */
export type RetrieveExplainReason = 'served' | 'max_per_document' | 'top_k' | 'token_budget';

/** What {@link retrieveExplain} reads. */
export interface RetrieveExplainInput {
  traceId: string | null;
  retrievalTraceId: string | null;
  /** Passages in final rank order (after graph assist and rerank). */
  candidates: ReadonlyArray<{ uri: string; docUri: string; source: string; score: number; searchScore: number; rerankScore: number | null }>;
  /** Passages that reached the trim, with their ids (`p1…`). */
  ranked: ReadonlyArray<{ uri: string; id: string }>;
  /** Dropped passages and why (`max_per_document`, `top_k`, `token_budget`). */
  dropped: ReadonlyArray<{ uri: string; reason: string }>;
  /** Trim's token count per passage id. */
  passageTokens: ReadonlyMap<string, number>;
  memories: ReadonlyArray<{ uri: string; score: number; tokens: number; group: boolean }>;
  records: readonly StageRecord[];
}

/**
 * Assemble `/retrieve`'s explanation: the context rows' fields where they apply, plus what a
 * passage has (`kind`, `id`, `doc_uri`, `source`, `rerank_score`). `score` is the search score,
 * `ranked_score` the score the answer is ordered by (after graph assist and rerank); `tier` is
 * `passage`/`memory` when served; the tokens are the one text the entry carries.
 */
export function retrieveExplain(input: RetrieveExplainInput): orchestrator.RetrieveExplain {
  const idOf = new Map(input.ranked.map((r) => [r.uri, r.id]));
  const dropOf = new Map(input.dropped.map((d) => [d.uri, d.reason as RetrieveExplainReason]));
  const passages = input.candidates.map((c, i): orchestrator.RetrieveExplainRow => {
    const id = idOf.get(c.uri);
    const reason = dropOf.get(c.uri) ?? 'served';
    return {
      rank: i + 1,
      kind: 'passage',
      id: id ?? '',
      uri: c.uri,
      docUri: c.docUri,
      category: categoryOfUri(c.uri),
      source: c.source,
      score: c.searchScore,
      rankedScore: c.score,
      rerankScore: c.rerankScore ?? undefined,
      tier: reason === 'served' ? 'passage' : '',
      textTokens: id !== undefined ? input.passageTokens.get(id) : undefined,
      reason,
    };
  });
  const memories = input.memories.map(
    (m, i): orchestrator.RetrieveExplainRow => ({
      rank: undefined,
      kind: m.group ? 'group_memory' : 'memory',
      id: `m${i + 1}`,
      uri: m.uri,
      docUri: '',
      category: categoryOfUri(m.uri),
      source: 'search',
      score: m.score,
      rankedScore: m.score,
      rerankScore: undefined,
      tier: 'memory',
      textTokens: m.tokens,
      reason: 'served',
    }),
  );
  return {
    traceId: input.traceId ?? '',
    retrievalTraceId: input.retrievalTraceId ?? '',
    stages: stageLine(input.records),
    candidates: [...passages, ...memories],
  };
}
