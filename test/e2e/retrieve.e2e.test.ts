/**
 * `POST /api/v1/retrieve` through the whole mesh (`startMesh`, embedded stores, in-process bus)
 * with every optional stage configured against scripted loopback HTTP servers: a `/rerank`
 * endpoint and a chat model that answer slowly (8 s and 6 s by default) and count every request.
 * Content goes in through the real write path (`/api/v1/content/write`, `wait:true`).
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '../../apps/ctxmesh/src/mesh';

/** A scripted provider on loopback: answers after `delayMs`, counts requests, keeps bodies. */
class Scripted {
  delayMs: number;
  requests: Array<{ path: string; body: any }> = [];
  private server!: http.Server;
  url = '';

  constructor(
    delayMs: number,
    private readonly answer: (body: any) => unknown,
  ) {
    this.delayMs = delayMs;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = raw ? JSON.parse(raw) : null;
        this.requests.push({ path: req.url ?? '', body });
        const t = setTimeout(() => {
          if (res.writableEnded || res.destroyed) return;
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.answer(body)));
        }, this.delayMs);
        res.on('close', () => clearTimeout(t));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const a = this.server.address() as { port: number };
    this.url = `http://127.0.0.1:${a.port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Jina/Cohere-style rerank: the documents in reverse order, best first. */
const reranker = new Scripted(8000, (body: { documents: string[] }) => ({
  results: body.documents.map((_, i) => ({ index: body.documents.length - 1 - i, relevance_score: 0.99 - i * 0.01 })),
}));
/** Chat model: one alternative query for a query rewrite. */
const chat = new Scripted(6000, () => ({ choices: [{ message: { role: 'assistant', content: '{"queries": ["zebra crossing timeline"]}' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } }));

let mesh: Mesh;
let dataDir: string;
const DEV = { 'X-OpenViking-Account': 'acme', 'X-OpenViking-User': 'alice' };

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = DEV): Promise<{ status: number; body: any }> {
  const res = await fetch(mesh.gatewayUrl + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

async function write(uri: string, content: string, extra: Record<string, unknown> = {}, headers = DEV): Promise<void> {
  const r = await call('POST', '/api/v1/content/write', { uri, content, mode: 'replace', wait: true, ...extra }, headers);
  if (r.status !== 200 || r.body.result.status !== 'applied') throw new Error(`write ${uri}: ${r.status} ${JSON.stringify(r.body)}`);
}

async function retrieve(body: Record<string, unknown>, headers: Record<string, string> = DEV): Promise<any> {
  const r = await call('POST', '/api/v1/retrieve', body, headers);
  if (r.status !== 200) throw new Error(`retrieve: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result;
}

/** A long field guide: five seasons of zebra notes, chunked into several passages. */
function zebraGuide(): string {
  const parts = ['# Zebra field guide'];
  for (let s = 1; s <= 5; s++) {
    parts.push(`## Season ${s}`);
    for (let i = 0; i < 9; i++) parts.push(`Season ${s}, entry ${i}: the zebra migration crossed the river at dawn while the herds followed the rains across the plains.`);
  }
  return parts.join('\n\n');
}

beforeAll(async () => {
  await Promise.all([reranker.start(), chat.start()]);
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-retrieve-'));
  mesh = await startMesh({
    env: {
      CTXMESH_DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      CTXMESH_RERANK_URL: reranker.url,
      CTXMESH_RERANK_MODEL: 'scripted-reranker',
      CTXMESH_LLM_URL: chat.url,
      CTXMESH_LLM_MODEL: 'scripted-chat',
      SEARCH_GRAPH_ASSIST_ENABLED: 'true',
      RETRIEVAL_TRACE_ENABLED: 'true',
    },
    log: silentLogger(),
  });
  await write('viking://resources/zebra/guide.md', zebraGuide());
  await write('viking://resources/zebra/short.md', 'Short note: the zebra migration reached the river crossing in July. See viking://resources/zebra/timeline.md');
  await write('viking://resources/zebra/timeline.md', 'Timeline of the herd: wildebeest first, then zebras, then gazelles.');
  await write('viking://resources/office/wifi-old.md', 'The office wifi password is sunflower.', { valid_to: '2026-01-01' });
  await write('viking://resources/office/wifi-new.md', 'The office wifi password is lavender.', { valid_from: '2026-01-01' });
  await write('viking://user/alice/memories/preferences/zebra.md', 'Alice likes zebra documentaries.');
  await write('viking://user/bob/memories/preferences/zebra.md', 'Bob is afraid of zebras.');
  await write('viking://agent/memories/team/zebra.md', 'Team memory: the zebra project ships in July.');
}, 120_000);

