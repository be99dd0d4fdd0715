import { Budget, Code, CtxError } from '@ctxmesh/rpc';
import type { budgetRender, gather, orchestrator, tierReader } from '@ctxmesh/proto';
import { contextRequest as request } from './__tests__/context-request';
import { assembleContext, contextInput, type ContextSettings } from './context';
import type { Ports } from './ports';
import { LatencyEstimator } from './stages';

const settings: ContextSettings = {
  enableIntent: true,
  modelConfigured: false,
  expansionTimeoutMs: 5000,
  rewriteTimeoutMs: 30_000,
  renderReserveMs: 5,
  expansionMessages: 20,
};

/** Fake ports recording calls; one event candidate and one resource. */
function fakePorts(over: Partial<Record<string, unknown>> = {}) {
  const calls: Record<string, unknown[]> = {};
  const rec = (name: string, req: unknown) => (calls[name] ??= []).push(req);
  const ports: Ports = {
    gather: {
      find: async () => ({ memories: [], resources: [], skills: [] }),
      gatherCandidates: async (req) => {
        rec('gatherCandidates', req);
        if (over.gatherError) throw over.gatherError;
        return {
          candidates: [
            { uri: 'viking://user/default/memories/events/a.md', category: 'events', score: 0.71, rankedScore: 0.71, abstract: 'A', origin: 'self', isDirectory: false, openContext: false, overview: 'A' },
            { uri: 'viking://resources/docs/api.md', category: 'resources', score: 0.42, rankedScore: 0.42, abstract: 'API docs', origin: 'self', isDirectory: false, openContext: false, overview: '' },
          ],
          searched: [{ name: 'all', count: 2 }],
          excluded: 0,
          retrievalErrors: [],
          evidence: undefined,
          fates: req.explain
            ? [
                { uri: 'viking://x/cooled.md', category: 'resources', score: 0.5, rankedScore: 0.5, fate: 'cooled', tier: '', costs: [] },
                { uri: 'viking://resources/ex.md', category: 'resources', score: 0.3, rankedScore: 0.3, fate: 'excluded', tier: '', costs: [] },
              ]
            : [],
        };
      },
      gatherPassages: async () => ({ passages: [], memories: [], groupMemories: [] }),
      expandLinks: async () => ({ passages: [] }),
    },
    tierReader: {
      readTiers: async (req) => {
        rec('readTiers', req);
        return { items: req.candidates.map((c) => ({ read: c.category === 'events', overview: c.category === 'events' ? 'gist' : '', full: c.category === 'events' ? '# Summary\ngist\n\nlog' : '', note: '' })), reads: 1 };
      },
      readContent: async () => ({ text: '', contentHash: '', isDirectory: false }),
    },
    budgetRender: {
      planRender: async (req) => {
        rec('planRender', req);
        return {
          entries: req.items.map((i) => ({ uri: i.uri, category: i.category, score: i.score, detail: 'abstract', text: i.abstract, origin: i.origin })),
          rendered: req.items.map((i) => `<memory uri="${i.uri}">`).join('\n'),
          stats: {
            maxTokens: req.maxTokens, usedTokens: 40, perEntryCap: 1600, returned: req.items.length, dropped: 0, deduped: 0, detail: undefined,
            tierCounts: [{ name: 'abstract', count: req.items.length }], floorTokens: 40, overviewUpgrades: 0, fullUpgrades: 0, spareUpgrades: 0, belowFloor: 0,
          },
          fates: req.explain
            ? req.items.map((i) => ({
                uri: i.uri,
                category: i.category,
                score: i.score,
                rankedScore: i.rankedScore,
                fate: 'served',
                tier: 'abstract',
                costs: [{ tier: 'uri', tokens: 12 }, { tier: 'abstract', tokens: 14 }, { tier: 'overview' }, { tier: 'full', tokens: Infinity }],
              }))
            : [],
        };
      },
      countTokens: async () => ({ counts: [] }),
      trimPassages: async () => ({ keptIds: [], passageTokens: [], fixedTokens: [], tokensTotal: 0, droppedCount: 0 }),
    },
    ledger: {
      beginTurn: async (req) => {
        rec('beginTurn', req);
        if (over.ledgerDown) throw new CtxError(Code.UNAVAILABLE, 'UNAVAILABLE', 'down');
        return { status: 'ok', turn: 3, cooledUris: ['viking://x/cooled.md'], cooledTurns: [1] };
      },
      recordServed: async (req) => {
        rec('recordServed', req);
        return { status: 'ok' };
      },
    },
    rewrite: {
      expandQuery: async () => ({ status: 'used', queries: ['what shipped', 'release notes'], reason: '' }),
      rewriteDigest: async (req) => {
        rec('rewriteDigest', req);
        return (over.digest as never) ?? { status: 'ok', digest: 'OpenViking memory digest:\n- x source: viking://resources/docs/api.md', usage: { promptTokens: 10, completionTokens: 5 }, engine: 'model' };
      },
      rewriteQuery: async () => ({ queries: [], status: 'ok' }),
      rerank: async () => ({ scores: [], status: 'ok' }),
    },
    sessions: {
      getSearchContext: async (req) => {
        rec('getSearchContext', req);
        return { exists: true, created: false, messages: [{ role: 'user', content: 'we shipped v2' }], archiveOverview: '' };
      },
      resolveWorkspace: async () => ({ workspace: 'default' }),
    },
  };
  return { ports, calls };
}

