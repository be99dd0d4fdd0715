/**
 * Step 8: what the assembly reports — `ContextStats` (the facts behind context-contract §6.3;
 * the gateway writes the JSON and decides which keys a request sees) and, when asked for, every
 * candidate's fate and the explanation.
 */
import type { common, gather, orchestrator } from '@ctxmesh/proto';
import { contextExplain } from '../explain';
import type { Plan } from './block';
import type { Digest } from './digest';
import type { PlannedQueries } from './queries';
import type { ContextRun } from './run';
import type { Turn } from './session';

/** What the steps produced, as the report reads it. */
export interface Produced {
  turn: Turn;
  planned: PlannedQueries;
  gathered: gather.GatherCandidatesResponse;
  /** Candidates in the order the plan saw them. */
  candidates: readonly gather.Candidate[];
  plan: Plan;
  digest: Digest;
}

function countOrigins(candidates: readonly gather.Candidate[]): orchestrator.OriginCounts {
  const o = { actorPeer: 0, self: 0, otherPeer: 0 };
  for (const c of candidates) {
    if (c.origin === 'actor_peer') o.actorPeer += 1;
    else if (c.origin === 'self') o.self += 1;
    else if (c.origin === 'other_peer') o.otherPeer += 1;
  }
  return o;
}

/** The stats of a finished assembly. */
export function contextStats(run: ContextRun, p: Produced): orchestrator.ContextStats {
  const { input, runner } = run;
  const s = p.plan.stats;
  const ev = p.gathered.evidence;
  const timed = input.timeBudgetMs !== null;
  return {
    searched: p.gathered.searched,
    candidates: p.candidates.length,
    excluded: p.gathered.excluded,
    origins: countOrigins(p.candidates),
    peerScope: input.peerScope,
    quotas: input.quotas !== null ? { counts: input.quotas } : undefined,
    retrievalErrors: p.gathered.retrievalErrors.slice(0, 5),
    maxTokens: s.maxTokens,
    usedTokens: s.usedTokens,
    perEntryCap: s.perEntryCap,
    returned: s.returned,
    dropped: s.dropped,
    deduped: s.deduped,
    detail: s.detail,
    tierCounts: s.tierCounts,
    fill: { floorTokens: s.floorTokens, overviewUpgrades: s.overviewUpgrades, fullUpgrades: s.fullUpgrades, spareUpgrades: s.spareUpgrades },
    purpose: input.purpose,
    queryExpansion: p.planned.expansion,
    plannedQueries: p.planned.queries,
    scoreThreshold: input.scoreThreshold,
    otherPeerPenalties: input.otherPeerPenalties,
    rewrite: p.digest.rewrite,
    rewriteUsage: p.digest.usage,
    dedup: p.turn.dedup,
    rewriteEngine: p.digest.engine,
    tokenizer: input.tokenizer,
    packing: input.packing,
    evidence:
      input.packing === 'evidence'
        ? { rounds: ev?.rounds ?? 0, widths: ev?.widths ?? [], relevanceFloor: ev?.relevanceFloor ?? s.relevanceFloor, belowFloor: (ev?.belowFloor ?? 0) + s.belowFloor }
        : undefined,
    timeBudgetMs: input.timeBudgetMs ?? 0,
    // Stage accounting belongs to a time budget (§10.2).
    degradedStages: timed ? runner.degraded() : [],
    stageMs: timed ? Object.entries(runner.timings()).map(([name, value]) => ({ name, value })) : [],
  };
}

/**
 * With `explain`: gathering's fates (a cooled URI with the turn it was served at), then the
 * plan's, one per node considered; none otherwise.
 */
export function contextFates(run: ContextRun, p: Produced): common.CandidateFate[] {
  if (!run.input.explain) return [];
  const cooledAt = p.turn.cooledAt;
  return [...p.gathered.fates.map((f) => (f.fate === 'cooled' && cooledAt.has(f.uri) ? { ...f, cooledTurn: cooledAt.get(f.uri) } : f)), ...p.plan.fates];
}

/** With `explain`: the explanation built from the fates and the stage records. */
export function explanation(run: ContextRun, p: Produced, fates: readonly common.CandidateFate[], traceId: string | null): orchestrator.ContextExplain | undefined {
  if (!run.input.explain) return undefined;
  const s = p.plan.stats;
  return contextExplain({
    traceId,
    packing: run.input.packing,
    candidates: p.candidates,
    gatherFates: fates.slice(0, fates.length - p.plan.fates.length),
    planFates: p.plan.fates,
    records: run.runner.records,
    usedTokens: s.usedTokens,
    floorTokens: s.floorTokens,
  });
}
