/** Search routes over real gRPC fakes of the orchestrator (context-contract §1). */
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countTokens } from '@ctxmesh/kernel';
import { common, type orchestrator } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';
import { eventually } from '@ctxmesh/testing';
import { contextStats } from '../src/mapping/__tests__/context-stats';
import { EMPTY_SEARCH, harness, untilAborted, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.orch.script = {};
  h.orch.search.length = 0;
  h.orch.assemble.length = 0;
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: typeof body === 'string' ? body : JSON.stringify(body) });

const STATS = {
  searched: { all: 1 },
  candidates: 1,
  excluded: 0,
  origins: { actor_peer: 0, self: 1, other_peer: 0 },
  peer_scope: 'all',
  quotas: null,
  max_tokens: 1600,
  used_tokens: 20,
  per_entry_cap: 800,
  returned: 1,
  dropped: 0,
  deduped: 0,
  detail: null,
  tier_counts: { abstract: 1 },
  fill: { floor_tokens: 20, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 },
  purpose: null,
  query_expansion: 'off',
  planned_queries: ['what shipped'],
  score_threshold: null,
  other_peer_penalties: { events: 0.1, entities: 0.1, preferences: 0.02, experiences: 0.02, resources: 0.02, skills: 0.02, memories: 0.1 },
  rewrite: 'off',
  rewrite_usage: null,
  dedup: { turns: 0, status: 'off', cooled: 0, turn: null },
};

const RENDERED = '<memory uri="viking://resources/docs/api.md" type="resources" score="0.42" detail="abstract">\nHTTP API reference.\n</memory>';

function contextAnswer(stats: orchestrator.ContextStats = contextStats(), score = 0.42): orchestrator.AssembleContextResponse {
  return {
    entries: [{ uri: 'viking://resources/docs/api.md', category: 'resources', score, detail: 'abstract', text: 'HTTP API reference.', origin: 'self' }],
    rendered: RENDERED,
    digest: '',
    stats,
    stages: [{ stage: 'gather', status: common.StageStatus.STAGE_STATUS_OK, durationMs: 3, reason: '' }],
    fates: [],
    explain: undefined,
  };
}

