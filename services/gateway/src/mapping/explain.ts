/**
 * The `explain` objects (issue 14) from the orchestrator's `ContextExplain` and
 * `RetrieveExplain`: the JSON keys and their order, and null where the message leaves a field
 * empty.
 */
import type { TokenAccount } from '@ctxmesh/kernel';
import type { orchestrator } from '@ctxmesh/proto';
import { jsonNumber } from './stats';

/** One stage of `explain.stages`. */
export interface ExplainStageJson {
  stage: string;
  outcome: string;
  start_ms: number | null;
  ms: number | null;
  /** Only for a skip or failure. */
  reason?: string;
}

/** One row of a context answer's `explain.candidates`. */
export interface ContextExplainRowJson {
  rank: number | null;
  uri: string;
  category: string;
  origin: string | null;
  score: number | null;
  ranked_score: number | null;
  tier: string | null;
  tokens: { uri: number | null; abstract: number | null; overview: number | null; full: number | null };
  reason: string;
  /** Only for a `cooled` row whose turn is known. */
  cooled_turn?: number;
}

/**
 * Where the block's tokens went (issue 20): per served entry in the order `rendered` writes
 * them, text tokens against markup (tags, attributes, its separator-free envelope); for the block,
 * the group lines and separators count as markup too. Counted in the request's tokenizer;
 * `used_tokens` equals `stats.used_tokens` when `rendered` is the block served.
 */
export interface TokenAccountJson {
  used_tokens: number;
  text_tokens: number;
  markup_tokens: number;
  /** markup_tokens / used_tokens (0 for an empty block). */
  markup_share: number;
  entries: Array<{ uri: string; text_tokens: number; markup_tokens: number }>;
}

/** A context answer's `explain`. */
export interface ContextExplainJson {
  trace_id: string | null;
  packing: string;
  stages: ExplainStageJson[];
  fill: { floor_tokens: number; upgrade_tokens: number };
  /** Null when the block cannot be accounted for (nothing rendered, or a digest instead). */
  account: TokenAccountJson | null;
  candidates: ContextExplainRowJson[];
}

/** One row of `/retrieve`'s `explain.candidates`. */
export interface RetrieveExplainRowJson {
  rank: number | null;
  kind: string;
  id: string | null;
  uri: string;
  doc_uri: string | null;
  category: string;
  origin: null;
  source: string;
  score: number | null;
  ranked_score: number | null;
  rerank_score: number | null;
  tier: string | null;
  tokens: { text: number | null };
  reason: string;
}

/** `/retrieve`'s `explain`. */
export interface RetrieveExplainJson {
  trace_id: string | null;
  retrieval_trace_id: string | null;
  stages: ExplainStageJson[];
  candidates: RetrieveExplainRowJson[];
}

const orNull = (n: number | undefined): number | null => (n === undefined ? null : jsonNumber(n));

function stageJson(s: orchestrator.ExplainStage): ExplainStageJson {
  const out: ExplainStageJson = { stage: s.stage, outcome: s.outcome, start_ms: jsonNumber(s.startMs), ms: jsonNumber(s.ms) };
  if (s.reason) out.reason = s.reason;
  return out;
}

function contextRow(r: orchestrator.ContextExplainRow): ContextExplainRowJson {
  const out: ContextExplainRowJson = {
    rank: r.rank ?? null,
    uri: r.uri,
    category: r.category,
    origin: r.origin || null,
    score: jsonNumber(r.score),
    ranked_score: jsonNumber(r.rankedScore),
    tier: r.tier || null,
    tokens: { uri: orNull(r.tokens?.uri), abstract: orNull(r.tokens?.abstract), overview: orNull(r.tokens?.overview), full: orNull(r.tokens?.full) },
    reason: r.reason,
  };
  if (r.cooledTurn !== undefined) out.cooled_turn = r.cooledTurn;
  return out;
}

/** The JSON of a kernel token account. */
export function tokenAccountJson(a: TokenAccount | null): TokenAccountJson | null {
  if (!a) return null;
  return {
    used_tokens: a.used,
    text_tokens: a.text,
    markup_tokens: a.markup,
    markup_share: a.used > 0 ? a.markup / a.used : 0,
    entries: a.entries.map((x) => ({ uri: x.uri, text_tokens: x.text, markup_tokens: x.markup })),
  };
}

/** A context answer's `explain` object (`account`: the served block's token account, see {@link TokenAccountJson}). */
export function contextExplainJson(e: orchestrator.ContextExplain, account: TokenAccount | null = null): ContextExplainJson {
  return {
    trace_id: e.traceId || null,
    packing: e.packing,
    stages: e.stages.map(stageJson),
    fill: { floor_tokens: e.floorTokens, upgrade_tokens: e.upgradeTokens },
    account: tokenAccountJson(account),
    candidates: e.candidates.map(contextRow),
  };
}

function retrieveRow(r: orchestrator.RetrieveExplainRow): RetrieveExplainRowJson {
  return {
    rank: r.rank ?? null,
    kind: r.kind,
    id: r.id || null,
    uri: r.uri,
    doc_uri: r.docUri || null,
    category: r.category,
    origin: null,
    source: r.source,
    score: jsonNumber(r.score),
    ranked_score: jsonNumber(r.rankedScore),
    rerank_score: orNull(r.rerankScore),
    tier: r.tier || null,
    tokens: { text: orNull(r.textTokens) },
    reason: r.reason,
  };
}

/** `/retrieve`'s `explain` object. */
export function retrieveExplainJson(e: orchestrator.RetrieveExplain): RetrieveExplainJson {
  return {
    trace_id: e.traceId || null,
    retrieval_trace_id: e.retrievalTraceId || null,
    stages: e.stages.map(stageJson),
    candidates: e.candidates.map(retrieveRow),
  };
}
