/**
 * Bounded fuzzing of every route the gateway serves (issue 12): bodies built from each route's
 * own field names, with values drawn from what broke it before — integers outside the proto
 * field's range, deep nesting, huge strings, lone surrogates — beside well-formed ones. Every
 * answer must be below 500, and `/health` must keep answering.
 *
 * `npm test` runs FUZZ_RUNS (default 2000) cases; `npm run fuzz` runs 20,000. The seed is printed
 * (and taken from FUZZ_SEED when set), so a failing run can be replayed exactly.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { startMesh, type Mesh } from '@ctxmesh/ctxmesh';
import { silentLogger } from '@ctxmesh/runtime';

const RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const SEED = process.env.FUZZ_SEED !== undefined ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);

/** One route: method, a path (some with fuzzed segments), and the fields its body declares. */
interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  fields: string[];
  /** A valid body that fuzzed fields are laid over, so that cases get past validation too. */
  base?: Record<string, unknown>;
}

const SEARCH = ['query', 'image_url', 'target_uri', 'context_type', 'limit', 'node_limit', 'score_threshold', 'filter', 'include_provenance', 'tags', 'since', 'until', 'time_field', 'level', 'telemetry', 'as_of'];
const CONTEXT = [...SEARCH, 'session_id', 'mode', 'query_expansion', 'max_tokens', 'quotas', 'purpose', 'detail', 'dedup_turns', 'exclude_uris', 'peer_scope', 'other_peer_penalty', 'rewrite', 'rewrite_max_bullets', 'tokenizer', 'time_budget_ms'];
const ROUTES: Route[] = [
  { method: 'POST', path: '/api/v1/search/find', fields: SEARCH, base: { query: 'deploy rollback' } },
  { method: 'POST', path: '/api/v1/search/search', fields: CONTEXT, base: { query: 'what shipped', mode: 'context', session_id: 'fz', dedup_turns: 2 } },
  { method: 'POST', path: '/api/v1/search/recall', fields: ['query', 'quotas', 'max_chars', 'min_score', 'peer_scope', 'other_peer_penalty', 'render', 'telemetry', 'session_id', 'query_expansion', 'max_tokens', 'purpose', 'detail', 'score_threshold', 'dedup_turns', 'exclude_uris', 'rewrite', 'rewrite_max_bullets', 'tokenizer', 'time_budget_ms'], base: { query: 'deploy' } },
  { method: 'POST', path: '/api/v1/retrieve', fields: ['query', 'workspace', 'subject', 'top_k', 'memory_k', 'mmr_lambda', 'max_per_document', 'as_of', 'token_budget', 'time_budget_ms', 'stages', 'tokenizer'], base: { query: 'rollback', top_k: 5 } },
  { method: 'POST', path: '/api/v1/content/write', fields: ['uri', 'content', 'mode', 'wait', 'valid_from', 'valid_to', 'tags', 'workspace'], base: { uri: 'viking://resources/fuzz.md', content: '# Fuzz\n\nbody' } },
  { method: 'POST', path: '/api/v1/sessions/{sid}/messages', fields: ['role', 'content'], base: { role: 'user', content: 'hello' } },
  { method: 'POST', path: '/api/v1/sessions/{sid}/messages/batch', fields: ['messages'] },
  { method: 'POST', path: '/api/v1/sessions/{sid}/events', fields: ['events', 'expected_head', 'agent_id'] },
  { method: 'POST', path: '/api/v1/sessions/{sid}/surface::project', fields: ['window', 'include_ranges', 'preserve_recent'] },
  { method: 'POST', path: '/api/v1/sessions/{sid}/compress', fields: ['request_id', 'expected_generation', 'author', 'route', 'ranges'] },
  { method: 'POST', path: '/api/v1/sessions/{sid}/search', fields: ['query', 'limit'], base: { query: 'hello' } },
  { method: 'POST', path: '/api/v1/sessions/{sid}/overflow::recover', fields: ['request_id', 'agent_id', 'failure', 'aborted', 'window', 'route'] },
  { method: 'POST', path: '/api/v1/sessions/{sid}/agents/{seg}:status', fields: ['status'] },
  { method: 'POST', path: '/api/v1/workspaces', fields: ['workspace'], base: { workspace: 'fz' } },
  { method: 'PUT', path: '/api/v1/workspaces/active', fields: ['workspace'] },
  { method: 'POST', path: '/mcp', fields: ['jsonrpc', 'id', 'method', 'params'], base: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'search', arguments: { query: 'deploy' } } } },
  { method: 'GET', path: '/api/v1/content/read?uri={q}', fields: [] },
  { method: 'GET', path: '/api/v1/content/status?write_id={q}', fields: [] },
  { method: 'GET', path: '/api/v1/sessions/{sid}/ranges?limit={q}', fields: [] },
  { method: 'GET', path: '/api/v1/sessions/{sid}/blocks/{seg}/originals?offset={q}', fields: [] },
  { method: 'GET', path: '/api/v1/sessions/{sid}/status', fields: [] },
  { method: 'GET', path: '/api/v1/traces/{seg}', fields: [] },
  { method: 'DELETE', path: '/api/v1/fs?uri={q}', fields: [] },
];

