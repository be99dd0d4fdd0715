/**
 * The vector store and query embedder from configuration (DESIGN §3): `CTXMESH_VECTOR=embedded`
 * (default; SQLite file `$CTXMESH_DATA_DIR/ctxmesh.db`) or `qdrant` (`QDRANT_URL`); the built-in
 * lexical embedder unless `CTXMESH_EMBEDDINGS_URL` names an OpenAI-compatible endpoint. Nothing
 * falls back silently: a configured Qdrant that cannot be reached fails the start.
 *
 * TODO(gather, tier-reader, indexer): the same factory is needed by all three; it belongs in a
 * lib (e.g. `@ctxmesh/stores`), and lives here until it moves.
 */
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { HttpEmbedder, LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import { env } from '@ctxmesh/runtime';
import { EmbeddedVectorIndex, openEmbeddedDb, QdrantVectorIndex, type VectorIndex } from '@ctxmesh/stores';

/** Store and embedder variables (spread into a service's config schema). */
export const storeSchema = {
  /** `embedded` (SQLite file) or `qdrant`. */
  CTXMESH_VECTOR: env.oneOf(['embedded', 'qdrant'], 'embedded'),
  /** Directory of the embedded SQLite file. */
  CTXMESH_DATA_DIR: env.str('./.ctxmesh'),
  /** Qdrant REST URL (required with `CTXMESH_VECTOR=qdrant`). */
  QDRANT_URL: env.optUrl(['http', 'https']),
  /** Qdrant API key. */
  QDRANT_API_KEY: env.optStr(),
  /** Qdrant collection. */
  QDRANT_COLLECTION: env.str('ctxmesh_nodes'),
  /** OpenAI-compatible embeddings endpoint; unset = the built-in lexical embedder. */
  CTXMESH_EMBEDDINGS_URL: env.optUrl(['http', 'https']),
  /** Embedding model (required with an endpoint). */
  CTXMESH_EMBEDDINGS_MODEL: env.optStr(),
  /** API key of the endpoint. */
  CTXMESH_EMBEDDINGS_API_KEY: env.optStr(),
  /** Vector length of the model (required with an endpoint). */
  CTXMESH_EMBEDDINGS_DIM: env.int(undefined, 1, 65_536).optional(),
  /** Per-request timeout of the endpoint, ms. */
  CTXMESH_EMBEDDINGS_TIMEOUT_MS: env.int(10_000, 1, 600_000),
  /** Dimension of the built-in lexical embedder (a power of two in 64..4096). */
  CTXMESH_LEXICAL_DIM: env.int(256, 64, 4096),
};

/** Parsed store variables. */
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
}

/**
 * The store variables of a raw environment, leniently (defaults for absent values; unparsable
 * numbers become NaN and are left to the schema's own message), so the rules across variables
 * can be reported together with the schema's problems.
 */
export function looseStoreConfig(e: Record<string, string | undefined>): StoreConfig {
  const v = (k: string): string | undefined => {
    const x = e[k]?.trim();
    return x ? x : undefined;
  };
  const num = (k: string): number | undefined => (v(k) === undefined ? undefined : /^-?\d+$/.test(v(k) as string) ? Number(v(k)) : Number.NaN);
  return {
    CTXMESH_VECTOR: v('CTXMESH_VECTOR') === 'qdrant' ? 'qdrant' : 'embedded',
    CTXMESH_DATA_DIR: v('CTXMESH_DATA_DIR') ?? './.ctxmesh',
    QDRANT_URL: v('QDRANT_URL'),
    QDRANT_COLLECTION: v('QDRANT_COLLECTION') ?? 'ctxmesh_nodes',
    CTXMESH_EMBEDDINGS_URL: v('CTXMESH_EMBEDDINGS_URL'),
    CTXMESH_EMBEDDINGS_MODEL: v('CTXMESH_EMBEDDINGS_MODEL'),
    CTXMESH_EMBEDDINGS_DIM: num('CTXMESH_EMBEDDINGS_DIM'),
    CTXMESH_EMBEDDINGS_TIMEOUT_MS: 10_000,
    CTXMESH_LEXICAL_DIM: num('CTXMESH_LEXICAL_DIM') ?? 256,
  } as StoreConfig;
}

/** Problems that involve several variables (one line each, `loadConfig` style). */
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

/** The embedder the configuration names. */
export function createEmbedder(cfg: StoreConfig): Embedder {
  if (cfg.CTXMESH_EMBEDDINGS_URL) {
    return new HttpEmbedder({
      url: cfg.CTXMESH_EMBEDDINGS_URL,
      apiKey: cfg.CTXMESH_EMBEDDINGS_API_KEY,
      model: cfg.CTXMESH_EMBEDDINGS_MODEL ?? '',
      dimension: cfg.CTXMESH_EMBEDDINGS_DIM ?? 0,
      timeoutMs: cfg.CTXMESH_EMBEDDINGS_TIMEOUT_MS,
    });
  }
  return new LexicalEmbedder({ dimension: cfg.CTXMESH_LEXICAL_DIM });
}

/** An open vector index and how to release it. */
export interface VectorStore {
  /** The index. */
  index: VectorIndex;
  /** What it is, for logs (no secrets). */
  description: string;
  /** Close the index (and the SQLite handle it owns). */
  close(): Promise<void>;
}

/**
 * Open the configured vector index.
 * @param dimension dense dimension (the embedder's)
 * @throws when Qdrant cannot be reached, or the stored index has another dimension
 */
export async function openVectorStore(cfg: StoreConfig, dimension: number): Promise<VectorStore> {
  if (cfg.CTXMESH_VECTOR === 'qdrant') {
    const index = await QdrantVectorIndex.open({
      url: cfg.QDRANT_URL,
      apiKey: cfg.QDRANT_API_KEY,
      collection: cfg.QDRANT_COLLECTION,
      dimension,
    });
    return { index, description: `qdrant ${cfg.QDRANT_URL} collection ${cfg.QDRANT_COLLECTION}`, close: () => index.close() };
  }
  mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
  const file = path.join(cfg.CTXMESH_DATA_DIR, 'ctxmesh.db');
  const db = openEmbeddedDb(file);
  let index: EmbeddedVectorIndex;
  try {
    index = new EmbeddedVectorIndex(db, { dimension });
  } catch (e) {
    db.close();
    throw e;
  }
  return {
    index,
    description: `embedded ${file}`,
    close: async () => {
      await index.close();
      db.close();
    },
  };
}