const run = async (req: orchestrator.AssembleContextRequest, ports: Ports, s: ContextSettings = settings) =>
  assembleContext(contextInput(req, s.defaultPacking), Budget.ofMs(10_000), { ports, settings: s, estimator: new LatencyEstimator({}) });

describe('assembleContext', () => {
  it('reports every fact of §6.3 for a flat request (the gateway writes them in contract order)', async () => {
    const { ports } = fakePorts();
    const out = await run(request(), ports);
    expect(out.stats).toMatchObject({
      searched: [{ name: 'all', count: 2 }], candidates: 2, origins: { actorPeer: 0, self: 2, otherPeer: 0 }, peerScope: 'all', quotas: undefined,
      maxTokens: 1600, usedTokens: 40, returned: 2, detail: undefined, tierCounts: [{ name: 'abstract', count: 2 }],
      fill: { floorTokens: 40, overviewUpgrades: 0, fullUpgrades: 0, spareUpgrades: 0 }, purpose: '', queryExpansion: 'off', plannedQueries: ['what shipped'],
      scoreThreshold: undefined, rewrite: 'off', rewriteUsage: undefined, dedup: { turns: 0, status: 'off', cooled: 0, turn: undefined },
      packing: 'compat', evidence: undefined, timeBudgetMs: 0, degradedStages: [], stageMs: [],
    });
    expect(out.stats.otherPeerPenalties.map((p) => p.name)).toEqual(['events', 'entities', 'preferences', 'experiences', 'resources', 'skills', 'memories']);
  });

  it('passes tier texts to budget-render aligned with the candidates', async () => {
    const { ports, calls } = fakePorts();
    await run(request(), ports);
    const plan = calls.planRender[0] as { items: Array<{ overview: string; full: string }> };
    expect(plan.items[0]).toMatchObject({ overview: 'gist', full: '# Summary\ngist\n\nlog' });
    expect(plan.items[1]).toMatchObject({ overview: '', full: '' });
  });

  it('advances the ledger clock for any request naming a session, even with dedup_turns 0, and records nothing then', async () => {
    const { ports, calls } = fakePorts();
    const out = await run(request({ sessionId: 's1', queryExpansion: 'off' }), ports);
    expect(calls.beginTurn).toHaveLength(1);
    expect(calls.recordServed).toBeUndefined();
    expect(out.stats.dedup).toEqual({ turns: 0, status: 'off', cooled: 0, turn: undefined });
  });

  it('unions cooled URIs with exclude_uris, reports dedup and records the served entries at the clock', async () => {
    const { ports, calls } = fakePorts();
    const out = await run(request({ sessionId: 's1', dedupTurns: 5, excludeUris: ['viking://x/ex.md'], queryExpansion: 'off' }), ports);
    expect((calls.gatherCandidates[0] as { excludedUris: string[] }).excludedUris).toEqual(['viking://x/ex.md', 'viking://x/cooled.md']);
    expect(out.stats.dedup).toEqual({ turns: 5, status: 'ok', cooled: 1, turn: 3 });
    expect(calls.recordServed[0]).toMatchObject({ turn: 3, dedupTurns: 5, entries: [{ uri: 'viking://user/default/memories/events/a.md', detail: 'abstract' }, { uri: 'viking://resources/docs/api.md', detail: 'abstract' }] });
  });

  it('explains every candidate from the fates: the plan ones in rank order, then the gathering ones, a cooled URI with its turn; only when asked', async () => {
    const { ports, calls } = fakePorts();
    const plain = await run(request({ sessionId: 's1', dedupTurns: 5, excludeUris: ['viking://resources/ex.md'], queryExpansion: 'off' }), ports);
    expect(plain.explain).toBeUndefined();
    expect((calls.planRender[0] as { explain: boolean }).explain).toBe(false);
    const out = await run(request({ sessionId: 's1', dedupTurns: 5, excludeUris: ['viking://resources/ex.md'], queryExpansion: 'off', explain: true }), ports);
    expect((calls.planRender[1] as { explain: boolean }).explain).toBe(true);
    const e = out.explain!;
    expect(e.packing).toBe('compat');
    expect(e.traceId).toBe('');
    expect([e.floorTokens, e.upgradeTokens]).toEqual([40, 0]);
    const served = { uri: 12, abstract: 14, overview: undefined, full: undefined };
    const none = { uri: undefined, abstract: undefined, overview: undefined, full: undefined };
    expect(e.candidates).toEqual([
      { rank: 1, uri: 'viking://user/default/memories/events/a.md', category: 'events', origin: 'self', score: 0.71, rankedScore: 0.71, tier: 'abstract', tokens: served, reason: 'served', cooledTurn: undefined },
      { rank: 2, uri: 'viking://resources/docs/api.md', category: 'resources', origin: 'self', score: 0.42, rankedScore: 0.42, tier: 'abstract', tokens: served, reason: 'served', cooledTurn: undefined },
      { rank: undefined, uri: 'viking://x/cooled.md', category: 'resources', origin: '', score: 0.5, rankedScore: 0.5, tier: '', tokens: none, reason: 'cooled', cooledTurn: 1 },
      { rank: undefined, uri: 'viking://resources/ex.md', category: 'resources', origin: '', score: 0.3, rankedScore: 0.3, tier: '', tokens: none, reason: 'excluded', cooledTurn: undefined },
    ]);
    // Every stage, in run order, on one time line.
    expect(e.stages.map((x) => x.stage)).toEqual(out.runner.records.map((r) => r.stage));
    for (let i = 1; i < e.stages.length; i++) expect(e.stages[i].startMs).toBeGreaterThanOrEqual(e.stages[i - 1].startMs);
    expect(e.stages.find((x) => x.stage === 'gather')).toMatchObject({ outcome: 'ok' });
  });

  it('reports no turn when the ledger answers unavailable', async () => {
    const { ports, calls } = fakePorts();
    ports.ledger.beginTurn = async () => ({ status: 'unavailable', turn: 0, cooledUris: [], cooledTurns: [] });
    const out = await run(request({ sessionId: 's1', dedupTurns: 5, queryExpansion: 'off' }), ports);
    expect(out.stats.dedup).toEqual({ turns: 5, status: 'unavailable', cooled: 0, turn: undefined });
    expect(calls.recordServed).toBeUndefined();
  });

  it('degrades dedup when the ledger is down and still answers', async () => {
    const { ports, calls } = fakePorts({ ledgerDown: true });
    const out = await run(request({ sessionId: 's1', dedupTurns: 5, queryExpansion: 'off' }), ports);
    expect(out.stats.dedup).toEqual({ turns: 5, status: 'unavailable', cooled: 0, turn: undefined });
    expect(calls.recordServed).toBeUndefined();
    expect(out.entries).toHaveLength(2);
  });

  it('propagates INVALID_ARGUMENT from gather (a 400), but degrades an unavailable gather into retrieval_errors', async () => {
    const bad = fakePorts({ gatherError: new CtxError(Code.INVALID_ARGUMENT, 'EMPTY_QUERY', 'Search query or image_url must not be empty.') });
    await expect(run(request({ query: '' }), bad.ports)).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    const down = fakePorts({ gatherError: new CtxError(Code.UNAVAILABLE, 'UNAVAILABLE', 'gather is down') });
    const out = await run(request(), down.ports);
    expect(out.entries).toEqual([]);
    expect(out.stats.retrievalErrors).toEqual(['UNAVAILABLE: gather is down']);
  });

  it('expands queries through the session only when intent and a model are configured', async () => {
    const off = fakePorts();
    expect((await run(request({ sessionId: 's1' }), off.ports)).stats.queryExpansion).toBe('off');
    expect(off.calls.getSearchContext).toBeUndefined();

    const on = fakePorts();
    const out = await run(request({ sessionId: 's1' }), on.ports, { ...settings, modelConfigured: true });
    expect(out.stats.queryExpansion).toBe('used');
    expect(out.stats.plannedQueries).toEqual(['what shipped', 'release notes']);
    expect(on.calls.getSearchContext[0]).toMatchObject({ sessionId: 's1', create: true });

    const disabled = fakePorts();
    await run(request({ sessionId: 's1' }), disabled.ports, { ...settings, modelConfigured: true, enableIntent: false });
    expect(disabled.calls.getSearchContext).toBeUndefined();
  });

  it('returns the digest and usage of an ok rewrite and keeps rendered', async () => {
    const { ports, calls } = fakePorts();
    const out = await run(request({ rewrite: 'on' }), ports);
    expect(out.digest).toContain('OpenViking memory digest:');
    expect(out.rendered).not.toBe('');
    expect(out.stats.rewrite).toBe('ok');
    expect(out.stats.rewriteUsage).toEqual({ promptTokens: 10, completionTokens: 5 });
    expect((calls.rewriteDigest[0] as { servedUris: string[] }).servedUris).toEqual(['viking://user/default/memories/events/a.md', 'viking://resources/docs/api.md']);
  });

  it('blanks rendered and records nothing on no_relevant, but keeps entries', async () => {
    const { ports, calls } = fakePorts({ digest: { status: 'no_relevant', digest: '', engine: 'model' } });
    const out = await run(request({ rewrite: 'on', sessionId: 's1', dedupTurns: 3, queryExpansion: 'off' }), ports);
    expect(out.rendered).toBe('');
    expect(out.digest).toBe('');
    expect(out.entries).toHaveLength(2);
    expect(calls.recordServed).toBeUndefined();
  });

  it('keeps rendered when the rewrite fails', async () => {
    const failing = fakePorts();
    failing.ports.rewrite.rewriteDigest = async () => Promise.reject(new CtxError(Code.INTERNAL, 'INTERNAL', 'x'));
    const out = await run(request({ rewrite: 'on' }), failing.ports);
    expect(out.stats.rewrite).toBe('failed');
    expect(out.rendered).not.toBe('');
  });

  it('leaves "auto" to the rewrite service (only_if_model) and reports its off as off, not failed', async () => {
    const auto = fakePorts({ digest: { status: 'off', digest: '', engine: '' } });
    // The orchestrator's own model flag no longer decides: the service owns the model config.
    const out = await run(request({ rewrite: 'auto' }), auto.ports, { ...settings, modelConfigured: false });
    expect((auto.calls.rewriteDigest[0] as { onlyIfModel: boolean }).onlyIfModel).toBe(true);
    expect(out.stats.rewrite).toBe('off');
    expect(out.stats.rewriteEngine).toBe('');
    expect(out.digest).toBe('');
    expect(out.rendered).not.toBe('');
    expect(out.stages.find((s) => s.stage === 'rewrite')).toMatchObject({ outcome: 'skipped', reason: 'NOT_CONFIGURED' });
    expect(out.runner.degraded()).not.toContain('rewrite');
  });

  it('passes the model digest of "auto" through when the service has a model', async () => {
    const auto = fakePorts();
    const out = await run(request({ rewrite: 'auto' }), auto.ports);
    expect((auto.calls.rewriteDigest[0] as { onlyIfModel: boolean }).onlyIfModel).toBe(true);
    expect(out.stats.rewrite).toBe('ok');
    expect(out.digest).toContain('OpenViking memory digest:');
  });

  it('asks for an unconditional rewrite for "on" and never calls the service for "off"', async () => {
    const on = fakePorts();
    await run(request({ rewrite: 'on' }), on.ports);
    expect((on.calls.rewriteDigest[0] as { onlyIfModel: boolean }).onlyIfModel).toBe(false);
    const off = fakePorts();
    const out = await run(request({ rewrite: 'off' }), off.ports);
    expect(off.calls.rewriteDigest).toBeUndefined();
    expect(out.stats.rewrite).toBe('off');
  });

  it('keeps rendered on an extractive failed status (an empty extractive digest is not no_relevant)', async () => {
    const { ports } = fakePorts({ digest: { status: 'failed', digest: '', engine: 'extractive' } });
    const out = await run(request({ rewrite: 'on' }), ports);
    expect(out.stats.rewrite).toBe('failed');
    expect(out.rendered).toContain('<memory uri=');
    expect(out.digest).toBe('');
  });

  it('reports which engine wrote the digest, with or without an addition (the gateway shows it only beside one)', async () => {
    for (const engine of ['extractive', 'model']) {
      const plain = await run(request({ rewrite: 'on' }), fakePorts({ digest: { status: 'ok', digest: 'OpenViking memory digest:\n- x source: viking://resources/docs/api.md', engine } }).ports);
      expect(plain.stats.rewrite).toBe('ok');
      expect(plain.stats.rewriteEngine).toBe(engine);
    }
    for (const addition of [{ timeBudgetMs: 60_000 }, { tokenizer: 'o200k_base' }, { packing: 'evidence' }] as const) {
      const out = await run(request({ rewrite: 'on', ...addition }), fakePorts({ digest: { status: 'failed', digest: '', engine: 'extractive' } }).ports);
      expect(out.stats.rewriteEngine).toBe('extractive');
    }
  });

  it('reports stage accounting only when a time budget was sent', async () => {
    const { ports } = fakePorts();
    const out = await run(request(), ports);
    expect(out.stats.timeBudgetMs).toBe(0);
    expect(out.stats.stageMs).toEqual([]);
    const timed = await run(request({ timeBudgetMs: 500 }), fakePorts().ports);
    expect(timed.stats.timeBudgetMs).toBe(500);
    expect(timed.stats.degradedStages).toEqual([]);
    expect(timed.stats.stageMs.map((x) => x.name)).toEqual(timed.runner.records.map((r) => r.stage));
  });

  it('re-orders candidates with the cross-encoder when context rerank is configured, keeping the retrieval score', async () => {
    const { ports, calls } = fakePorts();
    ports.rewrite.rerank = async (req) => {
      (calls.rerank ??= []).push(req);
      return { status: 'ok', scores: [{ id: '1', score: 0.9 }, { id: '0', score: 0.2 }] };
    };
    const out = await run(request(), ports, { ...settings, rerank: true, rerankTimeoutMs: 1000 });
    expect(out.entries.map((e) => e.uri)).toEqual(['viking://resources/docs/api.md', 'viking://user/default/memories/events/a.md']);
    expect(out.entries[0].score).toBe(0.42);
    expect((calls.rerank[0] as { documents: Array<{ text: string }> }).documents.map((d) => d.text)).toEqual(['A', 'API docs']);
    expect(out.stages.find((r) => r.stage === 'rerank')?.outcome).toBe('ok');
  });

  it('keeps the gathered order and degrades the stage when the reranker fails or times out; never calls it unconfigured', async () => {
    for (const status of ['failed', 'timeout']) {
      const { ports } = fakePorts();
      ports.rewrite.rerank = async () => ({ status, scores: [] });
      const out = await run(request({ timeBudgetMs: 60_000 }), ports, { ...settings, rerank: true });
      expect(out.entries.map((e) => e.uri)).toEqual(['viking://user/default/memories/events/a.md', 'viking://resources/docs/api.md']);
      expect(out.stats.degradedStages).toEqual(['rerank']);
    }
    const { ports } = fakePorts();
    let called = false;
    ports.rewrite.rerank = async () => ((called = true), { status: 'ok', scores: [] });
    await run(request(), ports);
    expect(called).toBe(false);
  });

  describe('packing', () => {
    const coding = [
      { name: 'events', count: 1 },
      { name: 'resources', count: 3 },
    ];

    it('keeps the contract: no packing named and a compat server send "" downstream and add no stats key', async () => {
      const { ports, calls } = fakePorts();
      const out = await run(request(), ports);
      expect((calls.gatherCandidates[0] as gather.GatherCandidatesRequest).packing).toBe('');
      expect((calls.readTiers[0] as tierReader.ReadTiersRequest).packing).toBe('');
      expect((calls.planRender[0] as budgetRender.PlanRenderRequest).packing).toBe('');
      expect(out.stats.packing).toBe('compat');
      expect(out.stats.evidence).toBeUndefined();
      // Naming the contract's packing changes nothing either.
      const named = await run(request({ packing: 'compat' }), fakePorts().ports);
      expect(named.stats).toEqual(out.stats);
    });

    it('runs every leg with the evidence packing, its priors and the best score, and says so in stats', async () => {
      const { ports, calls } = fakePorts();
      ports.gather.gatherCandidates = async (req) => {
        (calls.gatherCandidates ??= []).push(req);
        return {
          candidates: [
            { uri: 'viking://user/default/memories/events/a.md', category: 'events', score: 0.71, rankedScore: 0.71, abstract: 'A', origin: 'self', isDirectory: false, openContext: false, overview: 'stored gist' },
            // A directory hit without a stored overview: its sidecar must be read.
            { uri: 'viking://resources/docs', category: 'resources', score: 0.6, rankedScore: 0.6, abstract: 'Docs', origin: 'self', isDirectory: true, openContext: false, overview: '' },
          ],
          searched: [{ name: 'events', count: 1 }],
          excluded: 0,
          retrievalErrors: [],
          evidence: { bestScore: 0.9, relevanceFloor: 0.45, rounds: 1, belowFloor: 2, widths: [40] },
          fates: [],
        };
      };
      ports.tierReader.readTiers = async (req) => ((calls.readTiers ??= []).push(req), { items: req.candidates.map(() => ({ read: false, overview: '', full: '', note: '' })), reads: 0 });
      const out = await run(request({ packing: 'evidence', bucketed: true, quotas: coding, tokenizer: 'o200k_base' }), ports);
      const g = calls.gatherCandidates[0] as gather.GatherCandidatesRequest;
      expect(g).toMatchObject({ packing: 'evidence', maxTokens: 1600, tokenizer: 'o200k_base' });
      const t = calls.readTiers[0] as tierReader.ReadTiersRequest;
      expect(t).toMatchObject({ packing: 'evidence', bestScore: 0.9 });
      expect(t.candidates[0]).toMatchObject({ rankedScore: 0.71, storedOverview: 'stored gist' });
      const p = calls.planRender[0] as budgetRender.PlanRenderRequest;
      expect(p).toMatchObject({ packing: 'evidence', priors: coding, bestScore: 0.9 });
      // A body the tier-reader did not read: the stored overview stands in for it.
      expect(p.items[0]).toMatchObject({ overview: 'stored gist', rankedScore: 0.71 });
      expect(out.stats.packing).toBe('evidence');
      expect(out.stats.evidence).toEqual({ rounds: 1, widths: [40], relevanceFloor: 0.45, belowFloor: 2 });
    });

    it('skips the tier-reader when the evidence packing needs no body (memories whose abstract is the body, overviews stored)', async () => {
      const { ports, calls } = fakePorts();
      ports.gather.gatherCandidates = async () => ({
        candidates: [
          { uri: 'viking://user/default/memories/events/a.md', category: 'events', score: 0.71, rankedScore: 0.71, abstract: '# Summary\ngist\n\nlog', origin: 'self', isDirectory: false, openContext: false, overview: 'gist' },
          { uri: 'viking://user/default/memories/entities/b.md', category: 'entities', score: 0.6, rankedScore: 0.6, abstract: 'B is a service', origin: 'self', isDirectory: false, openContext: false, overview: 'B is a service' },
        ],
        searched: [{ name: 'all', count: 2 }],
        excluded: 0,
        retrievalErrors: [],
        evidence: { bestScore: 0.71, relevanceFloor: 0.1775, rounds: 1, belowFloor: 0, widths: [40] },
        fates: [],
      });
      const out = await run(request({ packing: 'evidence', timeBudgetMs: 60_000 }), ports);
      expect(calls.readTiers).toBeUndefined();
      expect(out.stages.find((s) => s.stage === 'tier_read')).toMatchObject({ outcome: 'skipped', reason: 'NOTHING_TO_DO' });
      expect(out.stats.degradedStages).toEqual([]);
      const p = calls.planRender[0] as budgetRender.PlanRenderRequest;
      expect(p.items.map((i) => i.overview)).toEqual(['gist', 'B is a service']);
      // Compat always asks the tier-reader (§5.4 decides there).
      const compat = fakePorts();
      compat.ports.gather.gatherCandidates = ports.gather.gatherCandidates;
      await run(request(), compat.ports);
      expect(compat.calls.readTiers).toHaveLength(1);
    });

    it('applies the server default (CTXMESH_CONTEXT_PACKING) to a request naming none, and a named packing over it', async () => {
      const ev = fakePorts();
      const out = await run(request(), ev.ports, { ...settings, defaultPacking: 'evidence' });
      expect((ev.calls.planRender[0] as budgetRender.PlanRenderRequest).packing).toBe('evidence');
      expect(out.stats.packing).toBe('evidence');
      const named = fakePorts();
      const back = await run(request({ packing: 'compat' }), named.ports, { ...settings, defaultPacking: 'evidence' });
      expect((named.calls.planRender[0] as budgetRender.PlanRenderRequest).packing).toBe('');
      // The contract's packing on an evidence server is not the server's default, but it is the
      // contract's (the gateway then writes exactly the contract's keys).
      expect(back.stats.packing).toBe('compat');
    });

    it('rejects an unknown packing with INVALID_ARGUMENT before calling anything', async () => {
      const { ports, calls } = fakePorts();
      await expect(run(request({ packing: 'greedy' }), ports)).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_PACKING' });
      expect(calls.gatherCandidates).toBeUndefined();
    });

    it('with explain, returns gathering\'s fates and then planning\'s; without it, none are asked for', async () => {
      const { ports, calls } = fakePorts();
      const cooledFate = { uri: 'viking://x/cooled.md', category: 'events', score: 0.8, rankedScore: 0.8, fate: 'cooled', tier: '', costs: [] };
      const base = ports.gather.gatherCandidates;
      ports.gather.gatherCandidates = async (req, b) => ({ ...(await base(req, b)), fates: req.explain ? [cooledFate] : [] });
      const basePlan = ports.budgetRender.planRender;
      const served = { uri: 'viking://user/default/memories/events/a.md', category: 'events', score: 0.71, rankedScore: 0.71, fate: 'served', tier: 'abstract', costs: [{ tier: 'uri', tokens: 20 }] };
      ports.budgetRender.planRender = async (req, b) => ({ ...(await basePlan(req, b)), fates: req.explain ? [served] : [] });
      const out = await run(request({ explain: true, sessionId: 's', dedupTurns: 2 }), ports);
      // The ledger's turn for the cooled URI is filled in.
      expect(out.fates).toEqual([{ ...cooledFate, cooledTurn: 1 }, served]);
      const g = calls.gatherCandidates[0] as gather.GatherCandidatesRequest;
      expect(g.explain).toBe(true);
      expect(g.cooledUris).toEqual(['viking://x/cooled.md']);
      expect((calls.planRender[0] as budgetRender.PlanRenderRequest).explain).toBe(true);
      const plain = await run(request(), fakePorts().ports);
      expect(plain.fates).toEqual([]);
    });
  });
});
