import { common, type orchestrator } from '@ctxmesh/proto';
import { validateRetrieveBody, type Caller } from '../domain';
import { retrieveResult, stageMsOf, toRetrieveRequest } from './retrieve';

const caller: Caller = { accountId: 'acme', userId: 'alice', role: 'user', actorPeerId: null, requestId: 'r1', workspace: 'from-header' } as Caller;

describe('toRetrieveRequest', () => {
  it("puts the body's workspace over the X-Workspace header, and leaves absent optionals absent", () => {
    const r = toRetrieveRequest(validateRetrieveBody({ query: 'q', workspace: 'from-body' }), caller);
    expect(r.identity?.workspace).toBe('from-body');
    expect(r).toMatchObject({ query: 'q', subject: '', topK: 8, memoryK: 5, maxPerDocument: 2, asOfMs: undefined, stages: [], tokenizer: 'estimate' });
    expect(r.mmrLambda).toBeUndefined();
    expect(r.tokenBudget).toBeUndefined();
    expect(r.timeBudgetMs).toBeUndefined();
    expect(toRetrieveRequest(validateRetrieveBody({ query: 'q' }), caller).identity?.workspace).toBe('from-header');
  });

  it('carries every field the body names', () => {
    const r = toRetrieveRequest(
      validateRetrieveBody({ query: 'q', subject: 'bob', mmr_lambda: 0, token_budget: 9, time_budget_ms: 250, as_of: '2026-01-02', stages: { rerank: true, query_rewrite: false } }),
      caller,
    );
    expect(r).toMatchObject({ subject: 'bob', mmrLambda: 0, tokenBudget: 9, timeBudgetMs: 250, asOfMs: Date.parse('2026-01-02T00:00:00.000Z') });
    // In the stages' declaration order, whatever the body's order.
    expect(r.stages).toEqual([
      { name: 'query_rewrite', enabled: false },
      { name: 'rerank', enabled: true },
    ]);
  });
});

describe('retrieveResult', () => {
  const res: orchestrator.RetrieveResponse = {
    passages: [{ id: 'p1', uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', text: 't', score: 0.9, tokens: 3, citation: 'c1' }],
    memories: [{ uri: 'viking://user/alice/memories/m.md', text: 'm', score: 0.5, tokens: 1, subject: 'alice' }],
    groupMemories: [{ uri: 'viking://agent/memories/g.md', text: 'g', score: 0.4, tokens: 2, subject: '' }],
    citations: [{ id: 'c1', docUri: 'viking://resources/a.md', title: 'A', passageIds: ['p1'] }],
    tokensTotal: 6,
    droppedCount: 0,
    degradedStages: ['rerank'],
    explain: undefined,
    stages: [
      { stage: 'gather', status: common.StageStatus.STAGE_STATUS_OK, durationMs: 3.14159, reason: '' },
      { stage: 'rerank', status: common.StageStatus.STAGE_STATUS_SKIPPED, durationMs: 0, reason: 'BUDGET_EXHAUSTED' },
      { stage: 'graph_assist', status: common.StageStatus.STAGE_STATUS_TIMEOUT, durationMs: 20, reason: 'DEADLINE_EXCEEDED' },
    ],
    budgetMs: 1000,
    traceId: '',
  };

  it('has the contract keys in order, snake_case where the contract says so', () => {
    const j = retrieveResult(res);
    expect(Object.keys(j)).toEqual(['passages', 'memories', 'groupMemories', 'citations', 'tokens_total', 'dropped_count', 'searchMeta', 'trace_id']);
    expect(j.passages).toEqual([{ id: 'p1', uri: 'viking://resources/a.md#p1', doc_uri: 'viking://resources/a.md', text: 't', score: 0.9, tokens: 3, citation: 'c1' }]);
    expect(j.groupMemories).toEqual([{ uri: 'viking://agent/memories/g.md', text: 'g', score: 0.4, tokens: 2 }]);
    expect(j.memories[0].subject).toBe('alice');
    expect(j.citations).toEqual([{ id: 'c1', doc_uri: 'viking://resources/a.md', title: 'A', passage_ids: ['p1'] }]);
    expect(j.searchMeta).toEqual({ degradedStages: ['rerank'], stageMs: { gather: 3.14, graph_assist: 20 }, budgetMs: 1000 });
    expect(j.trace_id).toBeNull();
  });

  it('answers budgetMs null without a time budget and the trace id when one was written', () => {
    const j = retrieveResult({ ...res, budgetMs: undefined, traceId: 'tr_1' });
    expect(j.searchMeta.budgetMs).toBeNull();
    expect(j.trace_id).toBe('tr_1');
    expect(j.dropped_count).toBe(0);
  });
});

describe('stageMsOf', () => {
  it('leaves out the stages that did not run', () => {
    expect(stageMsOf([{ stage: 'x', status: common.StageStatus.STAGE_STATUS_SKIPPED, durationMs: 0, reason: 'NOT_CONFIGURED' }])).toEqual({});
  });
});
