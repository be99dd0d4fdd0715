/**
 * `ctxmesh.orchestrator.v1.ContextStats` → the context result's `stats` object
 * (context-contract §6.3): the keys in the order they are written, and the ctxmesh additions
 * (§10) only for a request that used them. The orchestrator reports what happened; which of it
 * a plugin sees, and in which order, is decided here and nowhere else.
 */
import { DEFAULT_PACKING, detailFromWire } from '@ctxmesh/kernel';
import type { common, orchestrator } from '@ctxmesh/proto';

/**
 * A double as the contract's JSON had it: the orchestrator used to serialise stats itself, and
 * `JSON.stringify` writes a non-finite number as `null`.
 */
export function jsonNumber(n: number): number | null {
  return Number.isFinite(n) ? n : null;
}

/** Ordered name/count pairs as a JSON object (a later duplicate keeps the first position). */
function counts(pairs: readonly common.NamedCount[]): Record<string, number> {
  return Object.fromEntries(pairs.map((p) => [p.name, p.count]));
}

function values(pairs: readonly common.NamedValue[]): Record<string, number | null> {
  return Object.fromEntries(pairs.map((p) => [p.name, jsonNumber(p.value)]));
}

/**
 * The `stats` object of a context answer.
 * @param s the orchestrator's stats (absent: `{}`, as an empty answer always was)
 * @param ignored the request's `stats.ignored` (written only when not empty)
 */
export function statsJson(s: orchestrator.ContextStats | undefined, ignored: readonly string[] = []): Record<string, unknown> {
  if (!s) return {};
  const out: Record<string, unknown> = {
    searched: counts(s.searched),
    candidates: s.candidates,
    excluded: s.excluded,
    origins: { actor_peer: s.origins?.actorPeer ?? 0, self: s.origins?.self ?? 0, other_peer: s.origins?.otherPeer ?? 0 },
    peer_scope: s.peerScope,
    quotas: s.quotas ? counts(s.quotas.counts) : null,
  };
  if (s.retrievalErrors.length > 0) out.retrieval_errors = [...s.retrievalErrors];
  const fill = s.fill;
  const dedup = s.dedup;
  Object.assign(out, {
    max_tokens: s.maxTokens,
    used_tokens: s.usedTokens,
    per_entry_cap: s.perEntryCap,
    returned: s.returned,
    dropped: s.dropped,
    deduped: s.deduped,
    detail: detailFromWire(s.detail),
    tier_counts: counts(s.tierCounts),
    fill: {
      floor_tokens: fill?.floorTokens ?? 0,
      overview_upgrades: fill?.overviewUpgrades ?? 0,
      full_upgrades: fill?.fullUpgrades ?? 0,
      spare_upgrades: fill?.spareUpgrades ?? 0,
    },
    purpose: s.purpose || null,
    query_expansion: s.queryExpansion,
    planned_queries: [...s.plannedQueries],
    score_threshold: s.scoreThreshold === undefined ? null : jsonNumber(s.scoreThreshold),
    other_peer_penalties: values(s.otherPeerPenalties),
    rewrite: s.rewrite,
    rewrite_usage: s.rewriteUsage ? { prompt_tokens: s.rewriteUsage.promptTokens, completion_tokens: s.rewriteUsage.completionTokens } : null,
    dedup: { turns: dedup?.turns ?? 0, status: dedup?.status ?? 'off', cooled: dedup?.cooled ?? 0, turn: dedup?.turn ?? null },
  });
  if (ignored.length > 0) out.ignored = [...ignored];
  // A request that uses no addition gets exactly the contract's keys: which engine wrote the
  // digest is ctxmesh's own detail, shown only beside the additions a request did use.
  const exactTokenizer = s.tokenizer !== '' && s.tokenizer !== 'estimate';
  const packing = s.packing || DEFAULT_PACKING;
  const usesAddition = exactTokenizer || packing !== DEFAULT_PACKING || s.timeBudgetMs > 0;
  if (usesAddition && s.rewriteEngine && s.rewrite !== 'off') out.rewrite_engine = s.rewriteEngine;
  if (exactTokenizer) out.tokenizer = s.tokenizer;
  if (packing !== DEFAULT_PACKING) {
    out.packing = packing;
    const ev = s.evidence;
    out.evidence = {
      rounds: ev?.rounds ?? 0,
      widths: [...(ev?.widths ?? [])],
      relevance_floor: ev?.relevanceFloor === undefined ? null : jsonNumber(ev.relevanceFloor),
      below_floor: ev?.belowFloor ?? 0,
    };
  }
  if (s.timeBudgetMs > 0) {
    out.time_budget_ms = s.timeBudgetMs;
    out.degraded_stages = [...s.degradedStages];
    out.stage_ms = values(s.stageMs);
  }
  return out;
}
