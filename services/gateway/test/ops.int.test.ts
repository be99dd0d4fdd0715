/** Operations routes, headers and auth modes, over real gRPC fakes. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkHealth, closeHealthClients } from '@ctxmesh/rpc';
import { InProcEventBus } from '@ctxmesh/stores';
import { ConfigError } from '@ctxmesh/runtime';
import { eventually } from '@ctxmesh/testing';
import { EMPTY_SEARCH, harness, type Harness } from './fakes';
import { runReadiness } from '../src/routes/ops';
import { buildApp, startGateway } from '../src';
import pino from 'pino';

describe('operations', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ auth: { mode: 'api_key', keys: { 'k-alice': { accountId: 'acme', userId: 'alice' } } } });
  });
  afterAll(async () => {
    await h.close();
  });

  it('GET /health - auth headers in api_key mode but no key - 200 JSON with version', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/health', headers: { 'content-type': 'application/json', authorization: 'Bearer wrong' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ status: 'ok', healthy: true, version: '9.9.9', name: 'ctxmesh' });
    expect(res.headers['x-process-time']).toMatch(/^\d+\.\d+(e-\d+)?$/);
    expect(Number(res.headers['x-process-time'])).toBeGreaterThanOrEqual(0);
  });

  it('GET /health - request id rules - echo one valid id, else a fresh UUID', async () => {
    const echo = await h.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc.DEF:12-3_4' } });
    expect(echo.headers['x-request-id']).toBe('abc.DEF:12-3_4');
    const bad = await h.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'has space' } });
    expect(bad.headers['x-request-id']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const none = await h.app.inject({ method: 'GET', url: '/health' });
    expect(none.headers['x-request-id']).not.toBe(bad.headers['x-request-id']);
  });

  it('GET /metrics - after requests - Prometheus text with the route histogram', async () => {
    await h.app.inject({ method: 'GET', url: '/health' });
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toMatch(/ctxmesh_http_request_duration_seconds_count\{method="GET",route="\/health",status="200"\} \d+/);
  });

  it('GET /nowhere - unknown route - 404 NOT_FOUND envelope', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/nowhere?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ status: 'error', result: null, error: { code: 'NOT_FOUND', message: 'Route not found: GET /nowhere', details: {} }, telemetry: null, profile: null });
    expect(res.headers['x-request-id']).toBeDefined();
  });

  it('GET /%zz - malformed URL rejected before routing - 400 envelope with the usual headers', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/%zz', headers: { 'x-request-id': 'bad-url-1' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ status: 'error', error: { code: 'INVALID_ARGUMENT', details: { reason: 'FST_ERR_BAD_URL', request_id: 'bad-url-1' } } });
    expect(res.headers['x-request-id']).toBe('bad-url-1');
    expect(res.headers['x-process-time']).toBeDefined();
  });

  it('POST /api/v1/search/find - api_key mode without a key - 401 UNAUTHENTICATED', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', payload: { query: 'q' } });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('UNAUTHENTICATED');
  });

  it('POST /api/v1/search/find - api_key mode with an unknown key - 401 UNAUTHENTICATED', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'x-api-key': 'nope' }, payload: { query: 'q' } });
    expect(res.statusCode).toBe(401);
  });

  it('POST /api/v1/search/find - Bearer key with identity headers - 200 as the key owner, headers ignored', async () => {
    h.orch.script.search = async () => EMPTY_SEARCH;
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/search/find',
      headers: { authorization: 'Bearer k-alice', 'x-openviking-account': 'evil', 'x-openviking-user': 'mallory' },
      payload: { query: 'q', target_uri: 'viking://~/memories' },
    });
    expect(res.statusCode).toBe(200);
    expect(h.orch.search.at(-1)?.req.identity).toMatchObject({ accountId: 'acme', userId: 'alice', role: 1 });
    expect(h.orch.search.at(-1)?.req.targetUris).toEqual(['viking://user/alice/memories']);
  });

  it('POST /api/v1/search/find - X-API-Key and a wrong Bearer - 200 (X-API-Key wins)', async () => {
    h.orch.script.search = async () => EMPTY_SEARCH;
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'x-api-key': 'k-alice', authorization: 'Bearer wrong' }, payload: { query: 'q' } });
    expect(res.statusCode).toBe(200);
  });

  it('POST /api/v1/search/find - malformed JSON without a key - 400 before 401, as FastAPI parses first', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'content-type': 'application/json' }, payload: '{' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.details.validation_errors[0]).toMatchObject({ loc: ['body', 1], type: 'json_invalid' });
  });

  it('POST /api/v1/search/find - user role targeting another user - 403 PERMISSION_DENIED', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'x-api-key': 'k-alice' }, payload: { query: 'q', target_uri: 'viking://user/bob/memories' } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error.message).toContain('Access denied');
  });
});

describe('trusted and dev auth', () => {
  it('POST /api/v1/search/find - trusted mode - identity from headers, 401 without them', async () => {
    const h = await harness({ auth: { mode: 'trusted' } });
    try {
      h.orch.script.search = async () => EMPTY_SEARCH;
      const missing = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', payload: { query: 'q' } });
      expect(missing.statusCode).toBe(401);
      const ok = await h.app.inject({
        method: 'POST',
        url: '/api/v1/search/find',
        headers: { 'x-openviking-account': ' acme ', 'x-openviking-user': 'carol', 'x-openviking-role': 'admin' },
        payload: { query: 'q' },
      });
      expect(ok.statusCode).toBe(200);
      expect(h.orch.search.at(-1)?.req.identity).toMatchObject({ accountId: 'acme', userId: 'carol', role: 2 });
    } finally {
      await h.close();
    }
  });

  it('POST /api/v1/search/find - dev mode - identity headers honoured, default/default otherwise', async () => {
    const h = await harness({ auth: { mode: 'dev' } });
    try {
      h.orch.script.search = async () => EMPTY_SEARCH;
      await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'x-openviking-user': 'dave' }, payload: { query: 'q' } });
      await h.app.inject({ method: 'POST', url: '/api/v1/search/find', payload: { query: 'q' } });
      expect(h.orch.search.map((c) => [c.req.identity?.accountId, c.req.identity?.userId, c.req.identity?.role])).toEqual([
        ['default', 'dave', 3],
        ['default', 'default', 3],
      ]);
    } finally {
      await h.close();
    }
  });
});

describe('request logs', () => {
  it('one info line per answered request - method, URL, status, time and request id; the arrival only at debug', async () => {
    const h = await harness();
    const lines: Array<Record<string, unknown>> = [];
    const app = buildApp({
      log: pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) }),
      auth: { mode: 'dev' },
      deadlines: { defaultMs: 1000, maxMs: 1000 },
      orchestrator: null as never,
      sessions: null as never,
      bus: h.bus,
    });
    try {
      await app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'log-1' } });
      await app.inject({ method: 'GET', url: '/nowhere?x=1', headers: { 'x-request-id': 'log-2' } });
      const requests = lines.filter((l) => l.request_id === 'log-1' || l.request_id === 'log-2');
      expect(requests.map((l) => [l.msg, l.request_id])).toEqual([
        ['request completed', 'log-1'],
        ['request completed', 'log-2'],
      ]);
      expect(requests.map((l) => [(l.req as { method: string }).method, (l.req as { url: string }).url, (l.res as { statusCode: number }).statusCode])).toEqual([
        ['GET', '/health', 200],
        ['GET', '/nowhere?x=1', 404],
      ]);
      for (const l of requests) expect(typeof l.responseTime).toBe('number');
    } finally {
      await app.close();
      await h.close();
    }
  });
});

describe('GET /ready', () => {
  it('GET /ready - every downstream serving, then the orchestrator not serving - 200 then 503 naming it', async () => {
    const h = await harness();
    const app = buildApp({
      log: pino({ level: 'silent' }),
      auth: { mode: 'dev' },
      deadlines: { defaultMs: 1000, maxMs: 1000 },
      orchestrator: null as never,
      sessions: null as never,
      bus: h.bus,
      readiness: [
        { name: 'orchestrator', critical: true, check: () => checkHealth(h.orch.address, '', 500) },
        { name: 'sessions', critical: false, check: () => checkHealth(h.sess.address, '', 500) },
        { name: 'event_bus', critical: true, check: () => h.bus.ping() },
      ],
    });
    try {
      await eventually(() => checkHealth(h.orch.address, '', 500));
      const ok = await app.inject({ method: 'GET', url: '/ready' });
      expect(ok.statusCode).toBe(200);
      expect(ok.json()).toEqual({ status: 'ok', ready: true, checks: { orchestrator: true, sessions: true, event_bus: true } });

      h.sess.setReady(false);
      await eventually(async () => !(await checkHealth(h.sess.address, '', 500)));
      const degraded = await app.inject({ method: 'GET', url: '/ready' });
      expect(degraded.statusCode).toBe(200);
      expect(degraded.json().checks.sessions).toBe(false);

      // The probe Kubernetes uses names only the orchestrator; an unknown name is a 400.
      h.sess.setReady(true);
      await eventually(() => checkHealth(h.sess.address, '', 500));
      const scoped = await app.inject({ method: 'GET', url: '/ready?checks=orchestrator' });
      expect(scoped.json()).toEqual({ status: 'ok', ready: true, checks: { orchestrator: true } });
      const unknown = await app.inject({ method: 'GET', url: '/ready?checks=orchestrator,redis' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.message).toContain('redis');
      h.sess.setReady(false);
      await eventually(async () => !(await checkHealth(h.sess.address, '', 500)));

      h.orch.setReady(false);
      await eventually(async () => !(await checkHealth(h.orch.address, '', 500)));
      const down = await app.inject({ method: 'GET', url: '/ready' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toEqual({ status: 'error', ready: false, checks: { orchestrator: false, sessions: false, event_bus: true } });
    } finally {
      await app.close();
      await h.close();
    }
  });

  it('runReadiness - a throwing probe - counts as not ready', async () => {
    const r = await runReadiness([
      { name: 'a', critical: true, check: async () => true },
      { name: 'b', critical: true, check: () => Promise.reject(new Error('boom')) },
    ]);
    expect(r).toEqual({ ready: false, checks: { a: true, b: false } });
  });
});

describe('orchestrator down', () => {
  it('POST /api/v1/search/search - nothing listens at ORCHESTRATOR_ADDR - 503 UNAVAILABLE', async () => {
    const h = await harness({ orchestratorAddr: '127.0.0.1:1' });
    try {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/search', payload: { query: 'q', mode: 'context' } });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'error', result: null, error: { code: 'UNAVAILABLE', details: { reason: 'UNAVAILABLE', domain: 'orchestrator' } } });
    } finally {
      await h.close();
    }
  });
});

describe('startGateway', () => {
  afterAll(() => closeHealthClients());

  it('startGateway - port 0 with live downstreams - /health and /ready answer 200 over HTTP, stop is idempotent', async () => {
    const h = await harness();
    const bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
    const gw = await startGateway({ port: 0, log: pino({ level: 'silent' }), orchestratorAddr: h.orch.address, sessionsAddr: h.sess.address, bus });
    try {
      expect(gw.port).toBeGreaterThan(0);
      expect(gw.url).toBe(`http://127.0.0.1:${gw.port}`);
      const health = await fetch(`${gw.url}/health`, { headers: { authorization: 'Bearer x' } });
      expect(health.status).toBe(200);
      const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
      expect(await health.json()).toEqual({ status: 'ok', healthy: true, version: pkg.version, name: 'ctxmesh' });
      await eventually(async () => (await fetch(`${gw.url}/ready`)).status === 200);
      const ready = (await (await fetch(`${gw.url}/ready`)).json()) as { checks: unknown };
      expect(ready.checks).toEqual({ orchestrator: true, sessions: true, event_bus: true });
    } finally {
      await gw.stop();
      await gw.stop();
      await bus.close();
      await h.close();
    }
    await expect(fetch(`${gw.url}/health`)).rejects.toThrow();
  });

  it('startGateway - a busy port - ConfigError naming GATEWAY_PORT', async () => {
    const h = await harness();
    const bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
    const opts = { log: pino({ level: 'silent' }), orchestratorAddr: h.orch.address, sessionsAddr: h.sess.address, bus };
    const first = await startGateway({ ...opts, port: 0 });
    try {
      const err = await startGateway({ ...opts, port: first.port }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).problems).toEqual([
        `GATEWAY_PORT: port ${first.port} on 127.0.0.1 is already in use; set GATEWAY_PORT to a free port (or stop what listens there)`,
      ]);
    } finally {
      await first.stop();
      await bus.close();
      await h.close();
    }
  });
});
