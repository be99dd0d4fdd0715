import fc from 'fast-check';
import { common, type budgetRender, type gather, type orchestrator, type rewrite } from '@ctxmesh/proto';
import { Budget, Code, CtxError } from '@ctxmesh/rpc';
import type { Ports } from './ports';
import {
  applyRerank,
  buildCitations,
  defaultRetrieveSettings,
  gatherSize,
  mergeLinked,
  retrieve,
  retrieveInput,
  selectFinal,
  stageWants,
  type RankedPassage,
  type RetrieveOptions,
  type RetrieveSettings,
} from './retrieve';
import { LatencyEstimator, stagePriors } from './stages';
import { traceFromStored, type TraceRecord, type TraceSink } from './trace';

const identity: common.Identity = { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: 'r1' };

function req(over: Partial<orchestrator.RetrieveRequest> = {}): orchestrator.RetrieveRequest {
  return { identity, query: 'rollback', subject: '', topK: 8, memoryK: 5, maxPerDocument: 2, asOfMs: undefined, stages: [], tokenizer: '', explain: false, ...over };
}

const pref = (uri: string, score: number, over: Partial<gather.PassageRef> = {}): gather.PassageRef => ({
  uri,
  docUri: uri.split('#')[0],
  score,
  title: `T ${uri.split('#')[0]}`,
  text: `text of ${uri}`,
  ...over,
});

/** Token count of the fakes: one token per word. */
const words = (s: string) => (s.trim() === '' ? 0 : s.trim().split(/\s+/).length);

/** The contract's trim rule, as budget-render applies it (lowest score first, later-ranked first on ties). */
function fakeTrim(r: budgetRender.TrimPassagesRequest): budgetRender.TrimPassagesResponse {
  const passageTokens = r.passages.map((p) => words(p.text));
  const fixedTokens = r.fixed.map((f) => words(f.text));
  let total = passageTokens.reduce((a, b) => a + b, 0) + fixedTokens.reduce((a, b) => a + b, 0);
  const dropped = new Set<number>();
  if (r.tokenBudget > 0) {
    const order = r.passages.map((p, i) => ({ p, i })).sort((a, b) => a.p.score - b.p.score || b.i - a.i);
    for (const { i } of order) {
      if (total <= r.tokenBudget) break;
      dropped.add(i);
      total -= passageTokens[i];
    }
  }
  return { keptIds: r.passages.filter((_, i) => !dropped.has(i)).map((p) => p.id), passageTokens, fixedTokens, tokensTotal: total, droppedCount: dropped.size };
}

interface Calls {
  gather: gather.GatherPassagesRequest[];
  expand: gather.ExpandLinksRequest[];
  rerank: rewrite.RerankRequest[];
  rewrite: rewrite.RewriteQueryRequest[];
  trim: budgetRender.TrimPassagesRequest[];
  workspace: number;
}

interface FakeOptions {
  passages?: gather.PassageRef[];
  memories?: gather.MemoryRef[];
  groupMemories?: gather.MemoryRef[];
  linked?: gather.PassageRef[];
  rerank?: (r: rewrite.RerankRequest) => Promise<rewrite.RerankResponse>;
  rewriteQuery?: (r: rewrite.RewriteQueryRequest) => Promise<rewrite.RewriteQueryResponse>;
  workspace?: () => Promise<{ workspace: string }>;
}

