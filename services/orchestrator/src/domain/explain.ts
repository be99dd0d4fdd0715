/**
 * The `explain` object of context mode (issue 14): one row per candidate considered — the
 * kernel's fate of every candidate the plan saw (rank order), then gathering's fate of every
 * hit that never became a candidate (cooled, excluded, below threshold, over quota, below the
 * relevance floor) — plus the stage time line, the floor/upgrade split and the trace id. Built
 * only when the request asks for it; a request without `explain` keeps its bytes.
 */
import { categoryOfUri } from '@ctxmesh/kernel';
import type { common, gather } from '@ctxmesh/proto';
import type { StageRecord } from './stages';

/** Why a candidate is, or is not, in the block. */
export type ExplainReason = 'served' | 'below_threshold' | 'cooled' | 'excluded' | 'deduped' | 'budget' | 'quota' | 'relevance_floor';

/** One row of `explain.candidates`. */
export interface ExplainRow {
  /** 1-based rank among the candidates the plan saw; null for a hit gathering left out. */
  rank: number | null;
  uri: string;
  category: string;
  /** `actor_peer`, `self`, `other_peer`; null for a hit that never became a candidate. */
  origin: string | null;
  /** Retrieval score. */
  score: number;
  /** The score ranking compared (penalties applied). */
  ranked_score: number;
  /** Served tier, or null. */
  tier: string | null;
  /**
   * Fragment tokens per tier in the request's tokenizer (separator excluded); null where the tier
   * has no text, the fragment alone is larger than the whole block, or the stage that decided
   * the fate did not price it.
   */
  tokens: { uri: number | null; abstract: number | null; overview: number | null; full: number | null };
  reason: ExplainReason;
  /** With `cooled` only: the session turn the URI was served in. */
  cooled_turn?: number;
}

/** The `explain` object. */
export interface ContextExplain {
  /** OpenTelemetry trace id of the request, or null when tracing is off. */
  trace_id: string | null;
  packing: string;
  /** Every stage in run order: start offset and duration, ms (0.01). */
  stages: Array<{ stage: string; outcome: string; start_ms: number; ms: number; reason?: string }>;
  /** Tokens placed breadth first, and added by the upgrade passes (they sum to `used_tokens`). */
  fill: { floor_tokens: number; upgrade_tokens: number };
  candidates: ExplainRow[];
}

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

/** The stage records as `explain.stages`: start offset and duration, ms rounded to 0.01. */
function stageLine(records: readonly StageRecord[]): ContextExplain['stages'] {
  return records.map((r) => ({ stage: r.stage, outcome: r.outcome, start_ms: round2(r.startMs), ms: round2(r.ms), ...(r.reason ? { reason: r.reason } : {}) }));
}

/** A fate's tier costs as the row's `tokens` (an unpriced or over-block tier is null). */
function tokensOf(f: common.CandidateFate): ExplainRow['tokens'] {
  const at = (tier: string) => {
    const n = f.costs.find((c) => c.tier === tier)?.tokens;
    return n !== undefined && Number.isFinite(n) ? n : null;
  };
  return { uri: at('uri'), abstract: at('abstract'), overview: at('overview'), full: at('full') };
}

function row(f: common.CandidateFate, rank: number | null, origin: string | null): ExplainRow {
  const r: ExplainRow = {
    rank,
    uri: f.uri,
    category: f.category,
    origin,
    score: f.score,
    ranked_score: f.rankedScore,
    tier: f.tier || null,
    tokens: tokensOf(f),
    reason: f.fate as ExplainReason,
  };
  if (f.fate === 'cooled' && f.cooledTurn !== undefined) r.cooled_turn = Number(f.cooledTurn);
  return r;
}

/** Assemble the `explain` object. */
export function contextExplain(input: ExplainInput): ContextExplain {
  const ranked = input.planFates.map((f, i) => row(f, i + 1, input.candidates[i]?.origin ?? null));
  const left = input.gatherFates.map((f) => row(f, null, null));
  return {
    trace_id: input.traceId,
    packing: input.packing,
    stages: stageLine(input.records),
    fill: { floor_tokens: input.floorTokens, upgrade_tokens: input.usedTokens - input.floorTokens },
    candidates: [...ranked, ...left],
  };
}

/** Why a passage or memory of `/retrieve` is, or is not, in the answer. */
export type RetrieveExplainReason = 'served' | 'max_per_document' | 'top_k' | 'token_budget';

/**
 * One row of `/retrieve`'s `explain.candidates`: the context rows' keys where they apply, plus
 * what a passage has (`kind`, `id`, `doc_uri`, `source`, `rerank_score`). `score` is the search
 * score, `ranked_score` the score the answer is ordered by (after graph assist and rerank);
 * `tier` is `passage`/`memory` when served; `tokens` has the one text the entry carries.
 */
export interface RetrieveExplainRow {
  rank: number | null;
  kind: 'passage' | 'memory' | 'group_memory';
  /** `p1…` for a passage that reached the trim, `m1…` for a memory; null otherwise. */
  id: string | null;
  uri: string;
  doc_uri: string | null;
  category: string;
  origin: null;
  /** `search` or `graph_assist` for passages; `search` for memories. */
  source: string;
  score: number;
  ranked_score: number;
  rerank_score: number | null;
  tier: 'passage' | 'memory' | null;
  tokens: { text: number | null };
  reason: RetrieveExplainReason;
}

/** `/retrieve`'s `explain` object. */
export interface RetrieveExplain {
  trace_id: string | null;
  /** The stored retrieval trace (`GET /api/v1/traces/{id}`), when one was written. */
  retrieval_trace_id: string | null;
  stages: ContextExplain['stages'];
  candidates: RetrieveExplainRow[];
}

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

/** Assemble `/retrieve`'s `explain` object. */
export function retrieveExplain(input: RetrieveExplainInput): RetrieveExplain {
  const idOf = new Map(input.ranked.map((r) => [r.uri, r.id]));
  const dropOf = new Map(input.dropped.map((d) => [d.uri, d.reason as RetrieveExplainReason]));
  const passages = input.candidates.map((c, i): RetrieveExplainRow => {
    const id = idOf.get(c.uri) ?? null;
    const reason = dropOf.get(c.uri) ?? 'served';
    return {
      rank: i + 1,
      kind: 'passage',
      id,
      uri: c.uri,
      doc_uri: c.docUri,
      category: categoryOfUri(c.uri),
      origin: null,
      source: c.source,
      score: c.searchScore,
      ranked_score: c.score,
      rerank_score: c.rerankScore,
      tier: reason === 'served' ? 'passage' : null,
      tokens: { text: id !== null ? (input.passageTokens.get(id) ?? null) : null },
      reason,
    };
  });
  const memories = input.memories.map(
    (m, i): RetrieveExplainRow => ({
      rank: null,
      kind: m.group ? 'group_memory' : 'memory',
      id: `m${i + 1}`,
      uri: m.uri,
      doc_uri: null,
      category: categoryOfUri(m.uri),
      origin: null,
      source: 'search',
      score: m.score,
      ranked_score: m.score,
      rerank_score: null,
      tier: 'memory',
      tokens: { text: m.tokens },
      reason: 'served',
    }),
  );
  return {
    trace_id: input.traceId,
    retrieval_trace_id: input.retrievalTraceId,
    stages: stageLine(input.records),
    candidates: [...passages, ...memories],
  };
}
