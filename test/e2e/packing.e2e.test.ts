/**
 * The `packing` addition through the whole mesh (gateway → orchestrator → gather / tier-reader /
 * budget-render over gRPC, embedded stores): compat keeps the contract's bytes, evidence spends
 * the plugin's budget on evidence and serves nothing under the noise floor, the server default
 * is evidence unless CTXMESH_CONTEXT_PACKING says compat, and unknown values are 400s naming the
 * field.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '@ctxmesh/ctxmesh';
import { estimateTokens, parseCompactBlock } from '@ctxmesh/kernel';

interface Entry {
  uri: string;
  category: string;
  score: number;
  detail: string;
  text: string;
  origin: string;
}
interface ContextResult {
  entries: Entry[];
  rendered: string;
  digest: string;
  stats: Record<string, unknown> & { used_tokens: number; max_tokens: number; dedup: { cooled: number; status: string } };
}

const U = 'viking://user/default';
const TOPICS = ['the billing service', 'the search gateway', 'the ingest queue', 'the ledger cache', 'the payments API', 'the release train'];

/** Thirty event memories about deploys (Summary + a long ChatLog), an entity, a resource. */
function seed(): Array<{ uri: string; content: string }> {
  const chatter = 'we talked it through step by step and checked the dashboards again. '.repeat(12);
  const events = Array.from({ length: 30 }, (_, i) => ({
    uri: `${U}/memories/events/2026/deploy-${i}.md`,
    content: `# Summary\nWe deployed ${TOPICS[i % TOPICS.length]} to production, rollout ${i}.\n\n# ChatLog\n${chatter}`,
  }));
  return [
    ...events,
    { uri: `${U}/memories/entities/gateway.md`, content: 'The search gateway is the REST front door; we deploy it blue/green.' },
    { uri: 'viking://resources/docs/deploy.md', content: '# Deploy\n\nWe deploy services with blue/green releases and canaries.\n\n## Rollback\n\nSwitch traffic back.' },
  ];
}