function fakePorts(o: FakeOptions = {}): { ports: Ports; calls: Calls } {
  const calls: Calls = { gather: [], expand: [], rerank: [], rewrite: [], trim: [], workspace: 0 };
  const no = () => Promise.reject(new Error('not used'));
  const ports: Ports = {
    gather: {
      find: no,
      gatherCandidates: no,
      gatherPassages: async (r) => {
        calls.gather.push(r);
        return { passages: (o.passages ?? []).slice(0, r.topK), memories: o.memories ?? [], groupMemories: o.groupMemories ?? [] };
      },
      expandLinks: async (r) => {
        calls.expand.push(r);
        return { passages: o.linked ?? [] };
      },
    },
    tierReader: { readTiers: no, readContent: no },
    budgetRender: {
      planRender: no,
      countTokens: no,
      trimPassages: async (r) => {
        calls.trim.push(r);
        return fakeTrim(r);
      },
    },
    ledger: { beginTurn: no, recordServed: no },
    rewrite: {
      expandQuery: no,
      rewriteDigest: no,
      rewriteQuery: async (r) => {
        calls.rewrite.push(r);
        return o.rewriteQuery ? o.rewriteQuery(r) : { queries: [r.query, `${r.query} plan`], status: 'ok' };
      },
      rerank: async (r) => {
        calls.rerank.push(r);
        return o.rerank ? o.rerank(r) : { scores: [...r.documents].reverse().map((d, i) => ({ id: d.id, score: 0.9 - i * 0.1 })), status: 'ok' };
      },
    },
    sessions: {
      getSearchContext: no,
      resolveWorkspace: async () => {
        calls.workspace += 1;
        return o.workspace ? o.workspace() : { workspace: 'default' };
      },
    },
  };
  return { ports, calls };
}

const configured = (over: Partial<RetrieveSettings> = {}) => defaultRetrieveSettings({ modelConfigured: true, rerankConfigured: true, ...over });
const cold = (s: RetrieveSettings) =>
  new LatencyEstimator(stagePriors({ expansionTimeoutMs: 5000, rewriteTimeoutMs: 30_000, queryRewriteTimeoutMs: s.queryRewriteTimeoutMs, rerankTimeoutMs: s.rerankTimeoutMs, graphAssistTimeoutMs: s.graphAssistTimeoutMs }));
const run = async (r: orchestrator.RetrieveRequest, ports: Ports, s: RetrieveSettings = defaultRetrieveSettings(), opts: RetrieveOptions = {}, est?: LatencyEstimator) =>
  retrieve(retrieveInput(r, s.defaults), Budget.ofMs(30_000), { ports, settings: s, estimator: est ?? cold(s), ...opts });

const three = [pref('viking://resources/a.md#p1', 0.9), pref('viking://resources/a.md#p2', 0.8), pref('viking://resources/b.md', 0.7)];

describe('retrieveInput', () => {
  const defaults = defaultRetrieveSettings().defaults;

  it('applies the contract defaults to zeros, clamps the counts, and reads the stage choices over the defaults', () => {
    expect(retrieveInput(req({ topK: 0, maxPerDocument: 0, memoryK: -3 }), defaults)).toMatchObject({ topK: 8, maxPerDocument: 2, memoryK: 0, tokenBudget: 0, timeBudgetMs: null, tokenizer: 'estimate' });
    expect(retrieveInput(req({ topK: 500, memoryK: 500, maxPerDocument: 3.7, tokenBudget: 40, timeBudgetMs: 900, tokenizer: 'o200k_base' }), defaults)).toMatchObject({
      topK: 100,
      memoryK: 100,
      maxPerDocument: 3,
      tokenBudget: 40,
      timeBudgetMs: 900,
      tokenizer: 'o200k_base',
    });
    expect(retrieveInput(req({ stages: [{ name: 'graph_assist', enabled: true }, { name: 'rerank', enabled: false }] }), defaults).wants).toEqual({ query_rewrite: true, graph_assist: true, rerank: false });
  });

  it('refuses a request without an account or user, and a blank query', () => {
    expect(() => retrieveInput(req({ identity: { ...identity, userId: '' } }), defaults)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' }));
    expect(() => retrieveInput(req({ identity: undefined }), defaults)).toThrow(expect.objectContaining({ reason: 'MISSING_IDENTITY' }));
    expect(() => retrieveInput(req({ query: ' \t' }), defaults)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'EMPTY_QUERY' }));
  });
});