describe('POST /api/v1/search/find', () => {
  it('POST /api/v1/search/find - plugin fallback with viking://~/memories - 200 list envelope', async () => {
    h.orch.script.search = async () => ({
      ...EMPTY_SEARCH,
      memories: [{ contextType: 'memory', uri: 'viking://user/default/memories/events/a.md', level: 2, score: 0.5, abstract: 'abs', tags: [] }],
    });
    const res = await post('/api/v1/search/find', { query: 'deploy', target_uri: 'viking://~/memories', limit: 5 }, { 'x-request-id': 'req-find-1' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBe('req-find-1');
    expect(res.headers['x-process-time']).toMatch(/^\d+\.\d+(e-\d+)?$/);
    expect(res.body).toBe(
      '{"status":"ok","result":{"memories":[{"context_type":"memory","uri":"viking://user/default/memories/events/a.md","level":2,"score":0.5,"abstract":"abs","tags":[]}],"resources":[],"skills":[],"total":1}}',
    );
    const got = h.orch.search[0];
    expect(got.requestId).toBe('req-find-1');
    expect(got.req).toMatchObject({
      identity: { accountId: 'default', userId: 'default', role: common.Role.ROLE_ROOT, actorPeerId: '', requestId: 'req-find-1' },
      query: 'deploy',
      targetUris: ['viking://user/default/memories'],
      limit: 5,
      filter: undefined,
    });
  });

  it('POST /api/v1/search/find - blank query - 400 INVALID_ARGUMENT without calling the orchestrator', async () => {
    const res = await post('/api/v1/search/find', { query: '  ' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      status: 'error',
      result: null,
      error: { code: 'INVALID_ARGUMENT', message: 'Search query or image_url must not be empty.', details: {} },
      telemetry: null,
      profile: null,
    });
    expect(h.orch.search).toHaveLength(0);
  });

  it('POST /api/v1/search/find - orchestrator PERMISSION_DENIED - 403', async () => {
    h.orch.script.search = async () => {
      throw new CtxError(Code.PERMISSION_DENIED, 'ACCESS_DENIED', 'Access denied for viking://resources/private');
    };
    const res = await post('/api/v1/search/find', { query: 'q' });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toMatchObject({ code: 'PERMISSION_DENIED', message: 'Access denied for viking://resources/private', details: { reason: 'ACCESS_DENIED' } });
  });

  it('POST /api/v1/search/find - telemetry requested - telemetry member present', async () => {
    h.orch.script.search = async () => EMPTY_SEARCH;
    const withT = (await post('/api/v1/search/find', { query: 'q', telemetry: { summary: true } })).json();
    expect(Object.keys(withT)).toEqual(['status', 'result', 'telemetry']);
    expect(withT.telemetry).toMatchObject({ summary: { operation: 'search.find' } });
    const without = (await post('/api/v1/search/find', { query: 'q' })).json();
    expect(Object.keys(without)).toEqual(['status', 'result']);
  });
});

describe('explain (issue 14)', () => {
  // The block's token account: one compat fragment, its text against its tags (issue 20).
  const used = countTokens(RENDERED);
  const text = countTokens('HTTP API reference.');
  const account = { used_tokens: used, text_tokens: text, markup_tokens: used - text, markup_share: (used - text) / used, entries: [{ uri: 'viking://resources/docs/api.md', text_tokens: text, markup_tokens: used - text }] };
  const EXPLAIN = { trace_id: null, packing: 'compat', stages: [{ stage: 'gather', outcome: 'ok', start_ms: 0.4, ms: 3.1 }], fill: { floor_tokens: 20, upgrade_tokens: 0 }, account, candidates: [] };
  const EXPLAIN_MSG: orchestrator.ContextExplain = { traceId: '', packing: 'compat', stages: [{ stage: 'gather', outcome: 'ok', startMs: 0.4, ms: 3.1, reason: '' }], floorTokens: 20, upgradeTokens: 0, candidates: [] };

  it.each([
    ['/api/v1/search/search', { query: 'q', mode: 'context' }],
    ['/api/v1/search/recall', { query: 'q' }],
  ])('POST %s - explain true - the orchestrator is asked, result.explain comes last; without it the bytes are unchanged', async (url, body) => {
    h.orch.script.assembleContext = async (req) => ({ ...contextAnswer(), explain: req.explain ? EXPLAIN_MSG : undefined });
    const withExplain = await post(url, { ...body, explain: true });
    expect(withExplain.statusCode).toBe(200);
    expect(h.orch.assemble.at(-1)?.req.explain).toBe(true);
    const result = withExplain.json().result;
    expect(Object.keys(result)).toEqual(['entries', 'rendered', 'digest', 'stats', 'explain']);
    expect(result.explain).toEqual(EXPLAIN);
    const plain = await post(url, body);
    expect(h.orch.assemble.at(-1)?.req.explain).toBe(false);
    expect(plain.body).toBe(withExplain.body.replace(`,"explain":${JSON.stringify(EXPLAIN)}`, ''));
  });

  it('POST /api/v1/search/search - explain in list mode - 400, a context-only field', async () => {
    const res = await post('/api/v1/search/search', { query: 'q', explain: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain("explain require mode='context'");
    expect(h.orch.search).toHaveLength(0);
  });
});

describe('POST /api/v1/search/search', () => {
  it('POST /api/v1/search/search - mode context - 200 {entries, rendered, digest, stats} in contract order', async () => {
    const stats = { ...STATS, ignored: ['level'] };
    h.orch.script.assembleContext = async () => contextAnswer();
    const res = await post('/api/v1/search/search', { query: 'what shipped', mode: 'context', level: 2 });
    expect(res.statusCode).toBe(200);
    const expected = {
      status: 'ok',
      result: {
        entries: [{ uri: 'viking://resources/docs/api.md', category: 'resources', score: 0.42, detail: 'abstract', text: 'HTTP API reference.', origin: 'self' }],
        rendered: RENDERED,
        digest: '',
        stats,
      },
    };
    // Byte equality: key order of the envelope, the entries and stats is part of the contract.
    expect(res.body).toBe(JSON.stringify(expected));
    expect(res.headers.deprecation).toBeUndefined();
    expect(h.orch.assemble[0].req).toMatchObject({ query: 'what shipped', bucketed: false, maxTokens: 1600, queryExpansion: 'auto' });
  });

  it('POST /api/v1/search/search - plugin context body with quotas and rewrite auto - 200, mapped request', async () => {
    h.orch.script.assembleContext = async () => contextAnswer();
    const body = {
      query: '…',
      mode: 'context',
      purpose: 'coding',
      score_threshold: 0.35,
      quotas: { events: 1, entities: 1, preferences: 1, experiences: 1, resources: 1, skills: 1 },
      max_tokens: 900,
      session_id: 'cc-s1',
      query_expansion: 'off',
      dedup_turns: 5,
      rewrite: 'auto',
    };
    const res = await post('/api/v1/search/search', body, { authorization: 'Bearer whatever', 'x-openviking-actor-peer': '-home-dev-proj' });
    expect(res.statusCode).toBe(200);
    const req = h.orch.assemble[0].req;
    expect(req).toMatchObject({ bucketed: true, maxTokens: 900, sessionId: 'cc-s1', queryExpansion: 'off', dedupTurns: 5, rewrite: 'auto', scoreThreshold: 0.35, purpose: 'coding' });
    expect(req.quotas.map((q) => `${q.name}=${q.count}`)).toEqual(['events=1', 'entities=1', 'preferences=1', 'experiences=1', 'resources=1', 'skills=1']);
    expect(req.identity?.actorPeerId).toBe('-home-dev-proj');
  });

  it('POST /api/v1/search/search - non-finite score from downstream - 200 with 0', async () => {
    h.orch.script.assembleContext = async () => contextAnswer(contextStats(), Number.POSITIVE_INFINITY);
    const res = await post('/api/v1/search/search', { query: 'q', mode: 'context' });
    expect(res.statusCode).toBe(200);
    expect(res.json().result.entries[0].score).toBe(0);
    expect(res.body).toContain('"score":0,');
  });

  it('POST /api/v1/search/search - telemetry true in context mode - stages summarised', async () => {
    h.orch.script.assembleContext = async () => contextAnswer();
    const res = (await post('/api/v1/search/search', { query: 'q', mode: 'context', telemetry: true })).json();
    expect(res.telemetry.summary.stages).toEqual([{ stage: 'gather', status: 'ok', duration_ms: 3 }]);
  });

  it('POST /api/v1/search/search - list mode without mode - 200 list envelope', async () => {
    h.orch.script.search = async () => EMPTY_SEARCH;
    const res = await post('/api/v1/search/search', { query: 'q', target_uri: 'viking://~/skills', session_id: 's-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: { memories: [], resources: [], skills: [], total: 0 } });
    expect(h.orch.search[0].req).toMatchObject({ targetUris: ['viking://user/default/skills'], sessionId: 's-1' });
  });

  it('POST /api/v1/search/search - orchestrator INVALID_ARGUMENT (empty query in context mode) - 400 domain error', async () => {
    h.orch.script.assembleContext = async () => {
      throw new CtxError(Code.INVALID_ARGUMENT, 'EMPTY_QUERY', 'Search query or image_url must not be empty.');
    };
    const res = await post('/api/v1/search/search', { query: '', mode: 'context' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      status: 'error',
      result: null,
      error: { code: 'INVALID_ARGUMENT', message: 'Search query or image_url must not be empty.', details: {} },
      telemetry: null,
      profile: null,
    });
  });

  it('POST /api/v1/search/search - orchestrator INTERNAL - 500 without the cause', async () => {
    h.orch.script.assembleContext = async () => {
      throw new Error('secret stack detail');
    };
    const res = await post('/api/v1/search/search', { query: 'q', mode: 'context' }, { 'x-request-id': 'req-500' });
    expect(res.statusCode).toBe(500);
    expect(res.json().error).toMatchObject({ code: 'INTERNAL', message: 'internal error', details: { request_id: 'req-500' } });
    expect(res.body).not.toContain('secret');
  });

  it.each<[string, string | unknown, Record<string, string>, string, Array<string | number>, string]>([
    ['malformed JSON', '{"query": }', {}, 'Invalid request parameters: body.10: JSON decode error', ['body', 10], 'json_invalid'],
    ['a JSON array', '[1]', {}, 'Invalid request parameters: body: Input should be a valid dictionary or object to extract fields from', ['body'], 'model_attributes_type'],
    ['an empty body', '', {}, 'Invalid request parameters: body: Field required', ['body'], 'missing'],
    ['an unknown field', { query: 'q', mode: 'context', bogus: 1 }, {}, 'Invalid request parameters: body.bogus: Extra inputs are not permitted', ['body', 'bogus'], 'extra_forbidden'],
    [
      'list mode with context-only fields',
      { query: 'q', max_tokens: 1600, quotas: null },
      {},
      "Invalid request parameters: body: Value error, max_tokens, quotas require mode='context'; set mode='context' or drop these fields",
      ['body'],
      'value_error',
    ],
    ['max_tokens out of range', { query: 'q', mode: 'context', max_tokens: 10 }, {}, 'Invalid request parameters: body.max_tokens: Input should be greater than or equal to 64', ['body', 'max_tokens'], 'greater_than_equal'],
  ])('POST /api/v1/search/search - %s - 400 validation envelope', async (_name, body, headers, message, loc, type) => {
    const res = await post('/api/v1/search/search', body, headers);
    expect(res.statusCode).toBe(400);
    const json = res.json();
    expect(json.status).toBe('error');
    expect(json.error.code).toBe('INVALID_ARGUMENT');
    expect(json.error.message).toBe(message);
    expect(json.error.details.validation_errors[0]).toMatchObject({ loc, type });
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('POST /api/v1/search/search - invalid actor peer header - 400 INVALID_ARGUMENT', async () => {
    const res = await post('/api/v1/search/search', { query: 'q' }, { 'x-openviking-actor-peer': '../etc' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_ARGUMENT');
    expect(res.json().error.message).toContain('X-OpenViking-Actor-Peer');
  });

  it('POST /api/v1/search/search - context mode with exclude_uris outside viking:// - 400 INVALID_URI', async () => {
    const res = await post('/api/v1/search/search', { query: 'q', mode: 'context', exclude_uris: ['resources/x'] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_URI', details: { uri: 'resources/x' } });
  });
});

describe('POST /api/v1/search/recall', () => {
  it('POST /api/v1/search/recall - v1 aliases - 200 with Deprecation, Link and stats.deprecated last', async () => {
    h.orch.script.assembleContext = async () => contextAnswer(contextStats({ purpose: 'coding', scoreThreshold: 0.1 }));
    const res = await post('/api/v1/search/recall', { query: 'peer memory', quotas: { events: 5, entities: 4, preferences: 1, experiences: 0 }, max_chars: 5000, min_score: 0.2, render: true });
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe('true');
    expect(res.headers.link).toBe('</api/v1/search/search>; rel="successor-version"');
    const stats = res.json().result.stats;
    expect(Object.keys(stats).at(-1)).toBe('deprecated');
    expect(stats.deprecated).toEqual({
      endpoint: '/api/v1/search/recall',
      successor: '/api/v1/search/search',
      successor_body: { mode: 'context' },
      aliases_used: ['max_chars', 'min_score', 'render'],
    });
    expect(res.json().result.rendered).toBe(RENDERED);
    expect(h.orch.assemble[0].req).toMatchObject({ maxTokens: 1250, scoreThreshold: 0.2, purpose: 'coding', bucketed: true });
  });

  it('POST /api/v1/search/recall - render false - 200 with rendered ""', async () => {
    h.orch.script.assembleContext = async () => contextAnswer();
    const res = await post('/api/v1/search/recall', { query: 'q', render: false });
    expect(res.json().result.rendered).toBe('');
    expect(res.json().result.entries).toHaveLength(1);
  });

  it('POST /api/v1/search/recall - missing query - 400 without deprecation headers', async () => {
    const res = await post('/api/v1/search/recall', { max_chars: 100 });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('Invalid request parameters: body.query: Field required');
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.headers.link).toBeUndefined();
  });

  it('POST /api/v1/search/recall - orchestrator UNAVAILABLE - 503 without deprecation headers', async () => {
    h.orch.script.assembleContext = async () => {
      throw new CtxError(Code.UNAVAILABLE, 'GATHER_DOWN', 'gather unavailable');
    };
    const res = await post('/api/v1/search/recall', { query: 'q' });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'GATHER_DOWN' } });
    expect(res.headers.deprecation).toBeUndefined();
  });
});

describe('request budget', () => {
  it('POST /api/v1/search/search - downstream outlives X-Request-Timeout-Ms - 504 and the downstream call is cancelled', async () => {
    let remaining = Infinity;
    h.orch.script.assembleContext = (_req, ctx) => {
      remaining = ctx.budget.remainingMs();
      return untilAborted(ctx);
    };
    const res = await post('/api/v1/search/search', { query: 'q', mode: 'context' }, { 'x-request-timeout-ms': '300', 'x-request-id': 'req-504' });
    // The gateway's deadline travelled with the call (grpc-timeout), so the downstream never had more.
    expect(remaining).toBeLessThanOrEqual(300);
    expect(res.statusCode).toBe(504);
    expect(res.json()).toEqual({
      status: 'error',
      result: null,
      error: { code: 'DEADLINE_EXCEEDED', message: expect.any(String), details: { reason: 'DEADLINE_EXCEEDED', domain: 'orchestrator', request_id: 'req-504' } },
      telemetry: null,
      profile: null,
    });
    await eventually(() => h.orch.assemble[0]?.aborted !== undefined);
  });

  it('POST /api/v1/search/search - header above the maximum - clamped to the maximum', async () => {
    let remaining = -1;
    h.orch.script.assembleContext = async (_req, ctx) => {
      remaining = ctx.budget.remainingMs();
      return contextAnswer();
    };
    const res = await post('/api/v1/search/search', { query: 'q', mode: 'context' }, { 'x-request-timeout-ms': '999999999' });
    expect(res.statusCode).toBe(200);
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(20_000);
  });

  it('POST /api/v1/search/search - client disconnects - downstream call CANCELLED', async () => {
    let started!: () => void;
    const inFlight = new Promise<void>((r) => (started = r));
    h.orch.script.assembleContext = (_req, ctx) => {
      started();
      return untilAborted(ctx);
    };
    // A real socket: inject() cannot drop a connection half-way.
    const server = createServer((req, res) => h.app.routing(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const client = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/api/v1/search/search', headers: { 'content-type': 'application/json', 'x-request-timeout-ms': '60000' } });
    client.on('error', () => undefined);
    client.end(JSON.stringify({ query: 'q', mode: 'context' }));
    await inFlight;
    client.destroy();
    await eventually(() => h.orch.assemble.at(-1)?.aborted === 'CANCELLED');
    await new Promise<void>((r) => server.close(() => r()));
  });
});