async function post(mesh: Mesh, path: string, body: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(new URL(path, mesh.gatewayUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

async function context(mesh: Mesh, body: Record<string, unknown>): Promise<ContextResult> {
  const r = await post(mesh, '/api/v1/search/search', { mode: 'context', ...body });
  expect(r.status).toBe(200);
  return r.body.result as ContextResult;
}

/** The plugin's own body (plugin-client.md §1.1 on a machine with the claude CLI), per session. */
const plugin = (session: string, extra: Record<string, unknown> = {}) => ({
  query: 'what did we deploy to production',
  mode: 'context',
  purpose: 'coding',
  score_threshold: 0.35,
  session_id: `cc-${session}`,
  dedup_turns: 5,
  ...extra,
});

const dirs: string[] = [];
async function mesh(env: Record<string, string> = {}): Promise<Mesh> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-packing-'));
  dirs.push(dataDir);
  const m = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', ...env }, log: silentLogger() });
  for (const doc of seed()) {
    const w = await post(m, '/api/v1/content/write', { ...doc, mode: 'replace', wait: true });
    expect(w.status).toBe(200);
  }
  return m;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('packing through the mesh (compat server)', () => {
  let m: Mesh;
  beforeAll(async () => {
    m = await mesh({ CTXMESH_CONTEXT_PACKING: 'compat' });
  }, 120_000);
  afterAll(async () => {
    await m?.stop();
  });

  it('keeps the contract byte for byte: naming compat is the same as naming nothing, and stats get no addition', async () => {
    const none = await context(m, plugin('c1'));
    const named = await context(m, plugin('c2', { packing: 'compat' }));
    expect(JSON.stringify({ ...named, stats: { ...named.stats, dedup: null } })).toBe(JSON.stringify({ ...none, stats: { ...none.stats, dedup: null } }));
    expect(none.stats).not.toHaveProperty('packing');
    expect(none.stats).not.toHaveProperty('evidence');
    // The coding preset gives events one slot: one memory of thirty.
    expect(none.entries.filter((e) => e.category === 'events')).toHaveLength(1);
  });

  it('spends the plugin\'s budget on evidence with packing "evidence": many memories, whole tiers, cited, within budget', async () => {
    const compat = await context(m, plugin('e0'));
    const r = await context(m, plugin('e1', { packing: 'evidence' }));
    expect(r.stats.packing).toBe('evidence');
    expect(r.stats.evidence).toMatchObject({ rounds: expect.any(Number), below_floor: expect.any(Number) });
    expect(r.entries.length).toBeGreaterThanOrEqual(2 * compat.entries.length);
    expect(r.entries.filter((e) => e.category === 'events').length).toBeGreaterThan(10);
    expect(r.stats.used_tokens).toBeLessThanOrEqual(r.stats.max_tokens);
    // Breadth at the cheapest text: the summaries, not bare URIs.
    expect(r.entries.filter((e) => e.detail === 'uri')).toEqual([]);
    // …a summary, or the excerpt of a long memory that holds the query (marked, issue 20), beside whole bodies.
    expect(r.entries.some((e) => (e.detail === 'overview' && /^We deployed /.test(e.text)) || (e.text.startsWith('[…]\nWe deployed ') && e.text.length < 200))).toBe(true);
    expect(parseCompactBlock(r.rendered).entries.filter((e) => e.excerpt).every((e) => e.text.includes('[…]'))).toBe(true);
    const cited = parseCompactBlock(r.rendered).entries.map((x) => x.uri);
    for (const e of r.entries) {
      expect(cited).toContain(e.uri);
      expect(estimateTokens(e.text)).toBeLessThanOrEqual(r.stats.max_tokens / 2);
    }
    expect(new Set(r.entries.map((e) => e.uri)).size).toBe(r.entries.length);
  });

  it('holds back what the session was just shown (dedup ledger), and serves the next evidence instead', async () => {
    const first = await context(m, plugin('d1', { packing: 'evidence', max_tokens: 400 }));
    const second = await context(m, plugin('d1', { packing: 'evidence', max_tokens: 400 }));
    expect(second.stats.dedup.cooled).toBe(first.entries.filter((e) => e.detail !== 'uri').length);
    const shown = new Set(first.entries.map((e) => e.uri));
    expect(second.entries.length).toBeGreaterThan(0);
    for (const e of second.entries) expect(shown.has(e.uri)).toBe(false);
  });

  it('answers 400 naming the field for an unknown packing, on /search and /recall', async () => {
    for (const [path, body] of [
      ['/api/v1/search/search', { query: 'q', mode: 'context', packing: 'greedy' }],
      ['/api/v1/search/recall', { query: 'q', packing: 'greedy' }],
    ] as const) {
      const r = await post(m, path, body);
      expect(r.status).toBe(400);
      expect(r.body.error.code).toBe('INVALID_ARGUMENT');
      expect(r.body.error.message).toContain('body.packing');
    }
    // In list mode the field is context-only, as the contract's context fields are.
    expect((await post(m, '/api/v1/search/search', { query: 'q', packing: 'evidence' })).status).toBe(400);
  });

  it('folds packing into /recall (still deprecated)', async () => {
    const r = await post(m, '/api/v1/search/recall', { query: 'what did we deploy to production', packing: 'evidence' });
    expect(r.status).toBe(200);
    expect(r.headers.get('deprecation')).toBe('true');
    expect(r.body.result.stats.packing).toBe('evidence');
    expect(r.body.result.stats.deprecated.aliases_used).toEqual([]);
    expect(r.body.result.entries.length).toBeGreaterThan(1);
  });

  it('shows no fates in any REST response (explain is internal)', async () => {
    const r = await context(m, plugin('x1', { packing: 'evidence' }));
    expect(JSON.stringify(r)).not.toContain('"fate"');
  });
});

describe('packing through the mesh (a default install: evidence)', () => {
  let m: Mesh;
  beforeAll(async () => {
    m = await mesh();
  }, 120_000);
  afterAll(async () => {
    await m?.stop();
  });

  it('packs a request that names none with the server default, evidence, and one naming compat with the contract\'s kernel', async () => {
    const byDefault = await context(m, plugin('s1'));
    expect(byDefault.stats.packing).toBe('evidence');
    expect(byDefault.entries.length).toBeGreaterThan(5);
    const compat = await context(m, plugin('s2', { packing: 'compat' }));
    expect(compat.stats).not.toHaveProperty('packing');
    expect(compat.entries.filter((e) => e.category === 'events')).toHaveLength(1);
  });

  it('answers a question about nothing in the store with an empty block, with the plugin body and the bare one (issue 19)', async () => {
    for (const body of [plugin('off1', { query: 'quarterly payroll tax filing for the Lisbon office' }), { query: 'quarterly payroll tax filing for the Lisbon office' }]) {
      const r = await context(m, body);
      expect(r.stats.packing).toBe('evidence');
      expect(r.entries).toEqual([]);
      expect(r.rendered).toBe('');
      expect(r.stats.used_tokens).toBe(0);
    }
    // The same bare body about what the store holds is served.
    const on = await context(m, { query: 'what did we deploy to production' });
    expect(on.entries.length).toBeGreaterThan(5);
  });

  it('serves the plugin body what the bare body gets: the server floor is the plugin threshold', async () => {
    const withThreshold = await context(m, plugin('t1'));
    const without = await context(m, plugin('t2', { score_threshold: null }));
    expect(withThreshold.entries.map((e) => e.uri)).toEqual(without.entries.map((e) => e.uri));
  });

  it('scores every served entry at or above the noise floor, and none is left out that scored above it with room to spare', async () => {
    const r = await post(m, '/api/v1/search/search', { query: 'what did we deploy to production', mode: 'context', max_tokens: 4000, explain: true });
    expect(r.status).toBe(200);
    const res = r.body.result as ContextResult & { explain: { candidates: Array<{ uri: string; score: number; ranked_score: number; reason: string }> } };
    for (const e of res.entries) expect(e.score).toBeGreaterThanOrEqual(0.35);
    for (const c of res.explain.candidates) {
      if (c.reason === 'noise_floor') expect(c.ranked_score).toBeLessThan(0.35);
      if (c.ranked_score < 0.35) expect(['noise_floor', 'cooled', 'excluded']).toContain(c.reason);
    }
  });
});

describe('CTXMESH_CONTEXT_PACKING', () => {
  it('refuses to start the mesh with an unknown value, naming the variable', async () => {
    await expect(startMesh({ env: { CTXMESH_DATA_DIR: mkdtempSync(join(tmpdir(), 'ctxmesh-packing-bad-')), GATEWAY_PORT: '0', CTXMESH_CONTEXT_PACKING: 'greedy' }, log: silentLogger() })).rejects.toThrow(
      /CTXMESH_CONTEXT_PACKING/,
    );
  });
});
