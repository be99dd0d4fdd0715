import { common, type orchestrator } from '@ctxmesh/proto';
import { mayReadTrace, traceFromStored, traceToStored } from './trace';

const TRACE: orchestrator.RetrievalTrace = {
  traceId: 'tr_1',
  createdAtMs: Date.parse('2026-07-01T12:00:00.000Z'),
  requestId: 'req-1',
  user: 'alice',
  workspace: 'default',
  query: 'rollback',
  plannedQueries: ['rollback', 'revert'],
  params: {
    subject: 'alice',
    topK: 8,
    memoryK: 5,
    mmrLambda: 0.5,
    maxPerDocument: 2,
    asOfMs: Date.parse('2026-03-01T00:00:00.000Z'),
    tokenBudget: undefined,
    timeBudgetMs: 800,
    stages: { queryRewrite: true, graphAssist: false, rerank: true },
    tokenizer: 'estimate',
  },
  stages: [{ stage: 'rerank', outcome: 'skipped', ms: 0, reason: 'NOT_CONFIGURED', optional: true }],
  degradedStages: [],
  candidates: [{ uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', score: 0.9, searchScore: 0.8, source: 'graph_assist', rerankScore: 0.9 }],
  dropped: [{ uri: 'viking://resources/b.md', id: '', reason: 'top_k' }],
  result: { passages: [{ id: 'p1', uri: 'viking://resources/a.md#p1', score: 0.9, tokens: 4 }], memories: [], groupMemories: [], tokensTotal: 4, droppedCount: 0 },
};

describe('traceToStored / traceFromStored', () => {
  it('stores the proto JSON under the proto field names and reads back the same trace', () => {
    const data = traceToStored(TRACE);
    expect(Object.keys(data)).toEqual(expect.arrayContaining(['trace_id', 'created_at_ms', 'request_id', 'planned_queries', 'params', 'stages', 'candidates', 'dropped', 'result']));
    expect(data).toMatchObject({ trace_id: 'tr_1', user: 'alice', params: { top_k: 8, as_of_ms: TRACE.params!.asOfMs, stages: { query_rewrite: true, rerank: true } } });
    expect(traceFromStored({ id: 'tr_1', account: 'acme', createdAt: TRACE.createdAtMs, data })).toEqual(TRACE);
  });

  it('reads a row written before the trace was a message (ISO created_at and as_of, nulls for absent values)', () => {
    const createdAt = Date.parse('2026-06-30T08:00:00.000Z');
    const legacy = {
      trace_id: 'tr_old',
      created_at: new Date(createdAt).toISOString(),
      request_id: null,
      user: 'alice',
      workspace: 'default',
      query: 'q',
      planned_queries: ['q'],
      params: { subject: 'alice', top_k: 8, memory_k: 5, mmr_lambda: null, max_per_document: 2, as_of: '2026-03-01T00:00:00.000Z', token_budget: null, time_budget_ms: null, stages: { query_rewrite: true, graph_assist: false, rerank: true }, tokenizer: 'estimate' },
      stages: [{ stage: 'gather', outcome: 'ok', ms: 1.5, reason: null, optional: false }, { stage: 'rerank', outcome: 'skipped', ms: 0, reason: 'NOT_CONFIGURED', optional: true }],
      degraded_stages: [],
      candidates: [{ uri: 'u#p1', doc_uri: 'u', score: 0.5, search_score: 0.5, source: 'search', rerank_score: null }],
      dropped: [{ uri: 'u#p2', id: null, reason: 'top_k' }],
      result: { passages: [], memories: [{ uri: 'm', score: 0.4, tokens: 2 }], group_memories: [], tokens_total: 2, dropped_count: 0 },
    };
    const t = traceFromStored({ id: 'tr_old', account: 'acme', createdAt, data: legacy });
    expect(t).toMatchObject({ traceId: 'tr_old', createdAtMs: createdAt, requestId: '', plannedQueries: ['q'] });
    expect(t.params).toMatchObject({ asOfMs: Date.parse('2026-03-01T00:00:00.000Z'), mmrLambda: undefined, tokenBudget: undefined, timeBudgetMs: undefined, stages: { queryRewrite: true, graphAssist: false, rerank: true } });
    expect(t.stages.map((s) => [s.stage, s.reason, s.optional])).toEqual([
      ['gather', '', false],
      ['rerank', 'NOT_CONFIGURED', true],
    ]);
    expect(t.candidates[0]).toEqual({ uri: 'u#p1', docUri: 'u', score: 0.5, searchScore: 0.5, source: 'search', rerankScore: undefined });
    expect(t.dropped[0].id).toBe('');
    expect(t.result?.memories).toEqual([{ id: '', uri: 'm', score: 0.4, tokens: 2 }]);
  });
});

describe('mayReadTrace', () => {
  const row = { data: traceToStored(TRACE) };
  it('lets the user who made the request and the account admins read a stored trace, no one else', () => {
    expect(mayReadTrace(row, { userId: 'alice', role: common.Role.ROLE_USER })).toBe(true);
    expect(mayReadTrace(row, { userId: 'carol', role: common.Role.ROLE_ADMIN })).toBe(true);
    expect(mayReadTrace(row, { userId: 'bob', role: common.Role.ROLE_USER })).toBe(false);
    expect(mayReadTrace(row, { userId: '', role: common.Role.ROLE_UNSPECIFIED })).toBe(false);
  });
});
