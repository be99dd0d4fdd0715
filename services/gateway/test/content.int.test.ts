/**
 * Content routes: writes and deletes through the event bus to a scripted indexer (the real
 * in-process bus, and once the real NATS JetStream bus), reads through a gRPC fake.
 */
import { indexer } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';
import { connectNats } from '@ctxmesh/runtime';
import { NatsEventBus, type EventBus } from '@ctxmesh/stores';
import { eventually, natsUrl, uniqueName } from '@ctxmesh/testing';
import pino from 'pino';
import { buildApp, orchestratorClient, sessionsClient } from '../src';
import { fakeIndexer, harness, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness({ now: () => 1_750_000_000_000 });
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.orch.script = {};
  h.orch.read.length = 0;
  h.indexer.ops.length = 0;
  h.indexer.script = () => ({ status: 'applied', contentHash: 'hash-1' });
});

const write = (body: unknown, headers: Record<string, string> = {}) =>
  h.app.inject({ method: 'POST', url: '/api/v1/content/write', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

describe('POST /api/v1/content/write', () => {
  it('POST /api/v1/content/write - no wait - 200 queued, WriteOp on ctxmesh.ingest.write keyed by URI', async () => {
    const res = await write({ uri: 'viking://~/memories/events/a.md', content: '# Summary\nshipped', tags: ['Team=Search'], valid_from: '2026-01-01' }, { 'x-workspace': 'proj' });
    expect(res.statusCode).toBe(200);
    const json = res.json();
    expect(json).toEqual({ status: 'ok', result: { uri: 'viking://user/default/memories/events/a.md', write_id: json.result.write_id, status: 'queued' } });
    await eventually(() => h.indexer.ops.length === 1);
    const got = h.indexer.ops[0];
    expect(got).toMatchObject({ subject: 'ctxmesh.ingest.write', id: json.result.write_id, key: 'viking://user/default/memories/events/a.md' });
    expect(got.op).toMatchObject({
      writeId: json.result.write_id,
      identity: { accountId: 'default', userId: 'default', workspace: 'proj' },
      uri: 'viking://user/default/memories/events/a.md',
      content: '# Summary\nshipped',
      mode: indexer.WriteMode.WRITE_MODE_REPLACE,
      validFromMs: Date.parse('2026-01-01T00:00:00.000Z'),
      validToMs: undefined,
      tags: ['team=search'],
      publishedAtMs: 1_750_000_000_000,
    });
  });

  it('POST /api/v1/content/write - wait true - 200 applied with the content hash once indexed', async () => {
    h.indexer.script = () => ({ status: 'applied', contentHash: 'sha256:abc' });
    const res = await write({ uri: 'viking://resources/docs/api.md', content: 'HTTP API', mode: 'append', wait: true, workspace: 'team-b' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: { uri: 'viking://resources/docs/api.md', write_id: expect.any(String), status: 'applied', content_hash: 'sha256:abc' } });
    expect(h.indexer.ops[0].op).toMatchObject({ mode: indexer.WriteMode.WRITE_MODE_APPEND, identity: { workspace: 'team-b' } });
  });

  it('POST /api/v1/content/write - wait true, indexer refuses create - 409 ALREADY_EXISTS', async () => {
    h.indexer.script = () => ({ status: 'failed', reason: 'ALREADY_EXISTS', message: '' });
    const res = await write({ uri: 'viking://resources/race.md', content: 'x', mode: 'create', wait: true });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({
      status: 'error',
      result: null,
      error: { code: 'ALREADY_EXISTS', message: 'URI already exists: viking://resources/race.md', details: { reason: 'ALREADY_EXISTS', domain: 'indexer', uri: 'viking://resources/race.md' } },
    });
  });

  it('POST /api/v1/content/write - wait true, indexer fails otherwise - status by reason', async () => {
    h.indexer.script = () => ({ status: 'failed', reason: 'INVALID_CONTENT', message: 'binary content is not indexable' });
    const res = await write({ uri: 'viking://resources/bin.md', content: '\u0000', wait: true });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'INVALID_ARGUMENT', message: 'binary content is not indexable' });
  });

  it('POST /api/v1/content/write - create on an existing URI without wait - 409 and nothing published', async () => {
    h.orch.script.readContent = async () => ({ text: 'existing abstract' });
    const res = await write({ uri: 'viking://resources/exists.md', content: 'x', mode: 'create' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'ALREADY_EXISTS', details: { uri: 'viking://resources/exists.md' } });
    expect(h.orch.read[0].req).toMatchObject({ uri: 'viking://resources/exists.md', tier: 'abstract' });
    // Give a wrongly published op time to arrive before asserting none did.
    await h.app.inject({ method: 'POST', url: '/api/v1/content/write', payload: { uri: 'viking://resources/marker.md', content: 'm' } });
    await eventually(() => h.indexer.ops.length === 1);
    expect(h.indexer.ops.map((o) => o.op.uri)).toEqual(['viking://resources/marker.md']);
  });

  it('POST /api/v1/content/write - create on an absent URI - 200 queued with mode CREATE', async () => {
    const res = await write({ uri: 'viking://resources/new.md', content: 'x', mode: 'create' });
    expect(res.statusCode).toBe(200);
    expect(h.orch.read).toHaveLength(1);
    await eventually(() => h.indexer.ops.length === 1);
    expect(h.indexer.ops[0].op.mode).toBe(indexer.WriteMode.WRITE_MODE_CREATE);
  });

  it('POST /api/v1/content/write - wait true, indexer never answers within the budget - 504 saying the write is queued', async () => {
    h.indexer.script = () => null;
    const res = await write({ uri: 'viking://resources/slow.md', content: 'x', wait: true }, { 'x-request-timeout-ms': '300' });
    expect(res.statusCode).toBe(504);
    const json = res.json();
    expect(json.error).toMatchObject({ code: 'DEADLINE_EXCEEDED', details: { reason: 'WRITE_PENDING', uri: 'viking://resources/slow.md' } });
    expect(json.error.message).toContain('queued');
    expect(h.indexer.ops.map((o) => o.op.writeId)).toEqual([json.error.details.write_id]);
  });

  it.each<[string, number, string, unknown]>([
    ['a relative URI', 400, 'INVALID_URI', { uri: 'resources/a.md', content: 'x' }],
    ['an unknown scope', 400, 'INVALID_URI', { uri: 'viking://elsewhere/a.md', content: 'x' }],
    ['a bad mode', 400, 'INVALID_ARGUMENT', { uri: 'viking://resources/a.md', content: 'x', mode: 'upsert' }],
    ['a missing content', 400, 'INVALID_ARGUMENT', { uri: 'viking://resources/a.md' }],
    ['an unknown field', 400, 'INVALID_ARGUMENT', { uri: 'viking://resources/a.md', content: 'x', force: true }],
    // The kernel's write rules, which the indexer applies too: refused here, before the bus.
    ['a passage URI', 400, 'INVALID_URI', { uri: 'viking://resources/a.md#p1', content: 'x' }],
    ['an empty validity interval', 400, 'INVALID_ARGUMENT', { uri: 'viking://resources/a.md', content: 'x', valid_from: '2026-01-01', valid_to: '2026-01-01' }],
  ])('POST /api/v1/content/write - %s - %p %s and nothing published', async (_name, status, code, body) => {
    const res = await write(body);
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
    expect(h.indexer.ops).toHaveLength(0);
  });

  it('POST /api/v1/content/write - create existence check cannot reach the orchestrator - 503 and nothing published', async () => {
    h.orch.script.readContent = async () => {
      throw new CtxError(Code.UNAVAILABLE, 'TIER_READER_DOWN', 'tier-reader unavailable');
    };
    const res = await write({ uri: 'viking://resources/maybe.md', content: 'x', mode: 'create' });
    expect(res.statusCode).toBe(503);
    expect(h.indexer.ops).toHaveLength(0);
  });
});

