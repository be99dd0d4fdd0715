/**
 * The vector store and embedder from configuration (DESIGN §3), one module for every service
 * that reads or writes the index (gather, tier-reader, indexer, the all-in-one mesh), so all of
 * them parse the same variables with the same rules and build comparable vectors:
 *
 * - `CTXMESH_VECTOR=embedded` (default): the SQLite file `$CTXMESH_DATA_DIR/ctxmesh.db`;
 *   `CTXMESH_VECTOR=qdrant`: the collection `QDRANT_COLLECTION` at `QDRANT_URL`.
 * - The built-in lexical embedder at `CTXMESH_LEXICAL_DIM`, unless `CTXMESH_EMBEDDINGS_URL` names
 *   an OpenAI-compatible endpoint (with `CTXMESH_EMBEDDINGS_MODEL` and `CTXMESH_EMBEDDINGS_DIM`).
 *
 * Nothing falls back silently: a configured Qdrant that cannot be reached fails the start.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { HttpEmbedder, LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';
import { DEFAULT_ANN_OPTIONS } from './embedded/ann';
import { type EmbeddedDb, openEmbeddedDb } from './embedded/db';
import { EmbeddedVectorIndex } from './embedded/vector-index';
import { IndexClosedError, IndexDimensionMismatchError } from './ports/errors';
import type { VectorIndex } from './ports/vector-index';
import { DEFAULT_QDRANT_COLLECTION, QdrantVectorIndex } from './qdrant/qdrant-vector-index';
import { VectorStoreUnavailableError } from './ports/errors';

export { VectorStoreUnavailableError };

/** File name of the embedded SQLite database inside `CTXMESH_DATA_DIR` (shared by the vector index, ledger and sessions). */
export const DB_FILE = 'ctxmesh.db';

/** Default of `CTXMESH_DATA_DIR`, relative to the working directory. */
export const DEFAULT_DATA_DIR = './.ctxmesh';

/** Store and embedder variables: spread into a service's config schema (`{ ...storeSchema, MY_PORT: … }`). */
export const storeSchema = {
  /** `embedded` (SQLite file) or `qdrant`. @default embedded */
  CTXMESH_VECTOR: env.oneOf(['embedded', 'qdrant'], 'embedded'),
  /** Directory of the embedded SQLite file (created when missing). @default ./.ctxmesh */
  CTXMESH_DATA_DIR: env.str(DEFAULT_DATA_DIR),
  /** Qdrant REST URL, e.g. `http://qdrant:6333` (required with `CTXMESH_VECTOR=qdrant`). */
  QDRANT_URL: env.optUrl(['http', 'https']),
  /** Qdrant API key. */
  QDRANT_API_KEY: env.optStr(),
  /** Qdrant collection. @default ctxmesh_nodes */
  QDRANT_COLLECTION: env.str(DEFAULT_QDRANT_COLLECTION),
  /** OpenAI-compatible embeddings endpoint; unset = the built-in lexical embedder. */
  CTXMESH_EMBEDDINGS_URL: env.optUrl(['http', 'https']),
  /** Embedding model (required with an endpoint). */
  CTXMESH_EMBEDDINGS_MODEL: env.optStr(),
  /** API key of the endpoint. */
  CTXMESH_EMBEDDINGS_API_KEY: env.optStr(),
  /** Vector length of the model, 1..65536 (required with an endpoint). */
  CTXMESH_EMBEDDINGS_DIM: env.int(undefined, 1, 65_536).optional(),
  /** Per-request timeout of the endpoint, ms (1..600000). @default 10000 */
  CTXMESH_EMBEDDINGS_TIMEOUT_MS: env.int(10_000, 1, 600_000),
  /** Dimension of the built-in lexical embedder (a power of two in 64..4096). @default 256 */
  CTXMESH_LEXICAL_DIM: env.int(256, 64, 4096),
  /**
   * Embedded store: rows in an account from which its dense leg searches an HNSW index instead
   * of the exact scan (1..1000000000). @default 600000
   */
  CTXMESH_ANN_MIN_ROWS: env.int(DEFAULT_ANN_OPTIONS.minRows, 1, 1_000_000_000),
  /** Embedded store: the HNSW index's `ef` at search time (16..65536). @default 2048 */
  CTXMESH_ANN_EF: env.int(DEFAULT_ANN_OPTIONS.expansionSearch, 16, 65_536),
};

/** Parsed store variables (what {@link storeSchema} yields; a service config that spreads it is one). */
export interface StoreConfig {
  CTXMESH_VECTOR: 'embedded' | 'qdrant';
  CTXMESH_DATA_DIR: string;
  QDRANT_URL?: string;
  QDRANT_API_KEY?: string;
  QDRANT_COLLECTION: string;
  CTXMESH_EMBEDDINGS_URL?: string;
  CTXMESH_EMBEDDINGS_MODEL?: string;
  CTXMESH_EMBEDDINGS_API_KEY?: string;
  CTXMESH_EMBEDDINGS_DIM?: number;
  CTXMESH_EMBEDDINGS_TIMEOUT_MS: number;
  CTXMESH_LEXICAL_DIM: number;
  CTXMESH_ANN_MIN_ROWS: number;
  CTXMESH_ANN_EF: number;
}

