/**
 * Orchestrator.Retrieve and GetTrace over real gRPC on port 0: the orchestrator as it runs,
 * its downstreams as scripted servers on loopback — a gather that answers fixed passages, a
 * sessions service that resolves workspaces, a budget-render that trims, and a rewrite service
 * whose rerank and query rewrite are slow (8 s and 6 s) and count every call they receive.
 * Traces go to the embedded SQLite file, or to NATS JetStream (`natsUrl()`).
 */
import { budgetRender, common, gather, orchestrator, rewrite, sessions } from '@ctxmesh/proto';
import { Budget, callUnary, closeHealthClients, Code, connect, CtxError, implement, type Handler } from '@ctxmesh/rpc';
import { connectNats, silentLogger } from '@ctxmesh/runtime';
import { NatsTraceStore, openEmbeddedDb, SqliteTraceStore, type EmbeddedDb } from '@ctxmesh/stores';
import { natsUrl, startTestServer, uniqueName, type TestServer } from '@ctxmesh/testing';
import { defaultRetrieveSettings, startOrchestrator, type RetrieveSettings, type TraceSink } from '../src';

const log = silentLogger();

/** What the scripted downstreams saw. */
const seen = { rerank: 0, rewriteQuery: 0, expandLinks: 0, expandLinksBudgetMs: [] as number[], rerankCancelled: 0, gather: [] as gather.GatherPassagesRequest[] };

/** Waits `ms` or until the call's budget ends (then records the cancel and throws its reason). */
async function slow<T>(ms: number, signal: AbortSignal, value: T, onCancel: () => void): Promise<T> {
  await new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        onCancel();
        reject(signal.reason);
      },
      { once: true },
    );
  });
  return value;
}

const PASSAGES: gather.PassageRef[] = [
  { uri: 'viking://resources/a.md#p1', docUri: 'viking://resources/a.md', score: 0.9, title: 'A', text: 'alpha one two' },
  { uri: 'viking://resources/a.md#p2', docUri: 'viking://resources/a.md', score: 0.8, title: 'A', text: 'alpha three four' },
  { uri: 'viking://resources/b.md', docUri: 'viking://resources/b.md', score: 0.7, title: 'B', text: 'beta five six' },
];

const downstreams = {
  gather: {
    gatherPassages: (async (req) => {
      seen.gather.push(req);
      return { passages: PASSAGES.slice(0, req.topK), memories: [{ uri: 'viking://user/alice/memories/m.md', score: 0.5, subject: 'alice', text: 'likes tea' }], groupMemories: [] };
    }) as Handler<gather.GatherPassagesRequest, gather.GatherPassagesResponse>,
    expandLinks: (async (_req, ctx) => {
      seen.expandLinks += 1;
      seen.expandLinksBudgetMs.push(ctx.budget.remainingMs());
      return { passages: [] };
    }) as Handler<gather.ExpandLinksRequest, gather.ExpandLinksResponse>,
  },
  sessions: {
    resolveWorkspace: (async (req) => {
      const ws = req.identity?.workspace ?? '';
      if (ws === 'ghost') throw new CtxError(Code.NOT_FOUND, 'WORKSPACE_NOT_FOUND', "workspace 'ghost' not found");
      if (ws === 'theirs') throw new CtxError(Code.PERMISSION_DENIED, 'WORKSPACE_FOREIGN', "workspace 'theirs' belongs to another account");
      return { workspace: ws || 'default' };
    }) as Handler<sessions.ResolveWorkspaceRequest, sessions.ResolveWorkspaceResponse>,
  },
  budgetRender: {
    trimPassages: (async (req) => {
      const n = (s: string) => s.split(/\s+/).filter(Boolean).length;
      const passageTokens = req.passages.map((p) => n(p.text));
      const fixedTokens = req.fixed.map((f) => n(f.text));
      const total = [...passageTokens, ...fixedTokens].reduce((a, b) => a + b, 0);
      return { keptIds: req.passages.map((p) => p.id), passageTokens, fixedTokens, tokensTotal: total, droppedCount: 0 };
    }) as Handler<budgetRender.TrimPassagesRequest, budgetRender.TrimPassagesResponse>,
  },
  rewrite: {
    rerank: (async (req, ctx) => {
      seen.rerank += 1;
      const scores = req.documents.map((d, i) => ({ id: d.id, score: 1 - i / 10 }));
      return slow(8000, ctx.budget.signal, { scores, status: 'ok' }, () => (seen.rerankCancelled += 1));
    }) as Handler<rewrite.RerankRequest, rewrite.RerankResponse>,
    rewriteQuery: (async (req, ctx) => {
      seen.rewriteQuery += 1;
      return slow(6000, ctx.budget.signal, { queries: [req.query, 'rewritten'], status: 'ok' }, () => undefined);
    }) as Handler<rewrite.RewriteQueryRequest, rewrite.RewriteQueryResponse>,
  },
};

