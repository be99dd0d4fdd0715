/**
 * The retrieve routes over the real orchestrator client against a scripted orchestrator —
 * over gRPC on port 0, and called in process as the one-process launcher does: envelopes, the
 * workspace precedence, status codes of the orchestrator's refusals, and traces, alike on both.
 */
import { common, orchestrator } from '@ctxmesh/proto';
import { Code, CtxError, implement, type Handler } from '@ctxmesh/rpc';
import { InProcEventBus } from '@ctxmesh/stores';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp, orchestratorClient, sessionsClient } from '../src';

const silent = pino({ level: 'silent' });
const got: { retrieve: orchestrator.RetrieveRequest[]; trace: orchestrator.GetTraceRequest[] } = { retrieve: [], trace: [] };
let answer: (req: orchestrator.RetrieveRequest) => orchestrator.RetrieveResponse | Error;

const OK: orchestrator.RetrieveResponse = {
  passages: [{ id: 'p1', uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', text: 'alpha', score: 0.8, tokens: 2, citation: 'c1' }],
  memories: [{ uri: 'viking://user/default/memories/m.md', text: 'tea', score: 0.5, tokens: 1, subject: 'default' }],
  groupMemories: [],
  citations: [{ id: 'c1', docUri: 'viking://resources/a.md', title: 'A', passageIds: ['p1'] }],
  tokensTotal: 3,
  droppedCount: 0,
  degradedStages: ['rerank'],
  explain: undefined,
  stages: [
    { stage: 'gather', status: common.StageStatus.STAGE_STATUS_OK, durationMs: 4, reason: '' },
    { stage: 'rerank', status: common.StageStatus.STAGE_STATUS_SKIPPED, durationMs: 0, reason: 'BUDGET_EXHAUSTED' },
  ],
  budgetMs: 1000,
  traceId: 'tr_abc',
};

/** A trace as the orchestrator reads it back, and the JSON the route must answer for it. */
const TRACE: orchestrator.RetrievalTrace = {
  traceId: 'tr_abc',
  createdAtMs: Date.parse('2026-07-01T12:00:00.000Z'),
  requestId: '',
  user: 'default',
  workspace: 'default',
  query: 'alpha',
  plannedQueries: ['alpha'],
  params: {
    subject: 'default',
    topK: 8,
    memoryK: 5,
    mmrLambda: undefined,
    maxPerDocument: 2,
    asOfMs: Date.parse('2026-03-01T00:00:00.000Z'),
    tokenBudget: undefined,
    timeBudgetMs: 1000,
    stages: { queryRewrite: true, graphAssist: false, rerank: true },
    tokenizer: 'estimate',
  },
  stages: [
    { stage: 'workspace', outcome: 'ok', ms: 0.5, reason: '', optional: false },
    { stage: 'rerank', outcome: 'skipped', ms: 0, reason: 'NOT_CONFIGURED', optional: true },
  ],
  degradedStages: [],
  candidates: [{ uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', score: 0.8, searchScore: 0.8, source: 'search', rerankScore: undefined }],
  dropped: [{ uri: 'viking://resources/b.md#p1', id: '', reason: 'top_k' }],
  result: {
    passages: [{ id: 'p1', uri: 'viking://resources/a.md#p1', score: 0.8, tokens: 2 }],
    memories: [{ id: '', uri: 'viking://user/default/memories/m.md', score: 0.5, tokens: 1 }],
    groupMemories: [],
    tokensTotal: 3,
    droppedCount: 0,
  },
};
const TRACE_JSON =
  '{"trace_id":"tr_abc","created_at":"2026-07-01T12:00:00.000Z","request_id":null,"user":"default","workspace":"default","query":"alpha","planned_queries":["alpha"],' +
  '"params":{"subject":"default","top_k":8,"memory_k":5,"mmr_lambda":null,"max_per_document":2,"as_of":"2026-03-01T00:00:00.000Z","token_budget":null,"time_budget_ms":1000,' +
  '"stages":{"query_rewrite":true,"graph_assist":false,"rerank":true},"tokenizer":"estimate"},' +
  '"stages":[{"stage":"workspace","outcome":"ok","ms":0.5,"reason":null,"optional":false},{"stage":"rerank","outcome":"skipped","ms":0,"reason":"NOT_CONFIGURED","optional":true}],' +
  '"degraded_stages":[],"candidates":[{"uri":"viking://resources/a.md#p1","doc_uri":"viking://resources/a.md","score":0.8,"search_score":0.8,"source":"search","rerank_score":null}],' +
  '"dropped":[{"uri":"viking://resources/b.md#p1","id":null,"reason":"top_k"}],' +
  '"result":{"passages":[{"id":"p1","uri":"viking://resources/a.md#p1","score":0.8,"tokens":2}],"memories":[{"uri":"viking://user/default/memories/m.md","score":0.5,"tokens":1}],' +
  '"group_memories":[],"tokens_total":3,"dropped_count":0}}';

describe.each(['grpc', 'in-process'] as const)('over %s', (transport) => {
  let srv: TestServer;
  let app: FastifyInstance;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const retrieve: Handler<orchestrator.RetrieveRequest, orchestrator.RetrieveResponse> = async (req) => {
      got.retrieve.push(req);
      const a = answer(req);
      if (a instanceof Error) throw a;
      return a;
    };
    const getTrace: Handler<orchestrator.GetTraceRequest, orchestrator.GetTraceResponse> = async (req) => {
      got.trace.push(req);
      if (req.traceId !== 'tr_abc') throw new CtxError(Code.NOT_FOUND, 'TRACE_NOT_FOUND', `trace '${req.traceId}' not found`);
      return { trace: TRACE };
    };
    srv = await startTestServer([
      {
        name: 'ctxmesh.orchestrator.v1.OrchestratorService',
        definition: orchestrator.OrchestratorServiceService,
        implementation: implement<orchestrator.OrchestratorServiceServer>(orchestrator.OrchestratorServiceService, { retrieve, getTrace }, { domain: 'orchestrator', log: silent }),
      },
    ]);
    // The one-process launcher calls the orchestrator in process; a gateway of its own, over gRPC.
    const orch = transport === 'grpc' ? orchestratorClient(srv.address) : orchestratorClient('127.0.0.1:9', srv.running.services[0]);
    const sess = sessionsClient('127.0.0.1:9');
    const bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
    app = buildApp({ log: silent, auth: { mode: 'dev' }, deadlines: { defaultMs: 10_000, maxMs: 20_000 }, orchestrator: orch, sessions: sess, bus });
    await app.ready();
    close = async () => {
      await app.close();
      orch.close();
      sess.close();
      await bus.close();
      await srv.close();
    };
  });

  afterAll(async () => close());

  beforeEach(() => {
    got.retrieve = [];
    got.trace = [];
    answer = () => OK;
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/api/v1/retrieve', payload: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  describe('POST /api/v1/retrieve', () => {
    it('POST /api/v1/retrieve - valid body - 200 with the contract result', async () => {
      const res = await post({ query: 'alpha', time_budget_ms: 1000 });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        status: 'ok',
        result: {
          passages: [{ id: 'p1', uri: 'viking://resources/a.md#p1', doc_uri: 'viking://resources/a.md', text: 'alpha', score: 0.8, tokens: 2, citation: 'c1' }],
          memories: [{ uri: 'viking://user/default/memories/m.md', text: 'tea', score: 0.5, tokens: 1, subject: 'default' }],
          groupMemories: [],
          citations: [{ id: 'c1', doc_uri: 'viking://resources/a.md', title: 'A', passage_ids: ['p1'] }],
          tokens_total: 3,
          dropped_count: 0,
          searchMeta: { degradedStages: ['rerank'], stageMs: { gather: 4 }, budgetMs: 1000 },
          trace_id: 'tr_abc',
        },
      });
      expect(got.retrieve[0]).toMatchObject({ query: 'alpha', topK: 8, memoryK: 5, maxPerDocument: 2, timeBudgetMs: 1000, identity: { accountId: 'default', userId: 'default', workspace: '' } });
    });

    it('POST /api/v1/retrieve - explain true, then absent - explain passed through and asked for; absent keeps the bytes', async () => {
      const typed: orchestrator.RetrieveExplain = {
        traceId: '',
        retrievalTraceId: 'tr_abc',
        stages: [],
        candidates: [
          { rank: 1, kind: 'passage', id: 'p1', uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', category: 'resources', source: 'search', score: 0.8, rankedScore: 0.8, rerankScore: undefined, tier: 'passage', textTokens: 2, reason: 'served' },
        ],
      };
      const explain = {
        trace_id: null,
        retrieval_trace_id: 'tr_abc',
        stages: [],
        candidates: [
          { rank: 1, kind: 'passage', id: 'p1', uri: 'viking://resources/a.md#p1', doc_uri: 'viking://resources/a.md', category: 'resources', origin: null, source: 'search', score: 0.8, ranked_score: 0.8, rerank_score: null, tier: 'passage', tokens: { text: 2 }, reason: 'served' },
        ],
      };
      answer = (req) => ({ ...OK, explain: req.explain ? typed : undefined });
      const withExplain = await post({ query: 'alpha', explain: true });
      expect(withExplain.statusCode).toBe(200);
      expect(Object.keys(withExplain.json().result).at(-1)).toBe('explain');
      expect(withExplain.json().result.explain).toEqual(explain);
      expect(got.retrieve.at(-1)?.explain).toBe(true);
      const plain = await post({ query: 'alpha' });
      expect(got.retrieve.at(-1)?.explain).toBe(false);
      expect(plain.json().result.explain).toBeUndefined();
      expect(plain.body).toBe(withExplain.body.replace(`,"explain":${JSON.stringify(explain)}`, ''));
      const bad = await post({ query: 'alpha', explain: [true] });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error.details.validation_errors[0].loc).toEqual(['body', 'explain']);
      answer = () => OK;
    });

    it('POST /api/v1/retrieve - workspace in the body and in X-Workspace - 200, the body wins, else the header', async () => {
      await post({ query: 'q', workspace: 'body-ws' }, { 'x-workspace': 'header-ws' });
      await post({ query: 'q' }, { 'x-workspace': 'header-ws' });
      expect(got.retrieve.map((r) => r.identity?.workspace)).toEqual(['body-ws', 'header-ws']);
    });

    it.each([
      ['NOT_FOUND (unknown workspace)', Code.NOT_FOUND, 404, 'WORKSPACE_NOT_FOUND'],
      ['PERMISSION_DENIED (foreign workspace)', Code.PERMISSION_DENIED, 403, 'WORKSPACE_FOREIGN'],
    ])('POST /api/v1/retrieve - orchestrator answers %s (gRPC %i) - HTTP %i, never an empty 200', async (_name, code, status, reason) => {
      answer = () => new CtxError(code, reason, 'workspace refused');
      const res = await post({ query: 'q', workspace: 'elsewhere' });
      expect(res.statusCode).toBe(status);
      expect(res.json().error.details.reason).toBe(reason);
    });

    it('POST /api/v1/retrieve - out-of-range top_k - 400 naming the field, no call made', async () => {
      const res = await post({ query: 'q', top_k: 0 });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain('body.top_k');
      expect(got.retrieve).toHaveLength(0);
    });

    it('POST /api/v1/retrieve - unknown field inside stages - 400', async () => {
      const res = await post({ query: 'q', stages: { rerank: true, turbo: true } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain('body.stages.turbo');
    });

    it('POST /api/v1/retrieve - without a time budget or trace - 200 with budgetMs and trace_id null', async () => {
      answer = () => ({ ...OK, budgetMs: undefined, traceId: '', degradedStages: [] });
      const r = (await post({ query: 'q' })).json().result;
      expect(r.searchMeta.budgetMs).toBeNull();
      expect(r.trace_id).toBeNull();
      expect(r.dropped_count).toBe(0);
    });
  });

  describe('GET /api/v1/traces/{id}', () => {
    it('GET /api/v1/traces/{id} - a known id - 200 with the trace', async () => {
      const res = await app.inject({ method: 'GET', url: '/api/v1/traces/tr_abc' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe(`{"status":"ok","result":${TRACE_JSON}}`);
      expect(got.trace[0].identity?.accountId).toBe('default');
    });

    it('GET /api/v1/traces/{id} - an unknown id - 404', async () => {
      const res = await app.inject({ method: 'GET', url: '/api/v1/traces/tr_nope' });
      expect(res.statusCode).toBe(404);
    });
  });
});