describe('DELETE /api/v1/fs', () => {
  it('DELETE /api/v1/fs - a directory, wait true - 200 applied with a DELETE op', async () => {
    h.indexer.script = (op) => ({ status: 'applied', contentHash: '', nodes: op.uri.length });
    const res = await h.app.inject({ method: 'DELETE', url: '/api/v1/fs?uri=viking%3A%2F%2F~%2Fresources%2Fdocs&wait=true', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ uri: 'viking://user/default/resources/docs', status: 'applied' });
    expect(h.indexer.ops[0].op).toMatchObject({ uri: 'viking://user/default/resources/docs', mode: indexer.WriteMode.WRITE_MODE_DELETE, content: '' });
  });

  it('DELETE /api/v1/fs - unknown node, wait true - 404 from the indexer', async () => {
    h.indexer.script = () => ({ status: 'failed', reason: 'NOT_FOUND', message: 'no such node: viking://resources/ghost' });
    const res = await h.app.inject({ method: 'DELETE', url: '/api/v1/fs?uri=viking://resources/ghost&wait=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'no such node: viking://resources/ghost' });
  });

  it('DELETE /api/v1/fs - no uri - 400 Field required at query.uri', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/api/v1/fs' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toBe('Invalid request parameters: query.uri: Field required');
  });

  it('DELETE /api/v1/fs - a scope root - 400 INVALID_URI', async () => {
    const res = await h.app.inject({ method: 'DELETE', url: '/api/v1/fs?uri=viking://resources' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_URI');
  });
});

describe('GET /api/v1/content/{read,abstract,overview}', () => {
  it.each(['read', 'abstract', 'overview'])('GET /api/v1/content/%s - known URI via ~ alias - 200 result string', async (tier) => {
    h.orch.script.readContent = async (req) => ({ text: `${req.tier} of ${req.uri}` });
    const res = await h.app.inject({ method: 'GET', url: `/api/v1/content/${tier}?uri=viking://~/memories/events/a.md`, headers: { 'content-type': 'application/json', 'x-openviking-actor-peer': 'p1' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'ok', result: `${tier} of viking://user/default/memories/events/a.md` });
    expect(h.orch.read[0].req.identity).toMatchObject({ userId: 'default', actorPeerId: 'p1' });
  });

  it('GET /api/v1/content/read - unknown URI - 404 NOT_FOUND envelope', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/content/read?uri=viking://resources/ghost.md' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 'error', result: null, error: { code: 'NOT_FOUND', message: 'no such node: viking://resources/ghost.md' } });
  });

  it('GET /api/v1/content/read - malformed URI - 400 INVALID_URI without a downstream call', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/api/v1/content/read?uri=viking://user/memories/x' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_URI');
    expect(h.orch.read).toHaveLength(0);
  });
});

describe('event bus failures', () => {
  it('POST /api/v1/content/write - the bus refuses the publish - 503 UNAVAILABLE', async () => {
    const local = await harness();
    try {
      await local.bus.close();
      const res = await local.app.inject({ method: 'POST', url: '/api/v1/content/write', payload: { uri: 'viking://resources/a.md', content: 'x' } });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'BUS_UNAVAILABLE' } });
    } finally {
      await local.close();
    }
  });
});

