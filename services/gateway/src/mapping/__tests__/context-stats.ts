/**
 * A `ContextStats` as the orchestrator reports it for a flat context request with one resource
 * candidate served at its abstract and no addition (`what shipped`, 1600 tokens).
 */
import type { orchestrator } from '@ctxmesh/proto';

/** The default other-peer penalties, all seven categories in contract order. */
export const PENALTIES = ['events', 'entities', 'preferences', 'experiences', 'resources', 'skills', 'memories'].map((name) => ({
  name,
  value: ['events', 'entities', 'memories'].includes(name) ? 0.1 : 0.02,
}));

/** The stats, with `over` laid on top. */
export function contextStats(over: Partial<orchestrator.ContextStats> = {}): orchestrator.ContextStats {
  return {
    searched: [{ name: 'all', count: 1 }],
    candidates: 1,
    excluded: 0,
    origins: { actorPeer: 0, self: 1, otherPeer: 0 },
    peerScope: 'all',
    quotas: undefined,
    retrievalErrors: [],
    maxTokens: 1600,
    usedTokens: 20,
    perEntryCap: 800,
    returned: 1,
    dropped: 0,
    deduped: 0,
    detail: undefined,
    tierCounts: [{ name: 'abstract', count: 1 }],
    fill: { floorTokens: 20, overviewUpgrades: 0, fullUpgrades: 0, spareUpgrades: 0 },
    purpose: '',
    queryExpansion: 'off',
    plannedQueries: ['what shipped'],
    scoreThreshold: undefined,
    otherPeerPenalties: PENALTIES,
    rewrite: 'off',
    rewriteUsage: undefined,
    dedup: { turns: 0, status: 'off', cooled: 0, turn: undefined },
    rewriteEngine: '',
    tokenizer: 'estimate',
    packing: 'compat',
    evidence: undefined,
    timeBudgetMs: 0,
    degradedStages: [],
    stageMs: [],
    ...over,
  };
}
