/**
 * gather configuration: its port, and the vector store and embedder it reads with
 * (`CTXMESH_VECTOR`, `CTXMESH_EMBEDDINGS_URL`, …; see `stores/vector-store.ts`).
 */
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';
import { looseStoreConfig, storeProblems, storeSchema } from './stores/vector-store';

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
 * Parse and validate, including the rules that tie variables together (a Qdrant store needs
 * `QDRANT_URL`; an embeddings endpoint needs a model and a dimension).
 * @throws ConfigError listing every problem
 */
export function loadGatherConfig(e: Env) {
  let cfg;
  try {
    cfg = loadConfig(schema, e);
  } catch (err) {
    // Report the rules across variables together with the schema's own problems.
    if (err instanceof ConfigError) throw new ConfigError([...err.problems, ...storeProblems(looseStoreConfig(e))]);
    throw err;
  }
  const problems = storeProblems(cfg);
  if (problems.length > 0) throw new ConfigError(problems);
  return cfg;
}