let servers: TestServer[];
let addrs: { gather: string; sessions: string; budgetRender: string; rewrite: string };

beforeAll(async () => {
  const mount = (name: string, definition: object, handlers: object, domain: string) => ({
    name,
    definition: definition as never,
    implementation: implement(definition, handlers as never, { domain, log }),
  });
  servers = await Promise.all([
    startTestServer([mount('ctxmesh.gather.v1.GatherService', gather.GatherServiceService, downstreams.gather, 'gather')]),
    startTestServer([mount('ctxmesh.sessions.v1.SessionsService', sessions.SessionsServiceService, downstreams.sessions, 'sessions')]),
    startTestServer([mount('ctxmesh.budget_render.v1.BudgetRenderService', budgetRender.BudgetRenderServiceService, downstreams.budgetRender, 'budget-render')]),
    startTestServer([mount('ctxmesh.rewrite.v1.RewriteService', rewrite.RewriteServiceService, downstreams.rewrite, 'rewrite')]),
  ]);
  addrs = { gather: servers[0].address, sessions: servers[1].address, budgetRender: servers[2].address, rewrite: servers[3].address };
});

afterAll(async () => {
  for (const s of servers) await s.close();
  closeHealthClients();
});

beforeEach(() => {
  seen.rerank = 0;
  seen.rewriteQuery = 0;
  seen.expandLinks = 0;
  seen.expandLinksBudgetMs = [];
  seen.rerankCancelled = 0;
  seen.gather = [];
});

const nowhere = '127.0.0.1:9';
const settings = { enableIntent: false, modelConfigured: true, expansionTimeoutMs: 5000, rewriteTimeoutMs: 30_000, renderReserveMs: 20, expansionMessages: 20 };

async function orchestratorWith(retrieveSettings: RetrieveSettings, traces: TraceSink | null = null) {
  const server = await startOrchestrator({
    port: 0,
    log,
    addrs: { gather: addrs.gather, tierReader: nowhere, budgetRender: addrs.budgetRender, ledger: nowhere, rewrite: addrs.rewrite, sessions: addrs.sessions },
    settings,
    retrieve: retrieveSettings,
    traces,
  });
  const client = connect(orchestrator.OrchestratorServiceClient, server.address);
  return {
    server,
    retrieve: (over: Partial<orchestrator.RetrieveRequest> = {}, ms = 30_000) =>
      callUnary(client.retrieve.bind(client), request(over), Budget.ofMs(ms), { domain: 'orchestrator', pass: [Code.NOT_FOUND, Code.PERMISSION_DENIED, Code.INVALID_ARGUMENT] }),
    getTrace: (traceId: string, accountId = 'acme', who: Partial<common.Identity> = {}) =>
      callUnary(client.getTrace.bind(client), { identity: { ...identity, accountId, ...who }, traceId }, Budget.ofMs(5000), { domain: 'orchestrator', pass: [Code.NOT_FOUND, Code.INVALID_ARGUMENT] }),
    close: async () => {
      client.close();
      await server.shutdown();
    },
  };
}

const identity: common.Identity = { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: 'req-1' };
function request(over: Partial<orchestrator.RetrieveRequest>): orchestrator.RetrieveRequest {
  return { identity, query: 'alpha', subject: '', topK: 8, memoryK: 5, maxPerDocument: 2, asOfMs: undefined, stages: [], tokenizer: '', explain: false, ...over };
}

const configured = defaultRetrieveSettings({ modelConfigured: true, rerankConfigured: true, defaults: { query_rewrite: true, graph_assist: true, rerank: true } });

