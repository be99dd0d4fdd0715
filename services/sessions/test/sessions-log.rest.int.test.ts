/**
 * The gateway's session log routes (`services/gateway/src/routes/sessions-log.ts`) through
 * Fastify `inject`, over the real gRPC client to a real sessions server on the embedded
 * store. The app is a tiny one made of the gateway's own request-state hooks, dev-mode
 * identity and error renderer, so statuses and envelopes are what the gateway sends.
 */
import { randomUUID } from 'node:crypto';
import { fastify, type FastifyInstance } from 'fastify';
import { sessions } from '@ctxmesh/proto';
import { connect } from '@ctxmesh/rpc';
import { sessionsLogPort, type SessionsLogPort } from '../../gateway/src/clients/sessions';
import { invalidJsonBody, resolveIdentity, workspaceOf, type HeaderBag } from '../../gateway/src/domain';
import { disposeRequestState, initRequestState } from '../../gateway/src/http/context';
import { renderError } from '../../gateway/src/http/errors';
import { JsonBodyError, parseBody } from '../../gateway/src/http/json';
import { sessionsLogRoutes } from '../../gateway/src/routes/sessions-log';
import { CONTEXT_WINDOW_EXCEEDED, ENGINE_SUMMARY_LEAD } from '../src';
import { assistantCalls, call, conversation, user } from '../src/domain/__tests__/fixtures';
import { counterIds, embeddedFixture, serveSessions, type SessionsHarness, type StoreFixture } from './sessions-harness';

/** A minimal gateway: request state, its body parser, dev identity (+ X-Workspace), error envelopes, the plugin. */
async function restApp(port: SessionsLogPort): Promise<FastifyInstance> {
  const app = fastify();
  app.decorateRequest('gw', null as never);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (req, body, done) => {
    try {
      done(null, parseBody(body as string, req.headers['content-type']));
    } catch (e) {
      done(e instanceof JsonBodyError ? invalidJsonBody(e.position) : (e as Error), undefined);
    }
  });
  app.addHook('onRequest', async (request, reply) => initRequestState(request, reply));
  app.addHook('onResponse', async (request) => disposeRequestState(request));
  app.setErrorHandler(async (err, request, reply) => {
    const r = renderError(err, request.id);
    return reply.code(r.status).type('application/json').send(r.body);
  });
  await app.register(async (api) => {
    api.addHook('preValidation', async (request) => {
      const identity = resolveIdentity(request.headers as HeaderBag, { mode: 'dev' }, () => request.id);
      request.gw.caller = { ...identity, workspace: workspaceOf(request.headers as HeaderBag) };
    });
    await api.register(sessionsLogRoutes, { sessions: port, deadlines: { defaultMs: 15_000, maxMs: 60_000 } });
  });
  await app.ready();
  return app;
}

let fx: StoreFixture;
let h: SessionsHarness;
let client: sessions.SessionsServiceClient;
let app: FastifyInstance;
let sid: string;

beforeAll(async () => {
  fx = embeddedFixture();
  h = await serveSessions(fx.store, { newId: counterIds('abcdef12-0000-4000-8000-') });
  client = connect(sessions.SessionsServiceClient, h.srv.address);
  app = await restApp(sessionsLogPort(client));
});
afterAll(async () => {
  await app.close();
  client.close();
  await h.close();
  await fx.dispose();
});
beforeEach(() => {
  sid = `cc-${randomUUID()}`;
});

const headers = (extra: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...extra });
const post = (url: string, body?: unknown, extra: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url, headers: headers(extra), ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const get = (url: string, extra: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: extra });
const put = (url: string, body: unknown, extra: Record<string, string> = {}) => app.inject({ method: 'PUT', url, headers: headers(extra), payload: JSON.stringify(body) });
const base = () => `/api/v1/sessions/${sid}`;

async function seed(turns = 12): Promise<number> {
  const res = await post(`${base()}/events`, { events: conversation(turns) });
  expect(res.statusCode).toBe(200);
  return res.json().result.head as number;
}

