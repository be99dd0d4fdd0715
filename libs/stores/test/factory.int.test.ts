/**
 * openVectorStore with CTXMESH_VECTOR=qdrant, over real HTTP: against an in-memory model of
 * Qdrant (`qdrant-model.ts`) on port 0, and against a port where nothing listens.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { env } from '@ctxmesh/runtime';
import { makeRecord } from '../src/contract/vector-index.contract';
import { loadConfigWithStore, openVectorStore, storeSchema, VectorStoreUnavailableError } from '../src/factory';
import { IndexDimensionMismatchError } from '../src/ports/errors';
import { ModelError, QdrantModel } from './qdrant-model';

const schema = { ...storeSchema, SVC_PORT: env.port(0) };

/** The Qdrant model behind a real HTTP server on port 0, in Qdrant's `{result, status, time}` envelope. */
async function startModel(): Promise<{ url: string; server: Server; paths: string[] }> {
  const model = new QdrantModel();
  const paths: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      paths.push(`${req.method} ${path}`);
      try {
        const result = model.handle(req.method ?? '', path, raw === '' ? undefined : JSON.parse(raw));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ result, status: 'ok', time: 0 }));
      } catch (e) {
        const status = e instanceof ModelError ? e.status : 500;
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ status: { error: String((e as Error).message) }, time: 0 }));
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, paths };
}

describe('openVectorStore (qdrant)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxmesh-factory-q-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('openVectorStore - CTXMESH_VECTOR=qdrant - opens QDRANT_COLLECTION at the embedder’s dimension, no SQLite file', async () => {
    const q = await startModel();
    try {
      const cfg = loadConfigWithStore(schema, { CTXMESH_VECTOR: 'qdrant', QDRANT_URL: q.url, QDRANT_COLLECTION: 'factory_nodes', CTXMESH_DATA_DIR: dir, CTXMESH_LEXICAL_DIM: '128' });
      const store = await openVectorStore(cfg);
      try {
        expect(store.description).toBe(`qdrant ${q.url} collection factory_nodes`);
        expect(store.index.dimension).toBe(128);
        expect(q.paths).toContain('PUT /collections/factory_nodes');
        const embedder = new LexicalEmbedder({ dimension: 128 });
        await store.index.replaceDocument('viking://resources/q.md', [makeRecord(embedder, 'acme', 'viking://resources/q.md', 'stored in qdrant')]);
        expect(await store.index.stats('acme')).toEqual({ points: 1, documents: 1 });
      } finally {
        await store.close();
      }
      expect(existsSync(join(dir, 'ctxmesh.db'))).toBe(false);
      // The collection now has dimension 128: opening it at another one is refused as such.
      await expect(openVectorStore(cfg, 256)).rejects.toBeInstanceOf(IndexDimensionMismatchError);
    } finally {
      q.server.closeAllConnections();
      q.server.close();
    }
  });

  it('openVectorStore - qdrant configured but unreachable - VectorStoreUnavailableError, no embedded fallback', async () => {
    // Bind then release a port, so nothing listens on it.
    const probe = createServer().listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((done) => probe.close(() => done()));
    const cfg = loadConfigWithStore(schema, { CTXMESH_VECTOR: 'qdrant', QDRANT_URL: `http://127.0.0.1:${port}`, QDRANT_API_KEY: 'secret-key', CTXMESH_DATA_DIR: dir });
    const err = await openVectorStore(cfg).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(VectorStoreUnavailableError);
    expect((err as Error).message).toContain(`qdrant http://127.0.0.1:${port} collection ctxmesh_nodes`);
    expect((err as Error).message).not.toContain('secret-key');
    expect(existsSync(join(dir, 'ctxmesh.db'))).toBe(false);
  });
});