afterAll(async () => {
  await mesh?.stop();
  await Promise.all([reranker.stop(), chat.stop()]);
  rmSync(dataDir, { recursive: true, force: true });
});

beforeEach(() => {
  reranker.requests = [];
  chat.requests = [];
});

describe('POST /api/v1/retrieve through the mesh', () => {
  it('answers within a 1000 ms budget with an 8 s reranker and a 6 s model: rerank and query_rewrite degraded, no request sent to either', async () => {
    const r = await retrieve({ query: 'zebra migration river crossing', time_budget_ms: 1000 });
    expect(reranker.requests).toEqual([]);
    expect(chat.requests).toEqual([]);
    expect(r.searchMeta.degradedStages).toEqual(expect.arrayContaining(['query_rewrite', 'rerank']));
    expect(r.searchMeta.budgetMs).toBe(1000);
    expect(Object.keys(r.searchMeta.stageMs)).toEqual(expect.arrayContaining(['workspace', 'gather', 'trim']));
    expect(r.searchMeta.stageMs.rerank).toBeUndefined();
    expect(r.passages.length).toBeGreaterThan(0);
  });

  it('returns passages, memories, group memories and citations in the contract shape', async () => {
    const r = await retrieve({ query: 'zebra migration river crossing', time_budget_ms: 1 });
    expect(Object.keys(r)).toEqual(['passages', 'memories', 'groupMemories', 'citations', 'tokens_total', 'dropped_count', 'searchMeta', 'trace_id']);
    const fromGuide = r.passages.filter((p: any) => p.doc_uri === 'viking://resources/zebra/guide.md');
    expect(fromGuide.length).toBe(2);
    expect(fromGuide.every((p: any) => /#p\d+$/.test(p.uri))).toBe(true);
    for (const p of r.passages) {
      const c = r.citations.find((x: any) => x.id === p.citation);
      expect(c.doc_uri).toBe(p.doc_uri);
      expect(c.passage_ids).toContain(p.id);
    }
    expect(r.citations.find((c: any) => c.doc_uri === 'viking://resources/zebra/guide.md').title).toBe('Zebra field guide');
    expect(r.memories.map((m: any) => [m.uri, m.subject])).toEqual([['viking://user/alice/memories/preferences/zebra.md', 'alice']]);
    expect(r.groupMemories.map((m: any) => m.uri)).toEqual(['viking://agent/memories/team/zebra.md']);
    const all = [...r.passages, ...r.memories, ...r.groupMemories];
    expect(all.every((e: any) => Number.isInteger(e.tokens) && e.tokens > 0)).toBe(true);
    expect(r.tokens_total).toBe(all.reduce((a: number, e: any) => a + e.tokens, 0));
    expect(r.dropped_count).toBe(0);
  });

  it('forces one passage per document with max_per_document 1', async () => {
    const r = await retrieve({ query: 'zebra migration river crossing', max_per_document: 1, time_budget_ms: 1 });
    const docs = r.passages.map((p: any) => p.doc_uri);
    expect(new Set(docs).size).toBe(docs.length);
  });

  it('scopes the memories array to the subject only', async () => {
    const mine = await retrieve({ query: 'zebra', time_budget_ms: 1 });
    const bob = await retrieve({ query: 'zebra', subject: 'bob', time_budget_ms: 1 });
    expect(bob.memories.map((m: any) => [m.uri, m.subject])).toEqual([['viking://user/bob/memories/preferences/zebra.md', 'bob']]);
    expect(bob.passages.map((p: any) => p.uri)).toEqual(mine.passages.map((p: any) => p.uri));
    expect(bob.groupMemories).toEqual(mine.groupMemories);
  });

  it('returns what was valid at as_of, and never an expired fact as current; /find takes as_of too', async () => {
    const now = await retrieve({ query: 'office wifi password', time_budget_ms: 1 });
    const wifi = (r: any) => r.passages.map((p: any) => p.uri).filter((u: string) => u.includes('/office/'));
    expect(wifi(now)).toEqual(['viking://resources/office/wifi-new.md']);
    const then = await retrieve({ query: 'office wifi password', as_of: '2025-06-01', time_budget_ms: 1 });
    expect(wifi(then)).toEqual(['viking://resources/office/wifi-old.md']);
    const find = await call('POST', '/api/v1/search/find', { query: 'office wifi password', as_of: '2025-06-01' });
    expect(find.body.result.resources.map((h: any) => h.uri).filter((u: string) => u.includes('/office/'))).toEqual(['viking://resources/office/wifi-old.md']);
    const findNow = await call('POST', '/api/v1/search/find', { query: 'office wifi password' });
    expect(findNow.body.result.resources.map((h: any) => h.uri).filter((u: string) => u.includes('/office/'))).toEqual(['viking://resources/office/wifi-new.md']);
    expect((await call('POST', '/api/v1/search/find', { query: 'wifi', as_of: 'last year' })).status).toBe(400);
  });

  it("resolves the workspace: body, then X-Workspace, then the persisted active one; unknown is 404, and so is another account's", async () => {
    expect((await call('POST', '/api/v1/workspaces', { workspace: 'zoo' })).status).toBe(200);
    await write('viking://resources/zoo/keeper.md', 'Zoo keeper rota for the zebra enclosure.', { workspace: 'zoo' });
    const inZoo = (r: any) => r.passages.some((p: any) => p.uri === 'viking://resources/zoo/keeper.md');
    expect(inZoo(await retrieve({ query: 'zebra enclosure keeper rota', time_budget_ms: 1 }))).toBe(false);
    expect(inZoo(await retrieve({ query: 'zebra enclosure keeper rota', workspace: 'zoo', time_budget_ms: 1 }))).toBe(true);
    expect(inZoo(await retrieve({ query: 'zebra enclosure keeper rota', time_budget_ms: 1 }, { ...DEV, 'X-Workspace': 'zoo' }))).toBe(true);
    expect(inZoo(await retrieve({ query: 'zebra enclosure keeper rota', workspace: 'default', time_budget_ms: 1 }, { ...DEV, 'X-Workspace': 'zoo' }))).toBe(false);
    expect((await call('PUT', '/api/v1/workspaces/active', { workspace: 'zoo' })).status).toBe(200);
    expect(inZoo(await retrieve({ query: 'zebra enclosure keeper rota', time_budget_ms: 1 }))).toBe(true);
    expect((await call('PUT', '/api/v1/workspaces/active', { workspace: 'default' })).status).toBe(200);
    expect((await call('POST', '/api/v1/retrieve', { query: 'zebra', workspace: 'nowhere' })).status).toBe(404);
    const other = { 'X-OpenViking-Account': 'globex', 'X-OpenViking-User': 'eve' };
    // Workspace names are per account (issue 12, item 6): globex has no 'zoo' of its own.
    expect((await call('POST', '/api/v1/retrieve', { query: 'zebra', workspace: 'zoo' }, other)).status).toBe(404);
  });

  it('refuses a blank query, unknown fields and out-of-range values with a 400 naming the field', async () => {
    for (const [body, field] of [
      [{ query: ' ' }, 'query'],
      [{ query: 'q', top_k: 101 }, 'top_k'],
      [{ query: 'q', mmr_lambda: 2 }, 'mmr_lambda'],
      [{ query: 'q', stages: { warp: true } }, 'stages.warp'],
      [{ query: 'q', colour: 'blue' }, 'colour'],
    ] as const) {
      const r = await call('POST', '/api/v1/retrieve', body);
      expect(r.status).toBe(400);
      expect(r.body.error.message).toContain(`body.${field}`);
    }
  });

  it('writes one trace per request and reads it back by id; another account cannot', async () => {
    const r = await retrieve({ query: 'zebra migration', token_budget: 40, time_budget_ms: 1 });
    expect(r.trace_id).toMatch(/^tr_/);
    const t = await call('GET', `/api/v1/traces/${r.trace_id}`);
    expect(t.status).toBe(200);
    expect(t.body.result).toMatchObject({ trace_id: r.trace_id, query: 'zebra migration', params: { token_budget: 40 }, result: { tokens_total: r.tokens_total, dropped_count: r.dropped_count } });
    expect(t.body.result.stages.map((s: any) => s.stage)).toEqual(['workspace', 'query_rewrite', 'gather', 'graph_assist', 'rerank', 'trim']);
    expect(t.body.result.candidates.length).toBeGreaterThan(0);
    expect(t.body.result.dropped.filter((d: any) => d.reason === 'token_budget')).toHaveLength(r.dropped_count);
    expect((await call('GET', `/api/v1/traces/${r.trace_id}`, undefined, { 'X-OpenViking-Account': 'globex', 'X-OpenViking-User': 'eve' })).status).toBe(404);
    expect((await call('GET', '/api/v1/traces/tr_unknown')).status).toBe(404);
  });

  it('property: token_budget drops lowest-scored passages only, keeps order, never trims memories, and counts what it returns', async () => {
    const base = await retrieve({ query: 'zebra migration river timeline', top_k: 10, max_per_document: 5, time_budget_ms: 1 });
    expect(base.passages.length).toBeGreaterThan(3);
    const fixed = [...base.memories, ...base.groupMemories].reduce((a: number, e: any) => a + e.tokens, 0);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: base.tokens_total + 20 }), async (budget) => {
        const r = await retrieve({ query: 'zebra migration river timeline', top_k: 10, max_per_document: 5, time_budget_ms: 1, token_budget: budget });
        const order = base.passages.map((p: any) => p.id);
        const idx = r.passages.map((p: any) => order.indexOf(p.id));
        expect(idx.every((x: number, i: number) => x >= 0 && (i === 0 || x > idx[i - 1]))).toBe(true);
        expect(r.memories).toEqual(base.memories);
        expect(r.groupMemories).toEqual(base.groupMemories);
        expect(r.dropped_count).toBe(base.passages.length - r.passages.length);
        expect(r.tokens_total).toBe(fixed + r.passages.reduce((a: number, p: any) => a + p.tokens, 0));
        if (r.dropped_count > 0) expect(r.tokens_total <= budget || r.passages.length === 0).toBe(true);
        else expect(base.tokens_total).toBeLessThanOrEqual(budget);
        const minKept = Math.min(...r.passages.map((p: any) => p.score));
        const kept = new Set(r.passages.map((p: any) => p.id));
        for (const p of base.passages) if (!kept.has(p.id)) expect(p.score).toBeLessThanOrEqual(minKept);
        expect(r.citations.flatMap((c: any) => c.passage_ids).sort()).toEqual([...kept].sort());
      }),
      { numRuns: 30 },
    );
  }, 60_000);

  it('reranks with the cross-encoder when the stage runs, and then trusts its measured latency under a budget', async () => {
    reranker.delayMs = 5;
    chat.delayMs = 5;
    try {
      const plain = await retrieve({ query: 'zebra migration river crossing', stages: { rerank: false, query_rewrite: false, graph_assist: false } });
      const r = await retrieve({ query: 'zebra migration river crossing', stages: { rerank: true, query_rewrite: false, graph_assist: false } });
      expect(reranker.requests).toHaveLength(1);
      expect(reranker.requests[0].body).toMatchObject({ model: 'scripted-reranker', query: 'zebra migration river crossing' });
      expect(r.searchMeta.degradedStages).toEqual([]);
      expect(r.searchMeta.stageMs.rerank).toBeGreaterThanOrEqual(0);
      // The scripted cross-encoder prefers the documents in reverse order of what it was sent.
      const sent: string[] = reranker.requests[0].body.documents;
      expect(r.passages[0].text).toBe(sent[sent.length - 1]);
      expect(r.passages[0].score).toBeCloseTo(0.99);
      expect(plain.passages[0].text).toBe(sent[0]);
      // Query rewrite runs against the model once; both stages now fit a 1000 ms budget.
      await retrieve({ query: 'zebra migration river crossing', stages: { query_rewrite: true } });
      expect(chat.requests).toHaveLength(1);
      const warm = await retrieve({ query: 'zebra migration river crossing', time_budget_ms: 1000 });
      expect(warm.searchMeta.degradedStages).toEqual([]);
      expect(reranker.requests.length).toBeGreaterThanOrEqual(3);
      expect(chat.requests).toHaveLength(2);
    } finally {
      reranker.delayMs = 8000;
      chat.delayMs = 6000;
    }
  }, 30_000);
});