describe('NATS JetStream bus', () => {
  it('POST /api/v1/content/write - wait true over NATS - 200 applied', async () => {
    const tag = uniqueName('gw').replace(/-/g, '_');
    const nc = await connectNats(natsUrl(), 'gateway-test');
    const bus = await NatsEventBus.create(nc, {
      stream: `T_${tag}`,
      subjects: [`${tag}.ingest.>`],
      deadLetterSubject: `${tag}.dlq`,
      doneSubjectPrefix: `${tag}.done`,
      storage: 'memory',
    });
    // The gateway publishes on ctxmesh.ingest.write; map it into this test's own stream.
    const scoped: EventBus = {
      publish: (m, o) => bus.publish({ ...m, subject: m.subject.replace(/^ctxmesh\./, `${tag}.`) }, o),
      consume: (o, fn) => bus.consume({ ...o, subjects: o.subjects.map((s) => s.replace(/^ctxmesh\./, `${tag}.`)) }, fn),
      consumeBatches: (o, fn) => bus.consumeBatches({ ...o, subjects: o.subjects.map((s) => s.replace(/^ctxmesh\./, `${tag}.`)) }, fn),
      awaitDone: (id, signal) => bus.awaitDone(id, signal),
      notifyDone: (n) => bus.notifyDone(n),
      deadLetters: (limit) => bus.deadLetters(limit),
      deadLetterCount: () => bus.deadLetterCount(),
      putReceipt: (r, o) => bus.putReceipt(r, o),
      getReceipt: (id) => bus.getReceipt(id),
      ping: () => bus.ping(),
      close: () => bus.close(),
    };
    const idx = await fakeIndexer(scoped, `idx_${tag}`);
    idx.script = () => ({ status: 'applied', contentHash: 'nats-hash' });
    const orchestrator = orchestratorClient(h.orch.address);
    const sessions = sessionsClient(h.sess.address);
    const app = buildApp({ log: pino({ level: 'silent' }), auth: { mode: 'dev' }, deadlines: { defaultMs: 10_000, maxMs: 10_000 }, orchestrator, sessions, bus: scoped });
    try {
      const res = await app.inject({ method: 'POST', url: '/api/v1/content/write', payload: { uri: 'viking://resources/nats.md', content: 'over nats', wait: true } });
      expect(res.statusCode).toBe(200);
      expect(res.json().result).toMatchObject({ uri: 'viking://resources/nats.md', status: 'applied', content_hash: 'nats-hash' });
      expect(idx.ops.map((o) => [o.op.uri, o.key])).toEqual([['viking://resources/nats.md', 'viking://resources/nats.md']]);
    } finally {
      await app.close();
      orchestrator.close();
      sessions.close();
      await idx.stop();
      await bus.close();
      // The JetStream API over core NATS: this package does not depend on @nats-io/jetstream.
      for (const stream of NatsEventBus.streamsOf(`T_${tag}`)) {
        await nc.request(`$JS.API.STREAM.DELETE.${stream}`, '', { timeout: 2000 }).catch(() => undefined);
      }
      await nc.close();
    }
  });
});