/** `[[[…]]]` or `{"a":{"a":…}}` `depth` levels deep, built as a value (JSON.stringify is iterative enough at these depths). */
function nested(depth: number, kind: 'array' | 'object', leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v };
  return v;
}

const OUT_OF_RANGE = fc.constantFrom(2147483648, -2147483649, 4294967296, -1e308, 1e308, 9007199254740993, -9007199254740993, Number.MAX_VALUE, 1e-320, -0, 0.5, '99999999999999999999', '-1e308', '1e308');
const SURROGATES = fc.constantFrom('\ud800', 'a\udc00b', '\udbff\udfff', 'x\ud83d', '\ude00y', '😀', '中文测试');
const MEANINGFUL = fc.constantFrom(
  'viking://resources/fuzz.md',
  'viking://user/default/memories/events/f.md',
  'viking://resources',
  'viking://',
  '~/memories/x.md',
  'context',
  'list',
  'full',
  'overview',
  'abstract',
  'uri',
  'auto',
  'o200k_base',
  'cl100k_base',
  'user',
  'assistant',
  'replace',
  'append',
  'create',
  'idle',
  'running',
  'model',
  'tools/call',
  'search',
  '2026-01-01',
  'k=v',
  '',
  ' ',
);
const HUGE = fc.integer({ min: 4000, max: 40_000 }).map((n) => 'x'.repeat(n));

const leaf: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: MEANINGFUL },
  { weight: 2, arbitrary: OUT_OF_RANGE },
  { weight: 2, arbitrary: fc.integer({ min: -5, max: 100_000 }) },
  { weight: 1, arbitrary: fc.double() },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: SURROGATES },
  { weight: 1, arbitrary: HUGE },
);

/**
 * Filter-shaped trees: known and unknown ops and fields, conds that are nodes, values or
 * neither (a `null` inside an `and` once reached `null.op` in the gateway: a 500).
 */
const filterTree: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small' },
    leaf,
    fc.record(
      {
        op: fc.constantFrom('and', 'or', 'must', 'must_not', 'range', 'time_range', 'prefix', 'contains', 'near'),
        field: fc.oneof(fc.constantFrom('context_type', 'uri', 'level', 'updated_at', 'created_at', 'search_tags', 'owner'), leaf),
        conds: fc.oneof(fc.array(tie('node'), { maxLength: 3 }), leaf),
        gte: leaf,
        lte: leaf,
      },
      { requiredKeys: ['op'] },
    ),
  ),
})).node;

const value: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 1, arbitrary: filterTree },
  { weight: 6, arbitrary: leaf },
  { weight: 1, arbitrary: fc.array(leaf, { maxLength: 6 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.oneof(MEANINGFUL, fc.string({ maxLength: 8 })), leaf, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 1, max: 80 }), fc.constantFrom<'array' | 'object'>('array', 'object'), leaf).map(([d, k, l]) => nested(d, k, l)) },
);

