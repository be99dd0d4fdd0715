import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLoad } from './throughput';

describe('runLoad', () => {
  let server: Server;
  let url: string;
  let bodies = 0;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        bodies++;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('takes a spec larger than the argument limit (the docs profile query set)', async () => {
    // ~4 MB of bodies: more than Linux lets one argv carry (spawn failed with E2BIG).
    const query = 'deploy the gateway with blue green releases and roll back on error '.repeat(14);
    const spec = { url, connections: 2, seconds: 1, path: '/api/v1/search/search', bodies: Array.from({ length: 4000 }, (_, i) => ({ query: `${i} ${query}`, mode: 'context' })) };
    expect(JSON.stringify(spec).length).toBeGreaterThan(3_000_000);
    const run = await runLoad(spec, {});
    expect(run.requests).toBeGreaterThan(0);
    expect(run.errors + run.non2xx).toBe(0);
    expect(bodies).toBeGreaterThanOrEqual(run.requests);
  }, 30_000);
});
