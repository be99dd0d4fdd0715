import { detailToWire } from '@ctxmesh/kernel';
import type { orchestrator } from '@ctxmesh/proto';
import { contextStats } from './__tests__/context-stats';
import { statsJson } from './stats';

const CONTRACT_KEYS = [
  'searched', 'candidates', 'excluded', 'origins', 'peer_scope', 'quotas', 'max_tokens', 'used_tokens', 'per_entry_cap',
  'returned', 'dropped', 'deduped', 'detail', 'tier_counts', 'fill', 'purpose', 'query_expansion', 'planned_queries',
  'score_threshold', 'other_peer_penalties', 'rewrite', 'rewrite_usage', 'dedup',
];

/** What the orchestrator reports for a flat request with two candidates and no addition. */
const stats = (over: Partial<orchestrator.ContextStats> = {}): orchestrator.ContextStats =>
  contextStats({
    searched: [{ name: 'all', count: 2 }],
    candidates: 2,
    origins: { actorPeer: 0, self: 2, otherPeer: 0 },
    usedTokens: 40,
    perEntryCap: 1600,
    returned: 2,
    tierCounts: [{ name: 'abstract', count: 2 }],
    fill: { floorTokens: 40, overviewUpgrades: 0, fullUpgrades: 0, spareUpgrades: 0 },
    ...over,
  });

describe('statsJson', () => {
  it('writes every stats key of §6.3 in contract order for a flat request', () => {
    const out = statsJson(stats());
    expect(Object.keys(out)).toEqual(CONTRACT_KEYS);
    expect(out).toMatchObject({
      searched: { all: 2 }, candidates: 2, origins: { actor_peer: 0, self: 2, other_peer: 0 }, peer_scope: 'all', quotas: null,
      detail: null, tier_counts: { abstract: 2 }, fill: { floor_tokens: 40, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 },
      purpose: null, query_expansion: 'off', planned_queries: ['what shipped'], score_threshold: null,
      rewrite: 'off', rewrite_usage: null, dedup: { turns: 0, status: 'off', cooled: 0, turn: null },
    });
    expect(Object.keys(out.other_peer_penalties as object)).toEqual(['events', 'entities', 'preferences', 'experiences', 'resources', 'skills', 'memories']);
  });

  it('writes quotas, detail, usage and the ledger turn when there are some', () => {
    const out = statsJson(
      stats({
        quotas: { counts: [{ name: 'events', count: 3 }, { name: 'skills', count: 0 }] },
        detail: detailToWire({ skills: 'full', events: 'overview' }),
        purpose: 'coding',
        scoreThreshold: 0.35,
        rewrite: 'ok',
        rewriteUsage: { promptTokens: 10, completionTokens: 5 },
        dedup: { turns: 5, status: 'ok', cooled: 1, turn: 3 },
      }),
    );
    expect(JSON.stringify(out.quotas)).toBe('{"events":3,"skills":0}');
    expect(JSON.stringify(out.detail)).toBe('{"skills":"full","events":"overview"}');
    expect(statsJson(stats({ detail: detailToWire('full') })).detail).toBe('full');
    expect(out).toMatchObject({ purpose: 'coding', score_threshold: 0.35, rewrite_usage: { prompt_tokens: 10, completion_tokens: 5 }, dedup: { turns: 5, status: 'ok', cooled: 1, turn: 3 } });
  });

  it('writes retrieval_errors right after quotas, only when a call failed', () => {
    const out = statsJson(stats({ retrievalErrors: ['UNAVAILABLE: gather is down'] }));
    expect(out.retrieval_errors).toEqual(['UNAVAILABLE: gather is down']);
    expect(Object.keys(out).indexOf('retrieval_errors')).toBe(Object.keys(out).indexOf('quotas') + 1);
    expect(statsJson(stats())).not.toHaveProperty('retrieval_errors');
  });

  it('gives a request using no addition exactly the contract\'s keys, even with a rewrite; rewrite_engine comes with an addition', () => {
    for (const engine of ['extractive', 'model']) {
      const plain = statsJson(stats({ rewrite: 'ok', rewriteEngine: engine }));
      expect(Object.keys(plain)).toEqual(CONTRACT_KEYS);
    }
    const additions: Array<Partial<orchestrator.ContextStats>> = [{ timeBudgetMs: 60_000 }, { tokenizer: 'o200k_base' }, { packing: 'evidence' }];
    for (const addition of additions) {
      expect(statsJson(stats({ rewrite: 'failed', rewriteEngine: 'extractive', ...addition })).rewrite_engine).toBe('extractive');
    }
    // …and never for a rewrite that did not run.
    expect(statsJson(stats({ rewrite: 'off', rewriteEngine: 'extractive', timeBudgetMs: 60_000 }))).not.toHaveProperty('rewrite_engine');
  });

  it('appends ignored after dedup, and stage stats only with a time budget', () => {
    const out = statsJson(stats(), ['level', 'limit']);
    expect(Object.keys(out).at(-1)).toBe('ignored');
    expect(out.ignored).toEqual(['level', 'limit']);
    expect(out.time_budget_ms).toBeUndefined();
    const timed = statsJson(stats({ timeBudgetMs: 500, stageMs: [{ name: 'gather', value: 2.57 }, { name: 'rerank', value: 0 }] }), ['level']);
    expect(Object.keys(timed).slice(-4)).toEqual(['ignored', 'time_budget_ms', 'degraded_stages', 'stage_ms']);
    expect(timed.time_budget_ms).toBe(500);
    expect(timed.degraded_stages).toEqual([]);
    expect(JSON.stringify(timed.stage_ms)).toBe('{"gather":2.57,"rerank":0}');
  });

  it('writes the exact tokenizer, and packing and evidence only for a packing other than compat (after dedup)', () => {
    expect(statsJson(stats({ tokenizer: 'o200k_base' })).tokenizer).toBe('o200k_base');
    expect(statsJson(stats({ tokenizer: '' }))).not.toHaveProperty('tokenizer');
    const compat = statsJson(stats());
    expect(compat).not.toHaveProperty('packing');
    expect(compat).not.toHaveProperty('evidence');
    expect(statsJson(stats({ packing: '' }))).toEqual(compat);
    const ev = statsJson(stats({ packing: 'evidence', evidence: { rounds: 1, widths: [40], relevanceFloor: 0.45, belowFloor: 2 } }));
    expect(ev.packing).toBe('evidence');
    expect(ev.evidence).toEqual({ rounds: 1, widths: [40], relevance_floor: 0.45, below_floor: 2 });
    const keys = Object.keys(ev);
    expect(keys.indexOf('packing')).toBeGreaterThan(keys.indexOf('dedup'));
    expect(statsJson(stats({ packing: 'evidence' })).evidence).toEqual({ rounds: 0, widths: [], relevance_floor: null, below_floor: 0 });
  });

  it('is {} without stats, and writes a non-finite number as JSON.stringify did (null)', () => {
    expect(statsJson(undefined)).toEqual({});
    expect(statsJson(stats({ scoreThreshold: Number.NaN })).score_threshold).toBeNull();
  });
});
