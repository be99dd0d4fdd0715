/**
 * Abuse at the gateway (issue 12, items 3, 4 and 9): out-of-range numbers, deep nesting, huge
 * strings and bodies, slow senders. Each is a 4xx naming the field or the limit — never a 500,
 * never a hang. Over real gRPC fakes, so a number that cannot be serialised would surface.
 */
import { request as httpRequest } from 'node:http';
import { harness, EMPTY_SEARCH, type Harness } from './fakes';

let h: Harness;
beforeAll(async () => {
  h = await harness({ limits: { bodyLimitBytes: 1024 * 1024, maxDocumentBytes: 64 * 1024, receive: { headersMs: 500, requestMs: 1000 } } });
  h.orch.script.search = async () => EMPTY_SEARCH;
});
afterAll(async () => h.close());

const post = (url: string, payload: unknown) =>
  h.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

const locs = (body: { error: { details: { validation_errors?: Array<{ loc: unknown[] }> } } }) => (body.error.details.validation_errors ?? []).map((e) => e.loc.join('.'));

describe('gateway limits', () => {
  // Regression (issue 12, item 4): these failed proto serialisation with a 500.
  it.each([
    ['/api/v1/search/find', { query: 'x', limit: 2147483648 }, 'body.limit'],
    ['/api/v1/search/find', { query: 'x', limit: -1e308 }, 'body.limit'],
    ['/api/v1/search/find', { query: 'x', node_limit: 9007199254740993 }, 'body.node_limit'],
    ['/api/v1/search/find', { query: 'x', level: 1e308 }, 'body.level.int'],
    ['/api/v1/search/find', { query: 'x', level: [1, 4294967296] }, 'body.level.list[int].1'],
    ['/api/v1/search/search', { query: 'x', mode: 'context', time_budget_ms: 1e12 }, 'body.time_budget_ms'],
    ['/api/v1/search/search', { query: 'x', mode: 'context', quotas: { memory: 2 ** 40 } }, 'body.quotas.memory'],
    ['/api/v1/search/recall', { query: 'x', max_chars: 1e308 }, 'body.max_chars'],
    ['/api/v1/search/find', { query: 'x', limit: '99999999999999999999' }, 'body.limit'],
  ])('POST %s %j - out-of-range integer - 400 naming the field', async (url, body, loc) => {
    const res = await post(url, body);
    expect(res.statusCode).toBe(400);
    expect(locs(res.json())).toContain(loc);
  });

  // Regression (issue 12, item 4): these overflowed the stack (a 500).
  it.each([
    ['/api/v1/search/find', '{"query":"x","filter":' + '{"op":"and","conds":['.repeat(5000) + ']}'.repeat(5000) + '}', 'body.filter'],
    ['/api/v1/sessions/s1/events', '{"events":[' + '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000) + ']}', 'body.events'],
    ['/api/v1/sessions/s1/surface::project', '{"window":{"context_tokens":' + '['.repeat(10_000) + ']'.repeat(10_000) + '}}', 'body.window'],
    ['/api/v1/search/find', '{"filter":' + '['.repeat(100_000), 'body.filter'],
    ['/api/v1/search/find', '['.repeat(100_000) + ']'.repeat(100_000), 'body'],
  ])('POST %s - deep nesting - 400 naming the field and the depth limit', async (url, text, loc) => {
    const res = await post(url, text);
    expect(res.statusCode).toBe(400);
    expect(locs(res.json())).toEqual([loc]);
    expect(res.json().error.message).toContain('at most 32 levels');
  });

  // Regression: a filter node that is not an object inside an "and" made the gateway's
  // flattening of nested ands read `null.op` (a 500) before the filter was checked.
  it.each([
    [{ op: 'and', conds: [null] }, 'filter.conds[0]'],
    [{ op: 'and', conds: [{ op: 'and', conds: [7] }] }, 'filter.conds[0].conds[0]'],
    [{ op: 'and', conds: ['x', { op: 'must', field: 'context_type', conds: ['memory'] }] }, 'filter.conds[0]'],
  ])('POST /api/v1/search/find filter %j - a node that is not an object - 400 naming where', async (filter, where) => {
    for (const url of ['/api/v1/search/find', '/api/v1/search/search']) {
      const res = await post(url, { query: 'x', filter, ...(url.endsWith('search') ? { mode: 'context' } : {}) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.message).toContain(`${where}: a filter node must be an object`);
    }
  });

  // Regression (issue 12, item 3): a 1 MB query and a 100,000-character workspace were accepted.
  it.each([
    ['/api/v1/search/find', { query: 'q'.repeat(500_000) }, 'body.query', 32768],
    ['/api/v1/workspaces', { workspace: 'w'.repeat(100_000) }, 'body.workspace', 4096],
    ['/api/v1/search/search', { query: 'x', session_id: 's'.repeat(5000) }, 'body.session_id', 4096],
    ['/api/v1/search/find', { query: 'x', target_uri: ['viking://resources/' + 'a'.repeat(5000)] }, 'body.target_uri.0', 4096],
    ['/api/v1/retrieve', { query: 'x', subject: 'u'.repeat(10_000) }, 'body.subject', 4096],
  ])('POST %s - huge string - 400 naming the field and the limit', async (url, body, loc, limit) => {
    const res = await post(url, body);
    expect(res.statusCode).toBe(400);
    expect(locs(res.json())).toEqual([loc]);
    expect(res.json().error.message).toContain(`at most ${limit} characters`);
  });

  it('POST /api/v1/content/write - a document over the limit - 400 naming content and the limit; the largest one is queued', async () => {
    const big = await post('/api/v1/content/write', { uri: 'viking://resources/big.md', content: 'x'.repeat(64 * 1024 + 1) });
    expect(big.statusCode).toBe(400);
    expect(locs(big.json())).toEqual(['body.content']);
    expect(big.json().error.message).toContain('65536 bytes');
    const ok = await post('/api/v1/content/write', { uri: 'viking://resources/big.md', content: 'x'.repeat(64 * 1024) });
    expect(ok.statusCode).toBe(200);
  });

  describe('over a socket', () => {
    let base: URL;
    beforeAll(async () => {
      await h.app.listen({ port: 0, host: '127.0.0.1' });
      const a = h.app.server.address() as { port: number };
      base = new URL(`http://127.0.0.1:${a.port}`);
    });

    const send = (headers: Record<string, string>, write: (req: ReturnType<typeof httpRequest>) => void) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest({ host: base.hostname, port: base.port, path: '/api/v1/content/write', method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'EPIPE' || err.code === 'ECONNRESET' ? undefined : reject(err)));
        write(req);
      });

    // Regression (issue 12, item 9 and 14.5): a chunked 100 MB body lost its connection without an answer.
    it('a chunked body past the limit - 413 naming the limit', async () => {
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const res = await send({ 'transfer-encoding': 'chunked' }, (req) => {
        req.write('{"uri":"viking://resources/c.md","content":"');
        let sent = 0;
        const pump = () => {
          while (sent < 1600) {
            sent++;
            if (req.destroyed) return;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          req.end('"}');
        };
        pump();
      });
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'RESOURCE_EXHAUSTED', details: { reason: 'BODY_TOO_LARGE', limit_bytes: 1024 * 1024 } } });
      expect(JSON.parse(res.body).error.message).toContain('1048576 bytes');
    });

    // Regression (issue 12, item 9): a body trickling in held its connection forever.
    it('a body that trickles in - answered 408 and closed once the receive timeout passes', async () => {
      let timer: NodeJS.Timeout | undefined;
      const res = await send({ 'content-length': '100000' }, (req) => {
        timer = setInterval(() => !req.destroyed && req.write('a'), 50);
      });
      clearInterval(timer);
      expect(res.status).toBe(408);
      // The same envelope as every other error, naming the limits that applied.
      expect(JSON.parse(res.body)).toMatchObject({ status: 'error', error: { code: 'REQUEST_TIMEOUT', details: { request_timeout_ms: expect.any(Number) } } });
    }, 20_000);
  });
});
