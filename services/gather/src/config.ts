/**
 * gather configuration: its port, and the vector store and embedder it reads with
 * (`CTXMESH_VECTOR`, `CTXMESH_EMBEDDINGS_URL`, …: the shared `storeSchema` of `@ctxmesh/stores`).
 */
import { env, type Env } from '@ctxmesh/runtime';
import { loadConfigWithStore, storeSchema } from '@ctxmesh/stores';

/** Schema: env var name → parser. */
export const schema = {
  GATHER_PORT: env.port(50062),
  GATHER_HOST: env.str('127.0.0.1'),
  /** Query embeddings kept in the LRU (0 disables keeping them). */
  GATHER_EMBED_CACHE_SIZE: env.int(512, 0, 1_000_000),
  /** Budget of calls that arrive without a deadline, ms. */
  CTXMESH_DEFAULT_DEADLINE_MS: env.int(30_000, 1, 600_000),
  ...storeSchema,
};

/** Parsed configuration. */
export type GatherConfig = ReturnType<typeof loadGatherConfig>;

/**
 * Parse and validate, including the store rules that tie variables together (a Qdrant store
 * needs `QDRANT_URL`; an embeddings endpoint needs a model and a dimension).
 * @throws ConfigError listing every problem
 */
export function loadGatherConfig(e: Env) {
  return loadConfigWithStore(schema, e);
}