describe('POST /api/v1/sessions/{sid}/events', () => {
  it('POST /api/v1/sessions/{sid}/events - harness events - 200 with seqs, head, generation and prunes', async () => {
    const res = await post(`${base()}/events`, { events: [user('q'), assistantCalls('', call('c1')), user('never mind')], agent_id: 'agent-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      status: 'ok',
      result: {
        seqs: [0, 1, 4],
        head: 4,
        generation: 1,
        prunes: [{ prune_id: expect.any(String), reason: 'unanswered-tool-call', shadowed_seqs: [1], stub_seq: 3 }],
      },
    });
  });

  it('POST /api/v1/sessions/{sid}/events - stale expected_head - 409 with the current head and generation', async () => {
    const head = await seed(2);
    const res = await post(`${base()}/events`, { events: [user('late')], expected_head: head - 1 });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      status: 'error',
      error: { code: 'ABORTED', details: { reason: 'STALE_EXPECTED_HEAD', domain: 'sessions', metadata: { head: String(head), generation: '0' } } },
    });
  });

  it.each([
    ['a compaction/* event', { type: 'compaction/start', compactionId: 'x', turn: null }, /events\[0\]\.type: engine-owned event type/],
    ['a surfaceOp', { ...user('x'), surfaceOp: { op: 'replace', startSeq: 0, endSeq: 0 } }, /events\[0\]\.surfaceOp/],
    ['a tool result without a call id', { type: 'tool/result', content: [{ type: 'text', text: 'x' }] }, /events\[0\]\.callId/],
    ['an unknown type', { type: 'user/whisper', content: [{ type: 'text', text: 'x' }] }, /events\[0\]\.type: unknown event type/],
    ['an empty message', { type: 'assistant/message', content: [] }, /events\[0\]\.content/],
  ])('POST /api/v1/sessions/{sid}/events - %s - 400 naming the field', async (_what, event, message) => {
    const res = await post(`${base()}/events`, { events: [event] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 'error', error: { code: 'INVALID_ARGUMENT', message: expect.stringMatching(message) } });
  });

  it('POST /api/v1/sessions/{sid}/events - body not matching the schema - 400 validation envelope', async () => {
    const res = await post(`${base()}/events`, { events: ['not an object'], expectedHead: 3 });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.error.details.validation_errors).toEqual([{ loc: ['body', 'expectedHead'], message: 'Extra inputs are not permitted', type: 'extra_forbidden' }]);
    const items = await post(`${base()}/events`, { events: ['not an object'] });
    expect(items.json().error.details.validation_errors).toEqual([{ loc: ['body', 'events', 0], message: 'Input should be a valid dictionary', type: 'dict_type' }]);
  });

  it('POST /api/v1/sessions/{sid}/events - bad session id in the path - 400', async () => {
    const res = await post('/api/v1/sessions/bad%20id/events', { events: [user('x')] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(/Invalid session id/);
  });
});

describe('session reads', () => {
  it('GET /api/v1/sessions/{sid}/status - unknown session - 404', async () => {
    const res = await get(`${base()}/status`);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 'error', error: { code: 'NOT_FOUND', details: { reason: 'SESSION_NOT_FOUND' } } });
  });

  it('POST /api/v1/sessions/{sid}/surface:project - window - 200 snake_case messages, usage and window arithmetic', async () => {
    await seed(3);
    const res = await post(`${base()}/surface:project`, { window: { context_tokens: 500, reserved_output_tokens: 100 }, include_ranges: true, preserve_recent: 2 });
    expect(res.statusCode).toBe(200);
    const r = res.json().result;
    expect(r).toMatchObject({ head: 12, generation: 0, input_budget: 400, usage: { rank_tokens: expect.any(Number) } });
    expect(r.over_window).toBe(r.usage.rank_tokens > 400);
    expect(r.messages[0]).toEqual({ seq: 0, id: '0', role: 'system', class: 'instruction', text: 'You are a coding agent.' });
    expect(r.messages.find((m: { id: string }) => m.id === '2#c0')).toMatchObject({ role: 'assistant', tool_call_id: 'c0', tool_name: 'read_file', tool_args: '{"path":"/src/c0.ts"}' });
    expect(r.ranges[0]).toEqual({ start: expect.any(Number), end: expect.any(Number), count: expect.any(Number), rank_tokens: expect.any(Number), tool_pct: expect.any(Number), images: 0, files: 0 });
    // Without include_ranges there is no ranges member; an empty body is a plain projection.
    const plain = await post(`${base()}/surface:project`);
    expect(plain.statusCode).toBe(200);
    expect(plain.json().result).not.toHaveProperty('ranges');
    expect(plain.json().result.input_budget).toBe(0);
  });

  it.each([
    [{ context_tokens: 0 }, 'window.contextTokens'],
    [{ context_tokens: 100, reserved_output_tokens: 100 }, 'window.reservedOutputTokens'],
  ])('POST /api/v1/sessions/{sid}/surface:project - window %j - 400', async (window, field) => {
    await seed(1);
    const res = await post(`${base()}/surface:project`, { window });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain(field);
  });

  it('GET /api/v1/sessions/{sid}/ranges - preserve_recent - 200 oldest first; not an integer - 400', async () => {
    await seed(6);
    const res = await get(`${base()}/ranges?preserve_recent=0`);
    expect(res.statusCode).toBe(200);
    const ranges = res.json().result.ranges as Array<{ start: number }>;
    expect(ranges.length).toBeGreaterThan(0);
    expect(ranges.map((r) => r.start)).toEqual([...ranges.map((r) => r.start)].sort((a, b) => a - b));
    const bad = await get(`${base()}/ranges?preserve_recent=lots`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.validation_errors[0].loc).toEqual(['query', 'preserve_recent']);
  });
});

