import { LexicalEmbedder } from '@ctxmesh/embedder';
import type { orchestrator } from '@ctxmesh/proto';
import { EmbeddedVectorIndex, openEmbeddedDb, type EmbeddedDb } from '@ctxmesh/stores';
import { NotCapturedError, RequestCapture } from './capture';
import { buildQueries, docAt } from './corpus';
import { inProcessKernel, type InProcessKernel } from './inproc';
import { bulkLoad } from './load';
import { BENCH_VISIBILITY, measureDenseByDimension, measureStoreLegs } from './latency';

// The bench's request path without any network: the gateway's own validation and mapping
// (captured through Fastify inject), then the orchestrator pipelines over direct-call ports,
// over an in-memory index loaded through the indexer's apply path.
describe('RequestCapture + inProcessKernel', () => {
  const env = { CTXMESH_DATA_DIR: '/nonexistent-bench-test', GATEWAY_PORT: '0' };
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  let kernel: InProcessKernel;
  let capture: RequestCapture;
  const embedder = new LexicalEmbedder({ dimension: 256 });

  beforeAll(async () => {
    db = openEmbeddedDb(':memory:');
    index = new EmbeddedVectorIndex(db, { dimension: 256 });
    const loaded = await bulkLoad(index, embedder, null, 0, 200);
    expect(loaded.docs).toBe(200);
    // Long resources add passage points, so there are more points than documents.
    expect(loaded.points).toBeGreaterThan(200);
    kernel = inProcessKernel({ index, embedder, outliner: null, env });
    capture = new RequestCapture(env);
  });

  afterAll(async () => {
    kernel.close();
    await capture.close();
    await index.close();
    db.close();
  });

  it('captures the orchestrator request the gateway builds for a context body', async () => {
    const call = await capture.capture('/api/v1/search/search', { query: 'deployment canary', mode: 'context', max_tokens: 300 });
    expect(call.method).toBe('assembleContext');
    const req = call.request as orchestrator.AssembleContextRequest;
    expect(req.query).toBe('deployment canary');
    expect(req.maxTokens).toBe(300);
    expect(req.identity).toMatchObject({ accountId: 'default', userId: 'default' });
  });

  it('refuses to capture what the gateway rejects', async () => {
    await expect(capture.capture('/api/v1/search/search', { query: 'x', mode: 'list', max_tokens: 300 })).rejects.toBeInstanceOf(NotCapturedError);
    await expect(capture.capture('/api/v1/no-such-route', {})).rejects.toMatchObject({ status: 404 });
  });

  it('finds a known document in process from the captured /find request', async () => {
    const q = buildQueries(30, { pool: 200 }).find((x) => x.lang === 'en' && x.targetKind === 'memory')!;
    expect(q).toBeDefined();
    const call = await capture.capture('/api/v1/search/find', { query: q.text, limit: 10 });
    const res = await kernel.search(call.request as orchestrator.SearchRequest);
    const uris = [...res.memories, ...res.resources, ...res.skills].map((h) => h.uri);
    expect(uris).toContain(q.target);
  });

  it('assembles context in process within the budget, timing every mandatory stage', async () => {
    const d = docAt(buildQueries(5, { pool: 200 })[0]!.targetIndex);
    const call = await capture.capture('/api/v1/search/search', { query: d.keywords.join(' '), mode: 'context', max_tokens: 256 });
    const out = await kernel.assembleContext(call.request as orchestrator.AssembleContextRequest);
    expect(out.entries.length).toBeGreaterThan(0);
    expect(out.stats.usedTokens).toBeLessThanOrEqual(256);
    expect(out.stages.map((s) => s.stage)).toEqual(expect.arrayContaining(['gather', 'tier_read', 'budget_render']));
  });

  it('assembles both packings in process from the captured request: evidence says so, keeps the budget and serves compat\'s relevant entries, none below its floor', async () => {
    const d = docAt(buildQueries(5, { pool: 200 })[1]!.targetIndex);
    const body = { query: d.keywords.join(' '), mode: 'context', purpose: 'coding', max_tokens: 1200 };
    const compat = await kernel.assembleContext((await capture.capture('/api/v1/search/search', { ...body, packing: 'compat' })).request as orchestrator.AssembleContextRequest);
    // A body naming no packing gets the server's default: evidence.
    const evidence = await kernel.assembleContext((await capture.capture('/api/v1/search/search', body)).request as orchestrator.AssembleContextRequest);
    expect(compat.stats.packing).toBe('compat');
    expect(evidence.stats.packing).toBe('evidence');
    expect(evidence.stats.usedTokens).toBeLessThanOrEqual(1200);
    // Compat fills its quota slots whatever they score; evidence serves what compat served above
    // its relevance floor (and more), and nothing below it.
    const floor = evidence.stats.evidence!.relevanceFloor!;
    const served = new Set(evidence.entries.map((e) => e.uri));
    for (const e of compat.entries) if (e.score >= floor) expect(served.has(e.uri)).toBe(true);
    for (const e of evidence.entries) expect(e.score).toBeGreaterThanOrEqual(floor);
    expect(evidence.entries.filter((e) => e.detail === 'uri')).toEqual([]);
  });

  it('runs retrieve in process from the captured request', async () => {
    const call = await capture.capture('/api/v1/retrieve', { query: 'deployment rollout canary' });
    expect(call.method).toBe('retrieve');
    const res = await kernel.retrieve(call.request as orchestrator.RetrieveRequest);
    expect(Array.isArray(res.passages)).toBe(true);
    expect(res.passages.length + res.memories.length).toBeGreaterThan(0);
  });

  it('times the store legs for every query', async () => {
    const legs = await measureStoreLegs(index, embedder, buildQueries(5, { pool: 200 }));
    for (const s of [legs.hybrid, legs.denseOnly, legs.lexicalOnly, legs.lexicalThenDense]) expect(s.n).toBe(5);
    const [hits] = await index.search([{ visibility: BENCH_VISIBILITY, vector: null, text: 'deployment', targets: [], filter: null, limit: 5 }]);
    expect(hits!.length).toBeGreaterThan(0);
  });
});

describe('measureDenseByDimension', () => {
  it('times dense-only searches on a synthetic index per dimension', async () => {
    const out = await measureDenseByDimension(50, [64, 128], 5);
    expect(Object.keys(out)).toEqual(['64', '128']);
    for (const s of Object.values(out)) {
      expect(s.n).toBe(5);
      expect(s.p50).toBeGreaterThan(0);
    }
  });
});