describe('stageWants', () => {
  it('takes the configured defaults unless the request names a stage', () => {
    const d = { query_rewrite: true, graph_assist: false, rerank: true };
    expect(stageWants([], d)).toEqual(d);
    expect(stageWants([{ name: 'rerank', enabled: false }, { name: 'graph_assist', enabled: true }, { name: 'bogus', enabled: true }], d)).toEqual({ query_rewrite: true, graph_assist: true, rerank: false });
  });
});

describe('gatherSize', () => {
  it('asks for top_k alone, or a larger pool (at most 100) when a stage may reorder', () => {
    expect(gatherSize(8, false)).toBe(8);
    expect(gatherSize(8, true)).toBe(24);
    expect(gatherSize(2, true)).toBe(14);
    expect(gatherSize(60, true)).toBe(100);
  });
});

const rp = (uri: string, docUri: string, score: number): RankedPassage => ({ uri, docUri, title: docUri, text: uri, score, searchScore: score, source: 'search', rerankScore: null });

describe('selectFinal', () => {
  it('caps passages per document and cuts to top_k, naming why each one went', () => {
    const r = selectFinal([rp('a1', 'A', 0.9), rp('a2', 'A', 0.8), rp('a3', 'A', 0.7), rp('b1', 'B', 0.6), rp('c1', 'C', 0.5)], 2, 3);
    expect(r.kept.map((p) => p.uri)).toEqual(['a1', 'a2', 'b1']);
    expect(r.dropped).toEqual([
      { uri: 'a3', id: null, reason: 'max_per_document' },
      { uri: 'c1', id: null, reason: 'top_k' },
    ]);
  });
});

describe('mergeLinked', () => {
  it('enters a linked passage at its score without reordering the rest, and keeps the better score of a repeat', () => {
    const base = [rp('x', 'X', 0.9), rp('y', 'Y', 0.3), rp('z', 'Z', 0.6)];
    const out = mergeLinked(base, [pref('viking://l', 0.5), pref('y', 0.4, { docUri: 'Y' })]);
    expect(out.map((c) => [c.uri, c.score, c.source])).toEqual([
      ['x', 0.9, 'search'],
      ['viking://l', 0.5, 'graph_assist'],
      ['y', 0.4, 'search'],
      ['z', 0.6, 'search'],
    ]);
  });
});

describe('applyRerank', () => {
  it('orders by cross-encoder score and keeps unscored candidates after, in their order', () => {
    const out = applyRerank([rp('a', 'A', 0.9), rp('b', 'B', 0.8), rp('c', 'C', 0.7), rp('d', 'D', 0.6)], [
      { id: 'c', score: 0.95 },
      { id: 'a', score: 0.2 },
      { id: 'b', score: 0.95 },
    ]);
    expect(out.map((c) => [c.uri, c.score, c.rerankScore])).toEqual([
      ['b', 0.95, 0.95],
      ['c', 0.95, 0.95],
      ['a', 0.2, 0.2],
      ['d', 0.6, null],
    ]);
  });
});

describe('buildCitations', () => {
  it('gives one citation per document, numbered in order of first passage, passage ids in passage order', () => {
    const r = buildCitations([
      { id: 'p1', docUri: 'A', title: 'Doc A' },
      { id: 'p2', docUri: 'B', title: 'Doc B' },
      { id: 'p4', docUri: 'A', title: 'Doc A' },
    ]);
    expect(r.citations).toEqual([
      { id: 'c1', docUri: 'A', title: 'Doc A', passageIds: ['p1', 'p4'] },
      { id: 'c2', docUri: 'B', title: 'Doc B', passageIds: ['p2'] },
    ]);
    expect(r.citationOf).toEqual(['c1', 'c2', 'c1']);
  });
});