describe('POST /api/v1/sessions/{sid}/compress', () => {
  it('POST /api/v1/sessions/{sid}/compress - landed, guarded and already_compressed ranges - 200 with per-range results', async () => {
    await seed(6);
    const res = await post(`${base()}/compress`, {
      request_id: 'c1',
      author: 'model',
      route: { provider: 'p', model: 'm' },
      ranges: [
        { start_seq: '1', end_seq: '4#c0', summary: 'Read c0.' },
        { start_seq: 13, end_seq: 24, summary: 'tail' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const [landed, guarded] = res.json().result.results;
    expect(landed).toEqual({
      status: 'landed',
      block_id: expect.any(String),
      kernel_ref: 'b1',
      start: 1,
      end: 4,
      shadowed_seqs: [1, 2, 3, 4],
      claim_tokens: expect.any(Number),
      tier: 1,
      adjusted: false,
      recovered: false,
    });
    expect(guarded).toMatchObject({ status: 'guarded', guarded_seqs: [20, 21, 22, 23, 24], compressible: [{ start: 13, end: 19 }] });
    const again = await post(`${base()}/compress`, { request_id: 'c2', author: 'human', ranges: [{ start_seq: 2, end_seq: 3, summary: 'x' }] });
    expect(again.json().result.results[0]).toEqual({ status: 'already_compressed', detail: expect.any(String), covering_block_ids: [landed.block_id] });
  });

  it.each([
    ['a reversed range', { start_seq: 8, end_seq: 1, summary: 's' }, /reversed range/],
    ['an edge not in the log', { start_seq: 1, end_seq: 500, summary: 's' }, /not in the log.*ListCompressibleRanges/],
    ['a blank summary', { start_seq: 1, end_seq: 4, summary: ' ' }, /ranges\[0\]\.summary/],
    ['a negative seq', { start_seq: -2, end_seq: 4, summary: 's' }, /body\.ranges\.0\.start_seq/],
    ['a fractional seq', { start_seq: 1.5, end_seq: 4, summary: 's' }, /body\.ranges\.0\.start_seq/],
    ['a missing end', { start_seq: 1, summary: 's' }, /body\.ranges\.0\.end_seq: Field required/],
  ])('POST /api/v1/sessions/{sid}/compress - %s - 400', async (_what, range, message) => {
    await seed(6);
    const res = await post(`${base()}/compress`, { request_id: 'r', author: 'model', ranges: [range] });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
  });

  it('POST /api/v1/sessions/{sid}/compress - stale expected_generation - 409', async () => {
    await seed(6);
    const res = await post(`${base()}/compress`, { request_id: 'r', author: 'model', expected_generation: 3, ranges: [{ start_seq: 1, end_seq: 4, summary: 's' }] });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.details).toMatchObject({ reason: 'STALE_EXPECTED_GENERATION', metadata: { generation: '0' } });
  });
});

describe('GET /api/v1/sessions/{sid}/blocks/{ref}/originals and POST …/search', () => {
  it('GET …/blocks/{ref}/originals - paging, clamping and past the end - 200; unknown ref - 404; ambiguous prefix - 400', async () => {
    await seed(8);
    const c = await post(`${base()}/compress`, {
      request_id: 'c',
      author: 'model',
      ranges: [
        { start_seq: 1, end_seq: 4, summary: 'one' },
        { start_seq: 5, end_seq: 8, summary: 'two' },
      ],
    });
    const blockId = c.json().result.results[0].block_id as string;
    const page = await get(`${base()}/blocks/b1/originals?offset=1&limit=2`);
    expect(page.statusCode).toBe(200);
    expect(page.json().result).toMatchObject({ block_id: blockId, kind: 'block', kernel_ref: 'b1', tier: 1, total: 4, offset: 1, next_offset: 3, note: '' });
    expect(page.json().result.items.map((i: { seq: number }) => i.seq)).toEqual([2, 3]);
    const last = await get(`${base()}/blocks/${blockId}/originals?offset=-9&limit=0`);
    expect(last.json().result).toMatchObject({ offset: 0, next_offset: 1 });
    expect(last.json().result.items).toHaveLength(1);
    const huge = await get(`${base()}/blocks/b1/originals?offset=abc&limit=99999999999999999999`);
    expect(huge.json().result).toMatchObject({ offset: 0, next_offset: null });
    expect(huge.json().result.items).toHaveLength(4);
    const past = await get(`${base()}/blocks/b1/originals?offset=10`);
    expect(past.json().result).toMatchObject({ items: [], total: 4, next_offset: null, note: expect.stringContaining('past the end') });
    expect((await get(`${base()}/blocks/b7/originals`)).statusCode).toBe(404);
    const amb = await get(`${base()}/blocks/abcdef12/originals`);
    expect(amb.statusCode).toBe(400);
    expect(amb.json().error.message).toMatch(/ambiguous prefix/);
  });

  it('POST …/search - hidden originals and blocks - 200 hits; blank query - 200 no hits', async () => {
    await seed(12);
    const rec = await post(`${base()}/overflow:recover`, { request_id: 'r1', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    expect(rec.json().result.action).toBe('retry');
    const res = await post(`${base()}/search`, { query: 'uid5u', limit: 3 });
    expect(res.statusCode).toBe(200);
    const hits = res.json().result.hits;
    expect(hits[0]).toEqual({ kind: 'message', block_id: rec.json().result.block.block_id, seq: expect.any(Number), role: expect.any(String), score: expect.any(Number), preview: expect.stringContaining('uid5u') });
    expect((await post(`${base()}/search`, { query: '  ' })).json()).toEqual({ status: 'ok', result: { hits: [] } });
  });
});

describe('POST /api/v1/sessions/{sid}/overflow:recover and agents/{aid}:status', () => {
  it('POST …/overflow:recover - first overflow then budget spent then idle - 200 retry, 200 surface_error, 200 retry', async () => {
    await seed(12);
    const first = await post(`${base()}/overflow:recover`, { request_id: 'r1', agent_id: 'agent-1', failure: { code: CONTEXT_WINDOW_EXCEEDED, message: 'too long' }, route: { provider: 'p', model: 'm' } });
    expect(first.statusCode).toBe(200);
    expect(first.json().result).toEqual({
      action: 'retry',
      reason: 'compacted',
      block: { block_id: expect.any(String), start: expect.any(Number), end: expect.any(Number), hidden_count: expect.any(Number), claim_tokens: expect.any(Number) },
      budget: { used: 1, max: 1 },
      generation: 1,
    });
    const again = await post(`${base()}/overflow:recover`, { request_id: 'r2', agent_id: 'agent-1', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    expect(again.json().result).toEqual({ action: 'surface_error', reason: 'budget_spent', budget: { used: 1, max: 1 }, generation: 1 });
    const idle = await post(`${base()}/agents/agent-1:status`, { status: 'idle' });
    expect(idle.json()).toEqual({ status: 'ok', result: { agent_id: 'agent-1', budget: { used: 0, max: 1 } } });
    await post(`${base()}/events`, { events: conversation(3).slice(1) });
    expect((await post(`${base()}/overflow:recover`, { request_id: 'r3', agent_id: 'agent-1', failure: { code: CONTEXT_WINDOW_EXCEEDED } })).json().result.action).toBe('retry');
    const status = await get(`${base()}/status`);
    expect(status.json().result).toMatchObject({ generation: 2, budgets: [{ agent_id: 'agent-1', used: 1, max: 1 }], estimator_id: 'ctxmesh-claim-v1' });
    expect(status.json().result.blocks).toHaveLength(2);
    expect(status.json().result.blocks[0]).toMatchObject({ author: 'engine', topic: 'context-overflow recovery', active: true });
    expect(status.json().result.checkpoint_seqs).toHaveLength(2);
  });

  it.each([
    ['another failure code', { failure: { code: 'RATE_LIMITED' } }, 'not_overflow'],
    ['an aborted request', { aborted: true }, 'aborted'],
  ])('POST …/overflow:recover - %s - 200 surface_error and no writes', async (_what, patch, reason) => {
    const head = await seed(12);
    const res = await post(`${base()}/overflow:recover`, { request_id: 'r', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED }, ...patch });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ action: 'surface_error', reason });
    expect((await get(`${base()}/status`)).json().result.head).toBe(head);
  });

  it.each([
    ['a missing agent_id', { request_id: 'r', failure: { code: CONTEXT_WINDOW_EXCEEDED } }, /body\.agent_id: Field required/],
    ['a missing failure.code', { request_id: 'r', agent_id: 'a', failure: {} }, /body\.failure\.code: Field required/],
    ['a blank agent_id', { request_id: 'r', agent_id: ' ', failure: { code: 'X' } }, /agentId: is required/],
    ['a window with reserve ≥ context', { request_id: 'r', agent_id: 'a', failure: { code: 'X' }, window: { context_tokens: 10, reserved_output_tokens: 10 } }, /window\.reservedOutputTokens/],
  ])('POST …/overflow:recover - %s - 400', async (_what, b, message) => {
    await seed(2);
    const res = await post(`${base()}/overflow:recover`, b);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toMatch(message);
  });

  it('POST …/overflow:recover - unknown session - 404; repeated request_id - the cached answer', async () => {
    expect((await post(`${base()}/overflow:recover`, { request_id: 'r', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } })).statusCode).toBe(404);
    await seed(12);
    const a = await post(`${base()}/overflow:recover`, { request_id: 'same', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    const b = await post(`${base()}/overflow:recover`, { request_id: 'same', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } });
    expect(b.json()).toEqual(a.json());
    expect((await get(`${base()}/status`)).json().result.blocks).toHaveLength(1);
  });

  it('POST …/agents/{aid}:status - bad status - 400; another suffix - 404', async () => {
    await seed(1);
    const bad = await post(`${base()}/agents/a1:status`, { status: 'asleep' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.details.validation_errors[0]).toMatchObject({ loc: ['body', 'status'], type: 'literal_error' });
    expect((await post(`${base()}/agents/a1:pause`, { status: 'idle' })).statusCode).toBe(404);
    // Agent ids may contain ':' — only the last ':status' is the verb.
    expect((await post(`${base()}/agents/host:a1:status`, { status: 'running' })).json().result).toEqual({ agent_id: 'host:a1', budget: { used: 0, max: 1 } });
  });
});

describe('workspaces', () => {
  it("POST /api/v1/workspaces, PUT/GET /api/v1/workspaces/active - per caller - 200; unknown 404; another account's name is its own", async () => {
    const slug = `proj-${randomUUID().slice(0, 8)}`;
    const acme = { 'x-openviking-account': 'acme', 'x-openviking-user': 'alice' };
    const globex = { 'x-openviking-account': 'globex', 'x-openviking-user': 'eve' };
    expect((await get('/api/v1/workspaces/active', acme)).json()).toEqual({ status: 'ok', result: { workspace: 'default', persisted: false } });
    expect((await post('/api/v1/workspaces', { workspace: slug }, acme)).json()).toEqual({ status: 'ok', result: { workspace: slug, created: true } });
    expect((await post('/api/v1/workspaces', { workspace: slug }, acme)).json().result.created).toBe(false);
    expect((await put('/api/v1/workspaces/active', { workspace: slug }, acme)).json()).toEqual({ status: 'ok', result: { workspace: slug } });
    expect((await get('/api/v1/workspaces/active', acme)).json().result).toEqual({ workspace: slug, persisted: true });
    // Regression (issue 12, item 6): globex learnt the name existed (409) and could squat it.
    const foreign = await put('/api/v1/workspaces/active', { workspace: slug }, globex);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toMatchObject({ code: 'NOT_FOUND', details: { reason: 'WORKSPACE_NOT_FOUND' } });
    expect((await post('/api/v1/workspaces', { workspace: slug }, globex)).json()).toEqual({ status: 'ok', result: { workspace: slug, created: true } });
    const unknown = await put('/api/v1/workspaces/active', { workspace: `${slug}-x` }, acme);
    expect(unknown.statusCode).toBe(404);
    const bad = await post('/api/v1/workspaces', { workspace: 'no spaces please' }, acme);
    expect(bad.statusCode).toBe(400);
    expect((await put('/api/v1/workspaces/active', {}, acme)).json().error.details.validation_errors[0]).toMatchObject({ loc: ['body', 'workspace'], type: 'missing' });
  });
});

describe('the engine marker on the REST surface', () => {
  it('POST …/surface:project - after a recovery - the marker text leads with the engine lead and equals Decompress summary', async () => {
    await seed(12);
    const rec = (await post(`${base()}/overflow:recover`, { request_id: 'r', agent_id: 'a', failure: { code: CONTEXT_WINDOW_EXCEEDED } })).json().result;
    const marker = (await post(`${base()}/surface:project`)).json().result.messages.find((m: { class: string }) => m.class === 'checkpoint');
    expect(marker.text.startsWith(ENGINE_SUMMARY_LEAD)).toBe(true);
    const page = (await get(`${base()}/blocks/${rec.block.block_id}/originals`)).json().result;
    expect(page.summary).toBe(marker.text);
    expect(page.total).toBe(rec.block.hidden_count);
  });
});