describe('Orchestrator.Retrieve', () => {
  let o: Awaited<ReturnType<typeof orchestratorWith>>;
  beforeAll(async () => {
    o = await orchestratorWith(configured);
  });
  afterAll(async () => o.close());

  it('Orchestrator.Retrieve - 1000 ms time budget, 8 s reranker and 6 s rewrite never run - OK with both in degradedStages and no request sent to them', async () => {
    const r = await o.retrieve({ timeBudgetMs: 1000 });
    expect(seen.rerank).toBe(0);
    expect(seen.rewriteQuery).toBe(0);
    expect(r.degradedStages).toEqual(['query_rewrite', 'graph_assist', 'rerank']);
    expect(r.budgetMs).toBe(1000);
    expect(r.passages.map((p) => p.uri)).toEqual(PASSAGES.map((p) => p.uri));
    expect(r.tokensTotal).toBe(9 + 2);
    expect(r.droppedCount).toBe(0);
    const skipped = r.stages.filter((s) => s.status === common.StageStatus.STAGE_STATUS_SKIPPED).map((s) => [s.stage, s.reason]);
    expect(skipped).toEqual([
      ['query_rewrite', 'BUDGET_EXHAUSTED'],
      ['graph_assist', 'BUDGET_EXHAUSTED'],
      ['rerank', 'BUDGET_EXHAUSTED'],
    ]);
  });

  it('Orchestrator.Retrieve - unknown workspace - NOT_FOUND', async () => {
    await expect(o.retrieve({ identity: { ...identity, workspace: 'ghost' } })).rejects.toMatchObject({ code: Code.NOT_FOUND });
    expect(seen.gather).toHaveLength(0);
  });

  it("Orchestrator.Retrieve - another account's workspace - PERMISSION_DENIED", async () => {
    await expect(o.retrieve({ identity: { ...identity, workspace: 'theirs' } })).rejects.toMatchObject({ code: Code.PERMISSION_DENIED });
  });

  it('Orchestrator.Retrieve - a named workspace - OK, gather searches that workspace', async () => {
    await o.retrieve({ identity: { ...identity, workspace: 'proj' }, timeBudgetMs: 1 });
    expect(seen.gather[0].identity?.workspace).toBe('proj');
  });

  it('Orchestrator.Retrieve - blank query - INVALID_ARGUMENT', async () => {
    await expect(o.retrieve({ query: ' ' })).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });
});

describe('Orchestrator.Retrieve admitted stages', () => {
  it('Orchestrator.Retrieve - no time budget, reranker slower than its 300 ms timeout - OK, rerank timed out, its call cancelled', async () => {
    const o = await orchestratorWith(defaultRetrieveSettings({ rerankConfigured: true, rerankTimeoutMs: 300, defaults: { query_rewrite: false, graph_assist: false, rerank: true } }));
    try {
      const r = await o.retrieve({});
      expect(seen.rerank).toBe(1);
      expect(r.degradedStages).toEqual(['rerank']);
      expect(r.stages.find((s) => s.stage === 'rerank')?.status).toBe(common.StageStatus.STAGE_STATUS_TIMEOUT);
      expect(r.passages.map((p) => p.uri)).toEqual(PASSAGES.map((p) => p.uri));
      expect(seen.rerankCancelled).toBe(1);
    } finally {
      await o.close();
    }
  });

  it('Orchestrator.Retrieve - a time budget leaves less than the stage timeout - OK, the admitted stage is clamped to the remainder', async () => {
    // Graph assist has a 2000 ms timeout; once it has run fast, a 1500 ms budget admits it with a shorter deadline.
    const o = await orchestratorWith(defaultRetrieveSettings({ defaults: { query_rewrite: false, graph_assist: true, rerank: false } }));
    try {
      const cold = await o.retrieve({ timeBudgetMs: 1500 });
      expect(cold.degradedStages).toEqual(['graph_assist']);
      expect(seen.expandLinks).toBe(0);
      await o.retrieve({});
      expect(seen.expandLinks).toBe(1);
      const warm = await o.retrieve({ timeBudgetMs: 1500 });
      expect(seen.expandLinks).toBe(2);
      expect(warm.degradedStages).toEqual([]);
      // Unbudgeted, the stage had its own 2000 ms; under the 1500 ms budget, less than the budget.
      expect(seen.expandLinksBudgetMs[0]).toBeLessThanOrEqual(2000);
      expect(seen.expandLinksBudgetMs[1]).toBeLessThanOrEqual(1500 - 20);
    } finally {
      await o.close();
    }
  });
});