describe('retrieve', () => {
  it('answers passages, memories, group memories and citations with counted tokens and the resolved workspace', async () => {
    const { ports, calls } = fakePorts({
      passages: three,
      memories: [{ uri: 'viking://user/alice/memories/m.md', score: 0.6, subject: 'alice', text: 'likes tea' }],
      groupMemories: [{ uri: 'viking://agent/memories/g.md', score: 0.5, subject: '', text: 'team uses jest' }],
      workspace: async () => ({ workspace: 'proj' }),
    });
    const { response: r } = await run(req(), ports);
    expect(calls.gather[0].identity?.workspace).toBe('proj');
    expect(calls.gather[0]).toMatchObject({ queries: ['rollback'], topK: 8, memoryK: 5, maxPerDocument: 2 });
    expect(r.passages.map((p) => [p.id, p.uri, p.citation, p.tokens])).toEqual([
      ['p1', 'viking://resources/a.md#p1', 'c1', 3],
      ['p2', 'viking://resources/a.md#p2', 'c1', 3],
      ['p3', 'viking://resources/b.md', 'c2', 3],
    ]);
    expect(r.citations).toEqual([
      { id: 'c1', docUri: 'viking://resources/a.md', title: 'T viking://resources/a.md', passageIds: ['p1', 'p2'] },
      { id: 'c2', docUri: 'viking://resources/b.md', title: 'T viking://resources/b.md', passageIds: ['p3'] },
    ]);
    expect(r.memories).toEqual([{ uri: 'viking://user/alice/memories/m.md', text: 'likes tea', score: 0.6, tokens: 2, subject: 'alice' }]);
    expect(r.groupMemories).toEqual([{ uri: 'viking://agent/memories/g.md', text: 'team uses jest', score: 0.5, tokens: 3, subject: '' }]);
    expect(r.tokensTotal).toBe(9 + 2 + 3);
    expect(r.droppedCount).toBe(0);
    expect(r.degradedStages).toEqual([]);
    expect(r.budgetMs).toBeUndefined();
    expect(r.traceId).toBe('');
  });

  it('applies the contract defaults to zeros on the wire', async () => {
    const { ports, calls } = fakePorts({ passages: three });
    await run(req({ topK: 0, maxPerDocument: 0 }), ports);
    expect(calls.gather[0]).toMatchObject({ topK: 8, maxPerDocument: 2 });
  });

  it('refuses a blank query before any call', async () => {
    const { ports, calls } = fakePorts();
    await expect(run(req({ query: '  ' }), ports)).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    expect(calls.workspace).toBe(0);
  });

  it('fails with the workspace error: an unknown or foreign workspace is never an empty answer', async () => {
    for (const code of [Code.NOT_FOUND, Code.PERMISSION_DENIED]) {
      const { ports, calls } = fakePorts({ workspace: () => Promise.reject(new CtxError(code, 'WS', 'ws')) });
      await expect(run(req(), ports)).rejects.toMatchObject({ code });
      expect(calls.gather).toHaveLength(0);
    }
  });

  it('caps passages per document and top_k after the stages', async () => {
    const many = [pref('viking://r/a#p1', 0.9), pref('viking://r/a#p2', 0.85), pref('viking://r/a#p3', 0.8), pref('viking://r/b', 0.7), pref('viking://r/c', 0.6)];
    const { ports } = fakePorts({ passages: many, linked: [pref('viking://r/a#p4', 0.95)] });
    const { response: r } = await run(req({ topK: 3, maxPerDocument: 2, stages: [{ name: 'graph_assist', enabled: true }] }), ports);
    expect(r.passages.map((p) => p.uri)).toEqual(['viking://r/a#p4', 'viking://r/a#p1', 'viking://r/b']);
  });

  describe('stages', () => {
    it('names a stage that cannot fit the time budget in degradedStages and never calls it (1000 ms budget, 8 s reranker, 6 s rewrite)', async () => {
      const { ports, calls } = fakePorts({ passages: three });
      const { response: r } = await run(req({ timeBudgetMs: 1000 }), ports, configured());
      expect(calls.rerank).toHaveLength(0);
      expect(calls.rewrite).toHaveLength(0);
      expect(r.degradedStages).toEqual(['query_rewrite', 'rerank']);
      expect(r.budgetMs).toBe(1000);
      expect(r.passages).toHaveLength(3);
      const rerank = r.stages.find((s) => s.stage === 'rerank');
      expect(rerank).toMatchObject({ status: common.StageStatus.STAGE_STATUS_SKIPPED, reason: 'BUDGET_EXHAUSTED', durationMs: 0 });
    });

    it('runs every configured stage without a time budget, and then trusts the measured latency', async () => {
      const s = configured({ defaults: { query_rewrite: true, graph_assist: true, rerank: true } });
      const est = cold(s);
      const { ports, calls } = fakePorts({ passages: three, linked: [pref('viking://resources/l.md', 0.75)] });
      const first = await run(req(), ports, s, {}, est);
      expect(calls.rewrite).toHaveLength(1);
      expect(calls.expand).toHaveLength(1);
      expect(calls.rerank).toHaveLength(1);
      expect(first.response.degradedStages).toEqual([]);
      expect(calls.gather[0].queries).toEqual(['rollback', 'rollback plan']);
      expect(calls.gather[0].topK).toBe(gatherSize(8, true));
      // The fake reranker reverses the order.
      expect(first.response.passages.map((p) => p.uri)).toEqual(['viking://resources/b.md', 'viking://resources/l.md', 'viking://resources/a.md#p2', 'viking://resources/a.md#p1']);
      // Fast runs replace the pessimistic priors: the same 1000 ms budget now admits every stage.
      const again = await run(req({ timeBudgetMs: 1000 }), ports, s, {}, est);
      expect(again.response.degradedStages).toEqual([]);
      expect(calls.rerank).toHaveLength(2);
    });

    it('clamps an admitted stage to what remains of the time budget', async () => {
      const s = configured({ defaults: { query_rewrite: false, graph_assist: false, rerank: true } });
      const est = cold(s);
      est.record('rerank', 5);
      const { ports, calls } = fakePorts({ passages: three });
      await run(req({ timeBudgetMs: 3000 }), ports, s, {}, est);
      expect(calls.rerank[0].timeoutMs).toBeGreaterThan(0);
      expect(calls.rerank[0].timeoutMs).toBeLessThanOrEqual(3000 - s.reserveMs);
      await run(req(), ports, s, {}, est);
      expect(calls.rerank[1].timeoutMs).toBe(8000);
    });

    it('degrades a failed or timed-out stage and still answers', async () => {
      for (const [status, outcome] of [
        ['failed', common.StageStatus.STAGE_STATUS_FAILED],
        ['timeout', common.StageStatus.STAGE_STATUS_TIMEOUT],
      ] as const) {
        const { ports } = fakePorts({ passages: three, rerank: async () => ({ scores: [], status }) });
        const { response: r } = await run(req(), ports, configured({ defaults: { query_rewrite: false, graph_assist: false, rerank: true } }));
        expect(r.degradedStages).toEqual(['rerank']);
        expect(r.stages.find((x) => x.stage === 'rerank')?.status).toBe(outcome);
        expect(r.passages.map((p) => p.uri)).toEqual(three.map((p) => p.uri));
      }
      const { ports } = fakePorts({ passages: three, rewriteQuery: () => Promise.reject(new CtxError(Code.UNAVAILABLE, 'DOWN', 'down')) });
      const { response: r } = await run(req(), ports, configured({ defaults: { query_rewrite: true, graph_assist: false, rerank: false } }));
      expect(r.degradedStages).toEqual(['query_rewrite']);
      expect(r.passages).toHaveLength(3);
    });

    it("treats a rewrite service answering 'off' as not configured, not degraded", async () => {
      const { ports } = fakePorts({
        passages: three,
        rerank: async () => ({ scores: [], status: 'off' }),
        rewriteQuery: async (r) => ({ queries: [r.query], status: 'off' }),
      });
      const { response: r } = await run(req(), ports, configured());
      expect(r.degradedStages).toEqual([]);
      expect(r.stages.filter((x) => x.stage === 'rerank' || x.stage === 'query_rewrite').map((x) => [x.stage, x.status, x.reason])).toEqual([
        ['query_rewrite', common.StageStatus.STAGE_STATUS_SKIPPED, 'NOT_CONFIGURED'],
        ['rerank', common.StageStatus.STAGE_STATUS_SKIPPED, 'NOT_CONFIGURED'],
      ]);
    });

    it('does not call stages that are not configured or not asked for, and does not count them as degraded', async () => {
      const { ports, calls } = fakePorts({ passages: three });
      const { response: r } = await run(req({ timeBudgetMs: 5, stages: [{ name: 'rerank', enabled: false }] }), ports, configured({ rerankConfigured: true, modelConfigured: false }));
      expect(calls.rerank).toHaveLength(0);
      expect(calls.rewrite).toHaveLength(0);
      expect(r.degradedStages).toEqual([]);
      expect(calls.gather[0].topK).toBe(8);
    });
  });

  describe('token_budget', () => {
    it('drops the lowest-scored passages, keeps the order of survivors, cites only survivors and never trims memories', async () => {
      const ps = [pref('viking://r/a', 0.5, { text: 'one two three' }), pref('viking://r/b', 0.9, { text: 'one two three' }), pref('viking://r/c', 0.2, { text: 'one two three' })];
      const memories = [{ uri: 'viking://user/alice/memories/m', score: 0.1, subject: 'alice', text: 'a b c d' }];
      const { ports, calls } = fakePorts({ passages: ps, memories });
      const { response: r } = await run(req({ tokenBudget: 10 }), ports);
      expect(calls.trim[0].tokenBudget).toBe(10);
      expect(r.passages.map((p) => [p.id, p.uri])).toEqual([
        ['p1', 'viking://r/a'],
        ['p2', 'viking://r/b'],
      ]);
      expect(r.citations.map((c) => c.docUri)).toEqual(['viking://r/a', 'viking://r/b']);
      expect(r.droppedCount).toBe(1);
      expect(r.tokensTotal).toBe(10);
      expect(r.memories).toHaveLength(1);
      const tiny = await run(req({ tokenBudget: 1 }), ports);
      expect(tiny.response.passages).toEqual([]);
      expect(tiny.response.citations).toEqual([]);
      expect(tiny.response.memories).toHaveLength(1);
      expect(tiny.response.tokensTotal).toBe(4);
      expect(tiny.response.droppedCount).toBe(3);
    });

    it('property: survivors are an ordered subsequence, totals add up, no better passage dropped before a worse kept one', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ doc: fc.integer({ min: 0, max: 5 }), score: fc.double({ min: 0, max: 1, noNaN: true }), n: fc.integer({ min: 0, max: 30 }) }), { maxLength: 12 }),
          fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 4 }),
          fc.option(fc.integer({ min: 1, max: 200 }), { nil: undefined }),
          async (raw, memWords, tokenBudget) => {
            const ps = raw.map((p, i) => pref(`viking://r/d${p.doc}#p${i}`, p.score, { text: Array.from({ length: p.n }, () => 'w').join(' ') }));
            const memories = memWords.map((n, i) => ({ uri: `viking://user/alice/memories/m${i}`, score: 0.5, subject: 'alice', text: Array.from({ length: n }, () => 'm').join(' ') }));
            const { ports } = fakePorts({ passages: ps, memories });
            const untrimmed = (await run(req({ topK: 100, maxPerDocument: 100 }), ports)).response;
            const { response: r } = await run(req({ topK: 100, maxPerDocument: 100, tokenBudget }), ports);
            const order = untrimmed.passages.map((p) => p.id);
            const idx = r.passages.map((p) => order.indexOf(p.id));
            expect(idx.every((x, i) => x >= 0 && (i === 0 || x > idx[i - 1]))).toBe(true);
            const sum = [...r.passages, ...r.memories, ...r.groupMemories].reduce((a, e) => a + e.tokens, 0);
            expect(r.tokensTotal).toBe(sum);
            expect(r.droppedCount).toBe(untrimmed.passages.length - r.passages.length);
            expect(r.memories).toEqual(untrimmed.memories);
            if (tokenBudget === undefined) expect(r.droppedCount).toBe(0);
            else if (r.droppedCount > 0) expect(r.tokensTotal <= tokenBudget || r.passages.length === 0).toBe(true);
            const minKept = Math.min(...r.passages.map((p) => p.score));
            const kept = new Set(r.passages.map((p) => p.id));
            for (const p of untrimmed.passages) if (!kept.has(p.id)) expect(p.score).toBeLessThanOrEqual(minKept);
            const cited = r.citations.flatMap((c) => c.passageIds).sort();
            expect(cited).toEqual([...kept].sort());
          },
        ),
        { numRuns: 150 },
      );
    });
  });

  describe('traces', () => {
    class MemorySink implements TraceSink {
      rows: TraceRecord[] = [];
      async append(row: TraceRecord) {
        this.rows.push(row);
      }
      async get(id: string, account: string) {
        return this.rows.find((r) => r.id === id && r.account === account) ?? null;
      }
    }

    it('writes one row per request with the query, parameters, stages, candidates and drops, and answers its id', async () => {
      const sink = new MemorySink();
      const { ports } = fakePorts({ passages: three, memories: [] });
      const s = defaultRetrieveSettings({ traceEnabled: true });
      const out = await run(req({ tokenBudget: 5, topK: 3, maxPerDocument: 1 }), ports, s, { traces: sink, newId: () => 'tr_x' });
      const r = out.response;
      expect(r.traceId).toBe('tr_x');
      expect(sink.rows).toHaveLength(1);
      const row = sink.rows[0];
      expect(row.account).toBe('acme');
      // Stored under the proto field names, and read back as the trace that was written.
      expect(row.data).toMatchObject({ trace_id: 'tr_x', query: 'rollback', params: { top_k: 3, token_budget: 5, max_per_document: 1 } });
      const t = traceFromStored(row);
      expect(t).toEqual(out.trace);
      expect(t).toMatchObject({
        traceId: 'tr_x',
        query: 'rollback',
        workspace: 'default',
        params: { topK: 3, tokenBudget: 5, maxPerDocument: 1, mmrLambda: undefined },
        degradedStages: [],
        dropped: [
          { uri: 'viking://resources/a.md#p2', id: '', reason: 'max_per_document' },
          { uri: 'viking://resources/b.md', id: 'p2', reason: 'token_budget' },
        ],
        result: { tokensTotal: 3, droppedCount: 1 },
      });
      expect(t.candidates).toEqual(three.map((p) => ({ uri: p.uri, docUri: p.docUri, score: p.score, searchScore: p.score, source: 'search', rerankScore: undefined })));
      expect(r.passages.map((p) => p.uri)).toEqual(['viking://resources/a.md#p1']);
      expect(t.stages.map((x) => x.stage)).toEqual(['workspace', 'query_rewrite', 'gather', 'graph_assist', 'rerank', 'trim']);
    });

    it('writes nothing and answers no id when traces are off', async () => {
      const sink = new MemorySink();
      const { ports } = fakePorts({ passages: three });
      const { response: r } = await run(req(), ports, defaultRetrieveSettings({ traceEnabled: false }), { traces: sink });
      expect(r.traceId).toBe('');
      expect(sink.rows).toEqual([]);
    });

    it('still answers, without a trace id, when the trace store fails', async () => {
      const failing: TraceSink = { append: () => Promise.reject(new Error('nats down')), get: async () => null };
      const warnings: string[] = [];
      const { ports } = fakePorts({ passages: three });
      const { response: r } = await run(req(), ports, defaultRetrieveSettings({ traceEnabled: true }), { traces: failing, warn: (_o: unknown, m: string) => warnings.push(m) });
      expect(r.traceId).toBe('');
      expect(r.passages).toHaveLength(3);
      expect(warnings).toEqual(['retrieval trace not written']);
    });
  });
});