/**
 * The store variables of a raw environment, leniently: defaults for absent values, and
 * unparsable numbers as NaN (left to the schema's own message). Lets the rules across variables
 * be reported together with the schema's problems when the schema already failed.
 */
export function looseStoreConfig(e: Env): StoreConfig {
  const v = (k: keyof StoreConfig): string | undefined => {
    const x = e[k]?.trim();
    return x ? x : undefined;
  };
  const num = (k: keyof StoreConfig): number | undefined => {
    const x = v(k);
    return x === undefined ? undefined : /^-?\d+$/.test(x) ? Number(x) : Number.NaN;
  };
  return {
    CTXMESH_VECTOR: v('CTXMESH_VECTOR') === 'qdrant' ? 'qdrant' : 'embedded',
    CTXMESH_DATA_DIR: v('CTXMESH_DATA_DIR') ?? DEFAULT_DATA_DIR,
    QDRANT_URL: v('QDRANT_URL'),
    QDRANT_API_KEY: v('QDRANT_API_KEY'),
    QDRANT_COLLECTION: v('QDRANT_COLLECTION') ?? DEFAULT_QDRANT_COLLECTION,
    CTXMESH_EMBEDDINGS_URL: v('CTXMESH_EMBEDDINGS_URL'),
    CTXMESH_EMBEDDINGS_MODEL: v('CTXMESH_EMBEDDINGS_MODEL'),
    CTXMESH_EMBEDDINGS_API_KEY: v('CTXMESH_EMBEDDINGS_API_KEY'),
    CTXMESH_EMBEDDINGS_DIM: num('CTXMESH_EMBEDDINGS_DIM'),
    CTXMESH_EMBEDDINGS_TIMEOUT_MS: num('CTXMESH_EMBEDDINGS_TIMEOUT_MS') ?? 10_000,
    CTXMESH_LEXICAL_DIM: num('CTXMESH_LEXICAL_DIM') ?? 256,
    CTXMESH_ANN_MIN_ROWS: num('CTXMESH_ANN_MIN_ROWS') ?? DEFAULT_ANN_OPTIONS.minRows,
    CTXMESH_ANN_EF: num('CTXMESH_ANN_EF') ?? DEFAULT_ANN_OPTIONS.expansionSearch,
  };
}

/**
 * Problems that involve several store variables, one line each in `loadConfig` style
 * (`NAME: message`): Qdrant needs its URL; an embeddings endpoint needs a model and a dimension;
 * the lexical dimension must be a power of two.
 * @returns the problems, empty when the configuration is consistent
 */
export function storeProblems(cfg: StoreConfig): string[] {
  const out: string[] = [];
  if (cfg.CTXMESH_VECTOR === 'qdrant' && !cfg.QDRANT_URL) out.push('QDRANT_URL: required when CTXMESH_VECTOR=qdrant');
  if (cfg.CTXMESH_EMBEDDINGS_URL) {
    if (!cfg.CTXMESH_EMBEDDINGS_MODEL) out.push('CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set');
    if (cfg.CTXMESH_EMBEDDINGS_DIM === undefined) out.push('CTXMESH_EMBEDDINGS_DIM: required when CTXMESH_EMBEDDINGS_URL is set');
  }
  const d = cfg.CTXMESH_LEXICAL_DIM;
  if (Number.isInteger(d) && d > 0 && (d & (d - 1)) !== 0) out.push(`CTXMESH_LEXICAL_DIM: must be a power of two (got ${d})`);
  return out;
}

/**
 * `loadConfig` for a service schema that spreads {@link storeSchema}: parses `e` and adds the
 * store's cross-variable rules ({@link storeProblems}), every problem in one ConfigError (the
 * schema's first, then the cross-variable ones).
 * @returns the frozen typed config
 * @throws ConfigError listing every problem
 */
export function loadConfigWithStore<S extends typeof storeSchema & Parameters<typeof loadConfig>[0]>(schema: S, e: Env): ReturnType<typeof loadConfig<S>> {
  let cfg: ReturnType<typeof loadConfig<S>>;
  try {
    cfg = loadConfig(schema, e);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError([...err.problems, ...storeProblems(looseStoreConfig(e))]);
    throw err;
  }
  const problems = storeProblems(cfg as unknown as StoreConfig);
  if (problems.length > 0) throw new ConfigError(problems);
  return cfg;
}

/** Options of {@link createEmbedder}. */
export interface CreateEmbedderOptions {
  /**
   * Retries of a failed endpoint call (transient errors only). A service on the request path
   * keeps 0 and lets its deadline decide; the indexer, which acks only after a write, retries.
   * @default 0
   */
  maxRetries?: number;
}