describe('Orchestrator.GetTrace', () => {
  let db: EmbeddedDb;
  beforeAll(() => {
    db = openEmbeddedDb(':memory:');
  });
  afterAll(() => db.close());

  it('Orchestrator.GetTrace - traces on (embedded SQLite) - OK, the row of the request', async () => {
    const o = await orchestratorWith(defaultRetrieveSettings({ traceEnabled: true }), new SqliteTraceStore(db));
    try {
      const r = await o.retrieve({ tokenBudget: 1000 });
      expect(r.traceId).toMatch(/^tr_[0-9a-f]{32}$/);
      const t = (await o.getTrace(r.traceId)).trace!;
      expect(t).toMatchObject({ traceId: r.traceId, query: 'alpha', requestId: 'req-1', workspace: 'default', params: { tokenBudget: 1000, topK: 8 } });
      expect(t.result!.passages.map((p) => p.id)).toEqual(['p1', 'p2', 'p3']);
      expect(t.stages.map((s) => s.stage)).toEqual(['workspace', 'query_rewrite', 'gather', 'graph_assist', 'rerank', 'trim']);
    } finally {
      await o.close();
    }
  });

  // Regression (issue 12, item 5): Bob (role user) read Alice's trace — her query and her
  // private URIs with their scores.
  it("Orchestrator.GetTrace - another user's trace in the same account - NOT_FOUND for a user, OK for an admin", async () => {
    const o = await orchestratorWith(defaultRetrieveSettings({ traceEnabled: true }), new SqliteTraceStore(db));
    try {
      const r = await o.retrieve({});
      await expect(o.getTrace(r.traceId, 'acme', { userId: 'bob', role: common.Role.ROLE_USER })).rejects.toMatchObject({ code: Code.NOT_FOUND });
      await expect(o.getTrace(r.traceId, 'acme', { userId: 'bob', role: common.Role.ROLE_UNSPECIFIED })).rejects.toMatchObject({ code: Code.NOT_FOUND });
      expect((await o.getTrace(r.traceId, 'acme', { userId: 'carol', role: common.Role.ROLE_ADMIN })).trace?.user).toBe('alice');
      expect((await o.getTrace(r.traceId, 'acme', { userId: 'alice', role: common.Role.ROLE_USER })).trace?.user).toBe('alice');
    } finally {
      await o.close();
    }
  });

  it("Orchestrator.GetTrace - another account's trace - NOT_FOUND", async () => {
    const o = await orchestratorWith(defaultRetrieveSettings({ traceEnabled: true }), new SqliteTraceStore(db));
    try {
      const r = await o.retrieve({});
      await expect(o.getTrace(r.traceId, 'globex')).rejects.toMatchObject({ code: Code.NOT_FOUND });
      await expect(o.getTrace('tr_missing')).rejects.toMatchObject({ code: Code.NOT_FOUND });
      await expect(o.getTrace('bad id!')).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
    } finally {
      await o.close();
    }
  });

  it('Orchestrator.Retrieve - traces off - OK with no trace id, and nothing written', async () => {
    const store = new SqliteTraceStore(db);
    const before = (db.prepare('SELECT COUNT(*) AS n FROM trace_rows').get() as { n: number }).n;
    const o = await orchestratorWith(defaultRetrieveSettings({ traceEnabled: false }), store);
    try {
      const r = await o.retrieve({});
      expect(r.traceId).toBe('');
      expect((db.prepare('SELECT COUNT(*) AS n FROM trace_rows').get() as { n: number }).n).toBe(before);
    } finally {
      await o.close();
    }
  });
});

describe('Orchestrator.Retrieve traces on NATS JetStream', () => {
  let nc: Awaited<ReturnType<typeof connectNats>>;
  const stream = uniqueName('TRACES').replace(/-/g, '_');
  /** The JetStream API over core NATS (this package does not depend on the JetStream client). */
  const jsApi = async <T>(subject: string, body: unknown = ''): Promise<T> => (await nc.request(`$JS.API.${subject}`, body === '' ? '' : JSON.stringify(body), { timeout: 5000 })).json<T>();
  beforeAll(async () => {
    nc = await connectNats(natsUrl(), 'orchestrator-traces');
  });
  afterAll(async () => {
    await jsApi(`STREAM.DELETE.${stream}`).catch(() => undefined);
    await nc.close();
  });

  it('Orchestrator.Retrieve - traces on NATS - OK, one row in the stream, read back by GetTrace', async () => {
    const prefix = `t${stream.toLowerCase()}`;
    const store = await NatsTraceStore.create(nc, { stream, subjectPrefix: prefix, storage: 'memory' });
    const o = await orchestratorWith(defaultRetrieveSettings({ traceEnabled: true }), store);
    try {
      const r = await o.retrieve({ query: 'alpha beta' });
      const info = await jsApi<{ state: { messages: number } }>(`STREAM.INFO.${stream}`);
      expect(info.state.messages).toBe(1);
      const got = await jsApi<{ message: { subject: string; data: string } }>(`STREAM.MSG.GET.${stream}`, { last_by_subj: `${prefix}.${r.traceId}` });
      expect(got.message.subject).toBe(`${prefix}.${r.traceId}`);
      expect(JSON.parse(Buffer.from(got.message.data, 'base64').toString('utf8'))).toMatchObject({ account: 'acme', data: { query: 'alpha beta', trace_id: r.traceId } });
      expect((await o.getTrace(r.traceId)).trace?.query).toBe('alpha beta');
      await expect(o.getTrace(r.traceId, 'globex')).rejects.toMatchObject({ code: Code.NOT_FOUND });
    } finally {
      await o.close();
    }
  });
});
