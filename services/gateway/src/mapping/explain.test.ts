import type { orchestrator } from '@ctxmesh/proto';
import { contextExplainJson, retrieveExplainJson } from './explain';

describe('contextExplainJson', () => {
  it('writes the explain keys in order, null for what the message leaves empty, cooled_turn only when known', () => {
    const e: orchestrator.ContextExplain = {
      traceId: '',
      packing: 'evidence',
      stages: [
        { stage: 'gather', outcome: 'ok', startMs: 0.4, ms: 3.1, reason: '' },
        { stage: 'rerank', outcome: 'skipped', startMs: 3.5, ms: 0, reason: 'NOT_CONFIGURED' },
      ],
      floorTokens: 40,
      upgradeTokens: 12,
      candidates: [
        { rank: 1, uri: 'viking://a', category: 'events', origin: 'self', score: 0.7, rankedScore: 0.7, tier: 'overview', tokens: { uri: 9, abstract: 14, overview: 30, full: undefined }, reason: 'served', cooledTurn: undefined },
        { rank: undefined, uri: 'viking://b', category: 'resources', origin: '', score: 0.5, rankedScore: Number.NEGATIVE_INFINITY, tier: '', tokens: undefined, reason: 'cooled', cooledTurn: 2 },
      ],
    };
    expect(JSON.stringify(contextExplainJson(e))).toBe(
      '{"trace_id":null,"packing":"evidence","stages":[{"stage":"gather","outcome":"ok","start_ms":0.4,"ms":3.1},' +
        '{"stage":"rerank","outcome":"skipped","start_ms":3.5,"ms":0,"reason":"NOT_CONFIGURED"}],"fill":{"floor_tokens":40,"upgrade_tokens":12},"account":null,' +
        '"candidates":[{"rank":1,"uri":"viking://a","category":"events","origin":"self","score":0.7,"ranked_score":0.7,"tier":"overview",' +
        '"tokens":{"uri":9,"abstract":14,"overview":30,"full":null},"reason":"served"},' +
        '{"rank":null,"uri":"viking://b","category":"resources","origin":null,"score":0.5,"ranked_score":null,"tier":null,' +
        '"tokens":{"uri":null,"abstract":null,"overview":null,"full":null},"reason":"cooled","cooled_turn":2}]}',
    );
    expect(contextExplainJson({ ...e, traceId: 'abc' }).trace_id).toBe('abc');
  });
});

describe('retrieveExplainJson', () => {
  it('writes the retrieve rows: origin always null, ids, doc_uri, rerank score and tier null when absent', () => {
    const e: orchestrator.RetrieveExplain = {
      traceId: 't1',
      retrievalTraceId: '',
      stages: [],
      candidates: [
        { rank: 1, kind: 'passage', id: '', uri: 'viking://r/a.md#p2', docUri: 'viking://r/a.md', category: 'resources', source: 'search', score: 0.6, rankedScore: 0.6, rerankScore: undefined, tier: '', textTokens: undefined, reason: 'max_per_document' },
        { rank: undefined, kind: 'memory', id: 'm1', uri: 'viking://u/m.md', docUri: '', category: 'memories', source: 'search', score: 0.4, rankedScore: 0.4, rerankScore: undefined, tier: 'memory', textTokens: 3, reason: 'served' },
      ],
    };
    expect(JSON.stringify(retrieveExplainJson(e))).toBe(
      '{"trace_id":"t1","retrieval_trace_id":null,"stages":[],"candidates":[' +
        '{"rank":1,"kind":"passage","id":null,"uri":"viking://r/a.md#p2","doc_uri":"viking://r/a.md","category":"resources","origin":null,"source":"search","score":0.6,"ranked_score":0.6,"rerank_score":null,"tier":null,"tokens":{"text":null},"reason":"max_per_document"},' +
        '{"rank":null,"kind":"memory","id":"m1","uri":"viking://u/m.md","doc_uri":null,"category":"memories","origin":null,"source":"search","score":0.4,"ranked_score":0.4,"rerank_score":null,"tier":"memory","tokens":{"text":3},"reason":"served"}]}',
    );
  });
});