/**
 * The embedder the configuration names: the OpenAI-compatible endpoint when
 * `CTXMESH_EMBEDDINGS_URL` is set, else the built-in lexical embedder at `CTXMESH_LEXICAL_DIM`.
 * Building it does no I/O. Its `dimension` is the index's dense dimension.
 * @throws RangeError when an endpoint lacks a model or a positive dimension (see {@link storeProblems})
 */
export function createEmbedder(cfg: StoreConfig, opts: CreateEmbedderOptions = {}): Embedder {
  if (cfg.CTXMESH_EMBEDDINGS_URL) {
    return new HttpEmbedder({
      url: cfg.CTXMESH_EMBEDDINGS_URL,
      apiKey: cfg.CTXMESH_EMBEDDINGS_API_KEY,
      model: cfg.CTXMESH_EMBEDDINGS_MODEL ?? '',
      dimension: cfg.CTXMESH_EMBEDDINGS_DIM ?? 0,
      timeoutMs: cfg.CTXMESH_EMBEDDINGS_TIMEOUT_MS,
      maxRetries: opts.maxRetries ?? 0,
    });
  }
  return new LexicalEmbedder({ dimension: cfg.CTXMESH_LEXICAL_DIM });
}

/** An open vector index and how to release it. */
export interface VectorStore {
  /** The index. */
  index: VectorIndex;
  /** What it is, for logs (no secrets): `embedded <file>` or `qdrant <url> collection <name>`. */
  description: string;
  /**
   * Load what the first search would otherwise load (the embedded store's scan cache and ANN
   * indexes, see `EmbeddedVectorIndex.warm`); nothing to do for Qdrant. Call it once the
   * service listens.
   * @returns the rows loaded (0 for Qdrant)
   */
  warm(): Promise<number>;
  /** Close the index, and the SQLite handle when the store opened it. */
  close(): Promise<void>;
}

/**
 * Run {@link VectorStore.warm} on a later turn of the event loop (once the caller's start-up
 * has finished and it listens) and log how long it took. A failure is logged, not thrown: the
 * first search loads whatever is missing. A store closed before it runs is left alone.
 */
export function warmSoon(store: VectorStore, log: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void }): void {
  setImmediate(() => {
    const t0 = performance.now();
    store.warm().then(
      (rows) => log.info({ rows, ms: Math.round(performance.now() - t0) }, 'vector store warm'),
      (err: unknown) => {
        if (!(err instanceof IndexClosedError)) log.warn({ err }, 'could not warm the vector store; the first search loads it');
      },
    );
  });
}

/** Options of {@link openVectorStore}. */
export interface OpenVectorStoreOptions {
  /**
   * An open handle on the embedded file to use instead of opening `$CTXMESH_DATA_DIR/ctxmesh.db`
   * (the all-in-one mesh shares one handle with the ledger and sessions). The caller keeps
   * ownership: `close()` leaves it open. Ignored for Qdrant.
   */
  db?: EmbeddedDb;
}

/**
 * Open the configured vector index. Never falls back: a configured Qdrant that cannot be reached
 * is an error, and nothing is created in `CTXMESH_DATA_DIR` then.
 * @param dimension dense dimension; @default the configured embedder's (`createEmbedder(cfg).dimension`)
 * @throws VectorStoreUnavailableError when Qdrant cannot be reached or refuses the collection
 * @throws IndexDimensionMismatchError when the stored index has another dimension
 */
export async function openVectorStore(cfg: StoreConfig, dimension: number = createEmbedder(cfg).dimension, opts: OpenVectorStoreOptions = {}): Promise<VectorStore> {
  if (cfg.CTXMESH_VECTOR === 'qdrant') {
    const where = `qdrant ${cfg.QDRANT_URL ?? '(no QDRANT_URL)'} collection ${cfg.QDRANT_COLLECTION}`;
    let index: QdrantVectorIndex;
    try {
      index = await QdrantVectorIndex.open({ url: cfg.QDRANT_URL, apiKey: cfg.QDRANT_API_KEY, collection: cfg.QDRANT_COLLECTION, dimension });
    } catch (err) {
      if (err instanceof IndexDimensionMismatchError) throw err;
      throw new VectorStoreUnavailableError(`cannot open the vector store ${where}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
    return { index, description: where, warm: async () => 0, close: () => index.close() };
  }
  const owned = opts.db === undefined;
  let db: EmbeddedDb;
  if (opts.db !== undefined) {
    db = opts.db;
  } else {
    mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
    db = openEmbeddedDb(path.join(cfg.CTXMESH_DATA_DIR, DB_FILE));
  }
  let index: EmbeddedVectorIndex;
  try {
    index = new EmbeddedVectorIndex(db, { dimension, ann: { minRows: cfg.CTXMESH_ANN_MIN_ROWS, expansionSearch: cfg.CTXMESH_ANN_EF } });
  } catch (err) {
    if (owned) db.close();
    throw err;
  }
  return {
    index,
    description: `embedded ${db.name}`,
    warm: () => index.warm(),
    close: async () => {
      await index.close();
      if (owned) db.close();
    },
  };
}