/** A body for a route: some of its own fields (and sometimes an unknown one) with fuzzed values. */
const bodyFor = (route: Route): fc.Arbitrary<unknown> => {
  const fuzzed = fc
    .tuple(fc.subarray(route.fields), fc.array(value, { minLength: route.fields.length, maxLength: route.fields.length }), fc.option(fc.string({ maxLength: 6 })))
    .map(([keys, vals, extra]) => {
      const o: Record<string, unknown> = {};
      keys.forEach((k, i) => (o[k] = vals[i]));
      if (extra !== null) o[extra] = vals[0];
      return o;
    });
  const arms: Array<fc.WeightedArbitrary<unknown>> = [
    { weight: 8, arbitrary: fuzzed },
    { weight: 1, arbitrary: value },
  ];
  if (route.base) {
    // A valid body with one or two of its fields fuzzed: these cases get past validation.
    const base = route.base;
    arms.push({
      weight: 8,
      arbitrary: fc.tuple(fc.subarray(route.fields, { maxLength: Math.min(2, route.fields.length) }), value, value).map(([keys, a, b]) => {
        const o: Record<string, unknown> = { ...base };
        keys.forEach((k, i) => (o[k] = i === 0 ? a : b));
        return o;
      }),
    });
  }
  if (route.base && route.fields.includes('filter')) {
    // A valid body whose filter is a fuzzed tree.
    const base = route.base;
    arms.push({ weight: 4, arbitrary: filterTree.map((filter) => ({ ...base, filter })) });
  }
  return fc.oneof(...arms);
};

/** A raw body that is not JSON, or JSON nested far past any limit. */
const RAW = fc.oneof(
  fc.constantFrom('not json', '{"query":', '{"a":1}}', '\u0000', '[' + ']'.repeat(3), '{"query":"\\ud800"}'),
  fc.integer({ min: 33, max: 60_000 }).map((d) => '{"filter":' + '['.repeat(d) + ']'.repeat(d) + '}'),
  fc.integer({ min: 33, max: 60_000 }).map((d) => '['.repeat(d)),
);

const segment = fc.oneof(fc.constantFrom('s1', 'fuzz-session', 'a:b', '%F0%9F%98%80', '..', 'x'.repeat(90), '%ud800'), fc.stringMatching(/^[A-Za-z0-9_-]{1,12}$/));

const fuzzCase = fc.record({
  route: fc.constantFrom(...ROUTES),
  seg: segment,
  sid: segment,
  q: fc.oneof(segment, fc.constantFrom('viking://resources/fuzz.md', '', '-1', '1e308', '99999999999999999999')),
  body: fc.option(fc.oneof({ weight: 9, arbitrary: fc.constant('structured' as const) }, { weight: 1, arbitrary: RAW }), { nil: undefined }),
  structured: fc.constant(null),
}).chain((c) => bodyFor(c.route).map((b) => ({ ...c, structured: b })));

let mesh: Mesh;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxmesh-fuzz-'));
  mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dir, GATEWAY_PORT: '0' }, log: silentLogger() });
}, 60_000);
afterAll(async () => {
  await mesh?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function health(): Promise<number> {
  const res = await fetch(new URL('/health', mesh.gatewayUrl), { signal: AbortSignal.timeout(10_000) });
  await res.text();
  return res.status;
}

describe('fuzzing every route', () => {
  it(`answers ${RUNS} fuzzed requests without a 5xx, and /health stays up`, async () => {
    process.stdout.write(`fuzz: ${RUNS} cases, seed ${SEED} (replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS})\n`);
    let n = 0;
    const fives: string[] = [];
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(fuzzCase, async (c) => {
        const path = c.route.path.replace('{sid}', c.sid).replace('{seg}', c.seg).replace('{q}', encodeURIComponent(c.q));
        const text = c.route.method === 'GET' || c.route.method === 'DELETE' ? undefined : c.body === 'structured' ? JSON.stringify(c.structured) : c.body;
        const res = await fetch(new URL(path, mesh.gatewayUrl), {
          method: c.route.method,
          headers: { 'content-type': 'application/json', 'x-request-timeout-ms': '20000' },
          body: text,
          signal: AbortSignal.timeout(60_000),
        });
        const answer = await res.text();
        n++;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status >= 500) fives.push(`${res.status} ${c.route.method} ${path} ${(text ?? '').slice(0, 200)} → ${answer.slice(0, 300)}`);
        expect(res.status).toBeLessThan(500);
        if (n % 250 === 0) expect(await health()).toBe(200);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    expect(await health()).toBe(200);
    const byStatus = [...statuses].sort((a, b) => a[0] - b[0]).map(([s, k]) => `${s}×${k}`).join(' ');
    process.stdout.write(`fuzz: ${n} requests, ${fives.length} answered 5xx, seed ${SEED}; statuses ${byStatus}\n`);
    expect(fives).toEqual([]);
  }, 3_600_000);
});
