/** `GET /inspect`: the page, its assets and its config, served without auth, kept to this origin. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { harness, type Harness } from './fakes';
import { INSPECT_CSP, INSPECT_DIR } from '../src/routes/inspect';

describe('the inspector routes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ auth: { mode: 'api_key', keys: { k1: { accountId: 'acme', userId: 'ana' } } } });
  });
  afterAll(async () => h.close());

  it('GET /inspect - api_key mode without a key - 200 HTML with a self-only CSP, every script and style local', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/inspect' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toBe(INSPECT_CSP);
    expect(INSPECT_CSP).toMatch(/default-src 'none'/);
    const refs = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const r of refs) expect(r.startsWith('/inspect/assets/')).toBe(true);
  });

  it.each([
    ['inspect.js', /^text\/javascript/],
    ['view.js', /^text\/javascript/],
    ['inspect.css', /^text\/css/],
  ])('GET /inspect/assets/%s - 200, the file as it is', async (file, type) => {
    const res = await h.app.inject({ method: 'GET', url: `/inspect/assets/${file}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(type);
    expect(res.body).toBe(readFileSync(join(INSPECT_DIR, file), 'utf8'));
  });

  it('GET /inspect/assets/<anything else> - 404, nothing else of the directory is served', async () => {
    for (const f of ['tsconfig.json', 'index.html', '..%2Fpackage.json', 'nope.js']) {
      expect([f, (await h.app.inject({ method: 'GET', url: `/inspect/assets/${f}` })).statusCode]).toEqual([f, 404]);
    }
  });

  it('GET /inspect/config.json - the auth mode the page must use, and no secret', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/inspect/config.json' });
    expect(res.json()).toEqual({ name: 'ctxmesh', version: '9.9.9', auth_mode: 'api_key' });
    expect(res.body).not.toContain('k1');
  });

  it('the page data needs the key: the API it calls answers 401 without one', async () => {
    const res = await h.app.inject({ method: 'POST', url: '/api/v1/search/search', headers: { 'content-type': 'application/json' }, payload: '{"query":"q","mode":"context","explain":true}' });
    expect(res.statusCode).toBe(401);
  });
});
