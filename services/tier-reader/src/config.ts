/** tier-reader configuration: its port, the code outliner switch, and the vector store. */
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';
import { looseStoreConfig, storeProblems, storeSchema } from './stores/vector-store';

/** Schema: env var name → parser. */
export const schema = {
  TIER_READER_PORT: env.port(50063),
  TIER_READER_HOST: env.str('127.0.0.1'),
  /** Load the tree-sitter code outliner (code files get a structural overview). */
  TIER_READER_CODE_OUTLINE: env.bool(true),
  /** Budget of calls that arrive without a deadline, ms. */
  CTXMESH_DEFAULT_DEADLINE_MS: env.int(30_000, 1, 600_000),
  ...storeSchema,
};

/** Parsed configuration. */
export type TierReaderConfig = ReturnType<typeof loadTierReaderConfig>;

/**
 * Parse and validate, including the rules that tie store variables together.
 * @throws ConfigError listing every problem
 */
export function loadTierReaderConfig(e: Env) {
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
