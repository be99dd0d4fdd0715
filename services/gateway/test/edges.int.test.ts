/**
 * HTTP edges a new user meets (issue 14 item 5): the wrong media type, the exact keys of the
 * validation and domain envelopes (issue 19 item 5), the `/metrics` route labels and a malformed `X-Request-Timeout-Ms`.
 */
import { harness, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness();
});
afterAll(async () => {
  await h.close();
});
beforeEach(() => {
  h.orch.script = {};
  h.orch.assemble.length = 0;
});

describe('gateway HTTP edges', () => {
  it.each([
    ['/api/v1/search/search', 'text/plain'],
    ['/api/v1/search/find', 'application/x-www-form-urlencoded'],
    ['/api/v1/content/write', 'multipart/form-data; boundary=x'],
    ['/api/v1/retrieve', 'text/plain; charset=utf-8'],
  ])('POST %s - Content-Type %s - 415 naming application/json', async (url, contentType) => {
    const res = await h.app.inject({ method: 'POST', url, headers: { 'content-type': contentType, 'x-request-id': 'ct-1' }, payload: '{"query":"q"}' });
    expect(res.statusCode).toBe(415);
    const json = res.json();
    expect(Object.keys(json)).toEqual(['status', 'result', 'error', 'telemetry', 'profile']);
    expect(json.error.message).toContain('application/json');
    expect(json.error.details).toMatchObject({ reason: 'UNSUPPORTED_MEDIA_TYPE', request_id: 'ct-1', content_type: contentType, accepted: ['application/json'] });
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('POST /api/v1/search/search - JSON media types and none - parsed as JSON', async () => {
    for (const ct of ['application/json', 'application/json; charset=utf-8', 'application/vnd.api+json']) {
      const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/search', headers: { 'content-type': ct }, payload: '{"query":"q","bogus":1}' });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details.validation_errors[0].loc).toEqual(['body', 'bogus']);
    }
  });

  it('POST /api/v1/search/search - a validation error - exactly status and error (§1.7 variant 1, no null members)', async () => {
    // The issue's own body: max_tokens below the minimum.
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/search', headers: { 'content-type': 'application/json' }, payload: '{"query":"x","mode":"context","max_tokens":1}' });
    expect(res.statusCode).toBe(400);
    const json = res.json();
    expect(Object.keys(json)).toEqual(['status', 'error']);
    expect(Object.keys(json.error)).toEqual(['code', 'message', 'details']);
    expect(Object.keys(json.error.details)).toEqual(['validation_errors']);
    expect(json.error.details.validation_errors[0].loc).toEqual(['body', 'max_tokens']);
    const unknown = await h.app.inject({ method: 'POST', url: '/api/v1/search/search', headers: { 'content-type': 'application/json' }, payload: '{"query":"q","bogus":1}' });
    expect(Object.keys(unknown.json())).toEqual(['status', 'error']);
  });

  it('a domain error and an unknown route - every member, nulls included (§1.7 variant 2)', async () => {
    const domain = await h.app.inject({ method: 'POST', url: '/api/v1/search/find', headers: { 'content-type': 'application/json' }, payload: '{"query":"  "}' });
    const missing = await h.app.inject({ method: 'GET', url: '/nowhere' });
    expect(domain.statusCode).toBe(400);
    for (const json of [domain.json(), missing.json()]) {
      expect(Object.keys(json)).toEqual(['status', 'result', 'error', 'telemetry', 'profile']);
      expect([json.result, json.telemetry, json.profile]).toEqual([null, null, null]);
      expect(Object.keys(json.error)).toEqual(['code', 'message', 'details']);
    }
  });

  it.each(['abc', '5s', '1e3', '-5', '1500.5'])('POST /api/v1/search/search - X-Request-Timeout-Ms %p - 400 naming the header', async (value) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/v1/search/search',
      headers: { 'content-type': 'application/json', 'x-request-timeout-ms': value },
      payload: '{"query":"q","mode":"context"}',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('INVALID_ARGUMENT');
    expect(res.json().error.message).toContain('X-Request-Timeout-Ms');
    expect(res.json().error.details).toEqual({ header: 'X-Request-Timeout-Ms', value });
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('GET /metrics - after requests on parameterised routes - one documented spelling per route', async () => {
    const sid = 'edge-sess';
    await h.app.inject({ method: 'POST', url: `/api/v1/sessions/${sid}/surface:project`, headers: { 'content-type': 'application/json' }, payload: '{"bogus":1}' });
    await h.app.inject({ method: 'POST', url: `/api/v1/sessions/${sid}/agents/a1:status`, headers: { 'content-type': 'application/json' }, payload: '{"bogus":1}' });
    await h.app.inject({ method: 'POST', url: `/api/v1/sessions/${sid}/messages`, headers: { 'content-type': 'application/json' }, payload: '{"bogus":1}' });
    await h.app.inject({ method: 'GET', url: '/api/v1/traces/t-1' });
    const text = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    const routes = new Set([...text.matchAll(/ctxmesh_http_request_duration_seconds_count\{method="[A-Z]+",route="([^"]+)"/g)].map((m) => m[1]));
    for (const r of ['/api/v1/sessions/{sid}/surface:project', '/api/v1/sessions/{sid}/agents/{aid}:status', '/api/v1/sessions/{sid}/messages', '/api/v1/traces/{id}']) {
      expect(routes.has(r)).toBe(true);
    }
    // No router syntax leaks into a label.
    for (const r of routes) expect(r).not.toMatch(/::|\/:[A-Za-z]/);
  });
});
