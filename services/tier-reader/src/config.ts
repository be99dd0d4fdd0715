/**
 * tier-reader configuration: its port, the code outliner switch, and the vector store (the
 * shared `storeSchema` of `@ctxmesh/stores`; the embedder variables only fix the index's dense
 * dimension: the tier reader never embeds).
 */
import { env, type Env } from '@ctxmesh/runtime';
import { loadConfigWithStore, storeSchema } from '@ctxmesh/stores';

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
 * Parse and validate, including the store rules that tie variables together.
 * @throws ConfigError listing every problem
 */
export function loadTierReaderConfig(e: Env) {
  return loadConfigWithStore(schema, e);
}
