import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderError, ProviderHttpError, ProviderUnavailableError } from '@ctxmesh/provider';
import {
  EmbedderAbortedError,
  EmbedderError,
  EmbedderHttpError,
  EmbedderResponseError,
  EmbedderTimeoutError,
  EmbedderUnavailableError,
  HttpEmbedder,
  embeddingsEndpoint,
} from './http';

type Handler = (body: { model: string; input: string[]; dimensions?: number }, req: IncomingMessage, res: ServerResponse) => void;

/** A fake embeddings server on port 0: embeds text `t` as [len(t), 1, 0]. */
async function startServer(handler: Handler): Promise<{ url: string; requests: Array<{ path: string; auth: string | undefined; body: any }>; server: Server }> {
  const requests: Array<{ path: string; auth: string | undefined; body: any }> = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      requests.push({ path: req.url ?? '', auth: req.headers.authorization, body });
      handler(body, req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, requests, server };
}

const okHandler: Handler = (body, _req, res) => {
  // Answer in reverse order with explicit indices, as some servers do.
  const data = body.input.map((t, index) => ({ object: 'embedding', index, embedding: [t.length, 1, 0] })).reverse();
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ object: 'list', data, model: body.model }));
};

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

describe('embeddingsEndpoint', () => {
  it('resolves base URLs to the embeddings path', () => {
    expect(embeddingsEndpoint('http://h:1/v1')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('http://h:1/')).toBe('http://h:1/v1/embeddings');
    expect(embeddingsEndpoint('http://h:1/v1/embeddings')).toBe('http://h:1/v1/embeddings');
  });
});

describe('HttpEmbedder', () => {
  it('batches inputs, sends model and key, and returns normalised vectors in input order', async () => {
    const srv = await startServer(okHandler);
    servers.push(srv.server);
    const e = new HttpEmbedder({ url: srv.url, apiKey: 'sk-test', model: 'm1', dimension: 3, batchSize: 2 });
    const texts = ['a', 'bbb', 'cc', 'dddd', 'e'];
    const out = await e.embed(texts);
    expect(srv.requests).toHaveLength(3);
    expect(srv.requests.every((r) => r.path === '/v1/embeddings' && r.auth === 'Bearer sk-test' && r.body.model === 'm1')).toBe(true);
    expect(srv.requests.map((r) => r.body.input.length).sort()).toEqual([1, 2, 2]);
    out.forEach((v, i) => {
      const n = Math.hypot(texts[i].length, 1);
      expect(Array.from(v)).toEqual([Math.fround(texts[i].length / n), Math.fround(1 / n), 0]);
    });
    expect(e.id).toBe('http:m1:3');
  });

  it('sends dimensions only when asked and no auth header without a key', async () => {
    const srv = await startServer(okHandler);
    servers.push(srv.server);
    await new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3, sendDimensions: true }).embed(['x']);
    expect(srv.requests[0].body.dimensions).toBe(3);
    expect(srv.requests[0].auth).toBeUndefined();
  });

  it('throws a retryable EmbedderHttpError on a 5xx and retries when configured', async () => {
    let calls = 0;
    const srv = await startServer((body, req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(503);
        res.end('overloaded');
        return;
      }
      okHandler(body, req, res);
    });
    servers.push(srv.server);
    const noRetry = new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3 });
    const err = await noRetry.embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderHttpError);
    expect((err as EmbedderHttpError).status).toBe(503);
    expect((err as EmbedderHttpError).retryable).toBe(true);
    expect((err as EmbedderHttpError).name).toBe('EmbedderHttpError');
    calls = 0;
    const retrying = new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3, maxRetries: 1 });
    await expect(retrying.embed(['x'])).resolves.toHaveLength(1);
    expect(calls).toBe(2);
  });

  it('marks a 400 as not retryable', async () => {
    const srv = await startServer((_b, _req, res) => {
      res.writeHead(400);
      res.end('{"error":"bad input"}');
    });
    servers.push(srv.server);
    const err = await new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3, maxRetries: 3 }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderHttpError);
    expect((err as EmbedderHttpError).retryable).toBe(false);
    expect((err as EmbedderHttpError).body).toContain('bad input');
    expect(srv.requests).toHaveLength(1);
  });

  it('rejects a vector of the wrong dimension with EmbedderResponseError', async () => {
    const srv = await startServer(okHandler);
    servers.push(srv.server);
    await expect(new HttpEmbedder({ url: srv.url, model: 'm', dimension: 4 }).embed(['x'])).rejects.toBeInstanceOf(EmbedderResponseError);
  });

  it('rejects a non-JSON body and a wrong count with EmbedderResponseError', async () => {
    const srv = await startServer((body, _req, res) => {
      res.writeHead(200);
      res.end(body.input[0] === 'json' ? 'not json' : JSON.stringify({ data: [] }));
    });
    servers.push(srv.server);
    const e = new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3 });
    await expect(e.embed(['json'])).rejects.toThrow(/not JSON/);
    await expect(e.embed(['count'])).rejects.toThrow(/expected 1 embeddings, got 0/);
  });

  it('times out a hanging request with EmbedderTimeoutError', async () => {
    const srv = await startServer(() => undefined);
    servers.push(srv.server);
    const err = await new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3, timeoutMs: 50 }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderTimeoutError);
    expect((err as EmbedderTimeoutError).timeoutMs).toBe(50);
  });

  it('reports a caller abort as EmbedderAbortedError, not a timeout', async () => {
    const srv = await startServer(() => undefined);
    servers.push(srv.server);
    const ac = new AbortController();
    const p = new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3, timeoutMs: 60_000 }).embed(['x'], { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('deadline')), 20);
    await expect(p).rejects.toBeInstanceOf(EmbedderAbortedError);
  });

  it('reports a refused connection as a retryable EmbedderUnavailableError', async () => {
    const srv = await startServer(okHandler);
    const url = srv.url;
    await new Promise((r) => srv.server.close(r));
    const err = await new HttpEmbedder({ url, model: 'm', dimension: 3 }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderUnavailableError);
    expect((err as EmbedderUnavailableError).retryable).toBe(true);
  });

  it("throws the provider client's error kinds, under the embedder's names", async () => {
    const srv = await startServer((_b, _req, res) => {
      res.writeHead(429);
      res.end('slow down');
    });
    servers.push(srv.server);
    const err = await new HttpEmbedder({ url: srv.url, model: 'm', dimension: 3 }).embed(['x']).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderHttpError);
    expect(err).toBeInstanceOf(EmbedderError);
    expect(err).toMatchObject({ name: 'EmbedderHttpError', message: 'embeddings endpoint answered HTTP 429', status: 429, retryable: true });
    const down = new EmbedderUnavailableError(new Error('ECONNREFUSED'));
    expect(down).toBeInstanceOf(ProviderUnavailableError);
    expect(down).toBeInstanceOf(ProviderError);
  });
});
