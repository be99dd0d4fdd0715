import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, env } from '@ctxmesh/runtime';
import { openEmbeddedDb } from './embedded/db';
import { DB_FILE, createEmbedder, loadConfigWithStore, looseStoreConfig, openVectorStore, storeProblems, storeSchema, warmSoon } from './factory';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { makeRecord } from './contract/vector-index.contract';
import { IndexDimensionMismatchError } from './ports/errors';

/** A service schema composing the shared one, as gather, tier-reader and the indexer do. */
const schema = { SVC_PORT: env.port(5000), ...storeSchema };

function problemsOf(e: Record<string, string>): string[] {
  try {
    loadConfigWithStore(schema, e);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('loadConfigWithStore', () => {
  it('defaults to the embedded store in ./.ctxmesh and the 256-dimension lexical embedder, beside the service’s own variables', () => {
    const cfg = loadConfigWithStore(schema, {});
    expect(cfg).toEqual({
      SVC_PORT: 5000,
      CTXMESH_VECTOR: 'embedded',
      CTXMESH_DATA_DIR: './.ctxmesh',
      QDRANT_COLLECTION: 'ctxmesh_nodes',
      CTXMESH_EMBEDDINGS_TIMEOUT_MS: 10_000,
      CTXMESH_LEXICAL_DIM: 256,
      CTXMESH_ANN_MIN_ROWS: 600_000,
      CTXMESH_ANN_EF: 2048,
    });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it('reads the HNSW threshold and ef, and lists both when they are out of range', () => {
    expect(loadConfigWithStore(schema, { CTXMESH_ANN_MIN_ROWS: '50000', CTXMESH_ANN_EF: '512' })).toMatchObject({ CTXMESH_ANN_MIN_ROWS: 50_000, CTXMESH_ANN_EF: 512 });
    const problems = problemsOf({ CTXMESH_ANN_MIN_ROWS: '0', CTXMESH_ANN_EF: 'lots' });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^CTXMESH_ANN_MIN_ROWS: /);
    expect(problems[1]).toBe('CTXMESH_ANN_EF: must be an integer (got "lots")');
  });

  it('reads the one set of names (CTXMESH_EMBEDDINGS_DIM, CTXMESH_LEXICAL_DIM)', () => {
    const cfg = loadConfigWithStore(schema, {
      CTXMESH_VECTOR: 'qdrant',
      QDRANT_URL: 'http://qdrant:6333',
      QDRANT_COLLECTION: 'nodes',
      CTXMESH_EMBEDDINGS_URL: 'http://emb:8080/v1',
      CTXMESH_EMBEDDINGS_MODEL: 'bge-m3',
      CTXMESH_EMBEDDINGS_DIM: '1024',
      CTXMESH_LEXICAL_DIM: '512',
    });
    expect(cfg).toMatchObject({ QDRANT_URL: 'http://qdrant:6333', QDRANT_COLLECTION: 'nodes', CTXMESH_EMBEDDINGS_DIM: 1024, CTXMESH_LEXICAL_DIM: 512 });
  });

  it('lists the rules across variables together', () => {
    expect(problemsOf({ CTXMESH_VECTOR: 'qdrant', CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_LEXICAL_DIM: '300' })).toEqual([
      'QDRANT_URL: required when CTXMESH_VECTOR=qdrant',
      'CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set',
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
      'CTXMESH_LEXICAL_DIM: must be a power of two (got 300)',
    ]);
  });

  it('reports the schema’s problems first, then the rules across variables', () => {
    expect(problemsOf({ SVC_PORT: 'eighty', CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_EMBEDDINGS_MODEL: 'm', CTXMESH_LEXICAL_DIM: 'x' })).toEqual([
      'SVC_PORT: must be an integer (got "eighty")',
      'CTXMESH_LEXICAL_DIM: must be an integer (got "x")',
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
    ]);
  });

  it('ignores the old spellings: CTXMESH_EMBEDDINGS_DIMENSION does not satisfy the endpoint rule', () => {
    expect(problemsOf({ CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_EMBEDDINGS_MODEL: 'm', CTXMESH_EMBEDDINGS_DIMENSION: '768' })).toEqual([
      'CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set',
    ]);
  });
});

describe('storeProblems / looseStoreConfig', () => {
  it('finds nothing wrong with the defaults', () => {
    expect(storeProblems(looseStoreConfig({}))).toEqual([]);
  });

  it('leaves unparsable numbers to the schema (NaN breaks no cross-variable rule)', () => {
    const loose = looseStoreConfig({ CTXMESH_LEXICAL_DIM: 'many', CTXMESH_EMBEDDINGS_DIM: '1.5' });
    expect(loose.CTXMESH_LEXICAL_DIM).toBeNaN();
    expect(loose.CTXMESH_EMBEDDINGS_DIM).toBeNaN();
    expect(storeProblems(loose)).toEqual([]);
  });
});

describe('createEmbedder', () => {
  it('builds the lexical embedder at CTXMESH_LEXICAL_DIM without an endpoint', () => {
    const e = createEmbedder(loadConfigWithStore(schema, { CTXMESH_LEXICAL_DIM: '128' }));
    expect([e.id, e.dimension]).toEqual(['lexical-v1-d128', 128]);
  });

  it('builds the endpoint embedder at the model’s dimension when CTXMESH_EMBEDDINGS_URL is set', () => {
    const e = createEmbedder(loadConfigWithStore(schema, { CTXMESH_EMBEDDINGS_URL: 'http://emb:8080', CTXMESH_EMBEDDINGS_MODEL: 'bge-m3', CTXMESH_EMBEDDINGS_DIM: '1024' }));
    expect([e.id, e.dimension]).toEqual(['http:bge-m3:1024', 1024]);
  });
});

describe('openVectorStore (embedded)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxmesh-factory-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the data dir and DB_FILE in it, at the configured embedder’s dimension by default', async () => {
    const dataDir = join(dir, 'nested', 'data');
    const store = await openVectorStore(loadConfigWithStore(schema, { CTXMESH_DATA_DIR: dataDir, CTXMESH_LEXICAL_DIM: '128' }));
    try {
      expect(store.index.dimension).toBe(128);
      expect(store.description).toBe(`embedded ${join(dataDir, DB_FILE)}`);
      expect(existsSync(join(dataDir, 'ctxmesh.db'))).toBe(true);
      expect(await store.index.ping()).toBe(true);
    } finally {
      await store.close();
    }
    expect(await store.index.ping()).toBe(false);
  });

  it('gives the embedded index the configured HNSW threshold and ef', async () => {
    const store = await openVectorStore(loadConfigWithStore(schema, { CTXMESH_DATA_DIR: dir, CTXMESH_ANN_MIN_ROWS: '1234', CTXMESH_ANN_EF: '300' }), 64);
    try {
      const opts = (store.index as unknown as { anns: { opts: { minRows: number; expansionSearch: number; connectivity: number } } }).anns.opts;
      expect(opts).toMatchObject({ minRows: 1234, expansionSearch: 300, connectivity: 24 });
    } finally {
      await store.close();
    }
  });

  it('warms the embedded store after the caller’s turn and logs the rows it loaded; once closed, it logs nothing', async () => {
    const cfg = loadConfigWithStore(schema, { CTXMESH_DATA_DIR: dir });
    const embedder = new LexicalEmbedder({ dimension: 64 });
    const store = await openVectorStore(cfg, 64);
    const lines: Array<{ level: string; obj: object; msg: string }> = [];
    const log = { info: (obj: object, msg: string) => lines.push({ level: 'info', obj, msg }), warn: (obj: object, msg: string) => lines.push({ level: 'warn', obj, msg }) };
    try {
      await store.index.replaceDocument('viking://resources/a.md', [makeRecord(embedder, 'acct', 'viking://resources/a.md', 'alpha')]);
      await store.index.replaceDocument('viking://resources/b.md', [makeRecord(embedder, 'acct', 'viking://resources/b.md', 'beta')]);
      warmSoon(store, log);
      expect(lines).toEqual([]);
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      expect(lines).toEqual([{ level: 'info', obj: { rows: 2, ms: expect.any(Number) }, msg: 'vector store warm' }]);
    } finally {
      await store.close();
    }
    warmSoon(store, log);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(lines).toHaveLength(1);
  });

  it('refuses a file holding an index of another dimension', async () => {
    const cfg = loadConfigWithStore(schema, { CTXMESH_DATA_DIR: dir });
    await (await openVectorStore(cfg, 256)).close();
    await expect(openVectorStore(cfg, 128)).rejects.toBeInstanceOf(IndexDimensionMismatchError);
  });

  it('uses a shared handle when given one and leaves it open on close', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const store = await openVectorStore(loadConfigWithStore(schema, { CTXMESH_DATA_DIR: join(dir, 'unused') }), 64, { db });
      expect(store.index.dimension).toBe(64);
      await store.close();
      expect(db.open).toBe(true);
      expect(existsSync(join(dir, 'unused'))).toBe(false);
    } finally {
      db.close();
    }
  });
});
