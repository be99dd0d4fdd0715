/**
 * The whole mesh in one process (as `npm start` runs it, embedded stores, in-process bus):
 * ingest a folder of ~50 mixed English/Chinese files through the real write path, then find
 * them over HTTP — English and Chinese queries, list and context mode, reads, deletes, and
 * the write path's validation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { callGateway, GatewayError, planIngest, runIngest, startMesh, type Mesh } from '@ctxmesh/ctxmesh';

const CORPUS = resolve(__dirname, '../../examples/corpus');

interface Hit {
  context_type: string;
  uri: string;
  level: number;
  score: number;
  abstract: string;
  tags: string[];
}
interface ListResult {
  memories: Hit[];
  resources: Hit[];
  skills: Hit[];
  total: number;
}

let mesh: Mesh;
let dataDir: string;
const client = () => ({ url: mesh.gatewayUrl });
const post = <T>(path: string, body: unknown) => callGateway<T>(client(), 'POST', path, body);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-e2e-'));
  mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0' }, log: silentLogger() });
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the mesh, end to end', () => {
  let ingested = 0;

  it('ingests the example folder through write → bus → indexer, every file indexed', async () => {
    const { items, skipped } = await planIngest(CORPUS, { user: 'default' });
    expect(items.length).toBeGreaterThanOrEqual(50);
    expect(skipped).toEqual([]);
    expect(items.filter((i) => i.kind === 'memory').length).toBe(10);
    expect(items.filter((i) => i.kind === 'code').length).toBe(5);
    const summary = await runIngest(items, client(), () => undefined, 8);
    expect(summary.failed).toEqual([]);
    expect(summary.written).toBe(items.length);
    ingested = items.length;
    const stats = await mesh.index.stats('default');
    expect(stats.documents).toBeGreaterThanOrEqual(ingested);
  }, 120_000);

  it('finds an English document for an English question', async () => {
    const r = await post<ListResult>('/api/v1/search/find', { query: 'how do we roll back a bad release', limit: 5 });
    expect(r.resources[0]?.uri).toBe('viking://resources/corpus/docs/en/rollback.md');
    expect(r.total).toBe(r.memories.length + r.resources.length + r.skills.length);
  });

  it('scores a near-verbatim match well above the plugins\' 0.35 threshold and unrelated text well below', async () => {
    const r = await post<ListResult>('/api/v1/search/find', { query: 'a rollback switches traffic back to the previous color', limit: 10 });
    expect(r.resources[0]?.uri).toBe('viking://resources/corpus/docs/en/rollback.md');
    expect(r.resources[0].score).toBeGreaterThan(0.5);
    const unrelated = r.resources.find((h) => h.uri.endsWith('/docs/en/code-review.md'));
    if (unrelated) expect(unrelated.score).toBeLessThan(0.2);
    const none = await post<ListResult>('/api/v1/search/find', { query: 'a rollback switches traffic back to the previous color', limit: 10, score_threshold: 0.35 });
    expect(none.resources.map((h) => h.uri)).toContain('viking://resources/corpus/docs/en/rollback.md');
    expect(none.resources.every((h) => h.score >= 0.35)).toBe(true);
  });

  it('finds a Chinese document for a Chinese question', async () => {
    const r = await post<ListResult>('/api/v1/search/find', { query: '怎么把流量切回上一个版本', limit: 5 });
    expect(r.resources[0]?.uri).toBe('viking://resources/corpus/docs/zh/回滚.md');
  });

  it('finds Chinese memories of the user under the ~ alias', async () => {
    const r = await post<ListResult>('/api/v1/search/find', { query: '用户偏好什么主题', target_uri: 'viking://~/memories', limit: 3 });
    expect(r.resources).toEqual([]);
    expect(r.memories[0]?.uri).toBe('viking://user/default/memories/preferences/语言.md');
    expect(r.memories.every((h) => h.uri.startsWith('viking://user/default/memories/'))).toBe(true);
  });

  it('finds code by what it does, with its outline as the overview', async () => {
    const r = await post<ListResult>('/api/v1/search/find', { query: 'reciprocal rank fusion of ranked lists', limit: 3 });
    expect(r.resources[0]?.uri).toBe('viking://resources/corpus/code/ranker.py');
    const overview = await callGateway<string>(client(), 'GET', `/api/v1/content/overview?uri=${encodeURIComponent('viking://resources/corpus/code/ranker.py')}`);
    expect(overview.split('\n')[0]).toBe('# ranker.py [aider-repomap-lite, compact]');
    expect(overview).toContain('class Ranker');
  });

  it('assembles a context block for a coding question, events deepened, every URI cited in entries', async () => {
    const r = await post<{ entries: Array<{ uri: string; category: string; detail: string }>; rendered: string; digest: string; stats: Record<string, unknown> }>(
      '/api/v1/search/search',
      { query: 'what did we ship in July', mode: 'context', purpose: 'coding', max_tokens: 1200 },
    );
    expect(r.entries.length).toBeGreaterThan(0);
    expect(r.stats.used_tokens as number).toBeLessThanOrEqual(1200);
    const launch = r.entries.find((e) => e.uri === 'viking://user/default/memories/events/2026-07-14-launch.md');
    expect(launch?.category).toBe('events');
    for (const m of r.rendered.matchAll(/<memory uri="([^"]+)"/g)) expect(r.entries.map((e) => e.uri)).toContain(m[1]);
    expect(r.stats.quotas).toEqual({ events: 1, entities: 2, preferences: 1, experiences: 1, resources: 3, skills: 2 });
  });

  it('reads a body back as the result string, and 404s an unknown URI', async () => {
    const body = await callGateway<string>(client(), 'GET', `/api/v1/content/read?uri=${encodeURIComponent('viking://resources/corpus/docs/en/auth.md')}`);
    expect(body.startsWith('# Authentication')).toBe(true);
    await expect(callGateway(client(), 'GET', '/api/v1/content/read?uri=viking://resources/corpus/nope.md')).rejects.toMatchObject({ status: 404 });
  });

  it('refuses create on an existing URI with 409 and a bad URI with 400 INVALID_URI', async () => {
    await expect(post('/api/v1/content/write', { uri: 'viking://resources/corpus/docs/en/auth.md', content: 'x', mode: 'create', wait: true })).rejects.toMatchObject({
      status: 409,
    });
    const err = await post('/api/v1/content/write', { uri: 'resources/no-scheme.md', content: 'x' }).catch((e: GatewayError) => e);
    expect(err).toBeInstanceOf(GatewayError);
    expect(err).toMatchObject({ status: 400, code: 'INVALID_URI' });
  });

  it('appends in order and the new version is searchable once wait returns', async () => {
    const uri = 'viking://resources/corpus/notes/journal.md';
    await post('/api/v1/content/write', { uri, content: '# Journal\n\nFirst entry about lighthouses.', mode: 'create', wait: true });
    await post('/api/v1/content/write', { uri, content: '\n\nSecond entry about zeppelins.', mode: 'append', wait: true });
    const r = await post<ListResult>('/api/v1/search/find', { query: 'zeppelins', limit: 3 });
    expect(r.resources[0]?.uri).toBe(uri);
    expect(await callGateway<string>(client(), 'GET', `/api/v1/content/read?uri=${encodeURIComponent(uri)}`)).toBe(
      '# Journal\n\nFirst entry about lighthouses.\n\nSecond entry about zeppelins.',
    );
  });

  it('answers each write of a concurrent burst with wait only once that write is readable and searchable', async () => {
    const uris = Array.from({ length: 24 }, (_, i) => `viking://resources/corpus/burst/note-${i}.md`);
    const seen = await Promise.all(
      uris.map(async (uri, i) => {
        await post('/api/v1/content/write', { uri, content: `Burst note ${i} about the quokka${i} colony.`, wait: true });
        return callGateway<string>(client(), 'GET', `/api/v1/content/read?uri=${encodeURIComponent(uri)}`);
      }),
    );
    expect(seen).toEqual(uris.map((_, i) => `Burst note ${i} about the quokka${i} colony.`));
    const r = await post<ListResult>('/api/v1/search/find', { query: 'quokka17 colony', limit: 3 });
    expect(r.resources[0]?.uri).toBe(uris[17]);
  });

  it('deletes a directory subtree; its files are no longer found', async () => {
    const before = await post<ListResult>('/api/v1/search/find', { query: 'Redis snapshots and Qdrant collection snapshots', limit: 3 });
    expect(before.resources[0]?.uri).toBe('viking://resources/corpus/docs/en/backups.md');
    await callGateway(client(), 'DELETE', `/api/v1/fs?uri=${encodeURIComponent('viking://resources/corpus/docs/en')}&wait=true`);
    const after = await post<ListResult>('/api/v1/search/find', { query: 'Redis snapshots and Qdrant collection snapshots', limit: 10 });
    expect(after.resources.some((h) => h.uri.startsWith('viking://resources/corpus/docs/en/'))).toBe(false);
    const zh = await post<ListResult>('/api/v1/search/find', { query: '快照 备份', limit: 3 });
    expect(zh.resources[0]?.uri).toBe('viking://resources/corpus/docs/zh/备份恢复.md');
  });
});
