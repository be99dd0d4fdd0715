/** sessions configuration from the environment (every problem listed at once). */
import { env, loadConfig, type Env } from '@ctxmesh/runtime';

/** Schema: env var name → parser. */
export const schema = {
  /** gRPC port. */
  SESSIONS_PORT: env.port(50067),
  /** Bind host; `ctxmesh serve sessions` runs in a container, so every interface by default. */
  SESSIONS_HOST: env.str('0.0.0.0'),
  /** Redis holding the session keys; unset → the embedded SQLite file in CTXMESH_DATA_DIR. */
  REDIS_URL: env.optUrl(['redis', 'rediss']),
  /** Directory of the embedded SQLite file (used without REDIS_URL). */
  CTXMESH_DATA_DIR: env.str('.ctxmesh'),
  /** Prefix of every Redis key (must not contain `{` or `}`: the session hash tag must come first). */
  SESSIONS_KEY_PREFIX: env.str('').refine((s) => !/[{}]/.test(s), { message: 'must not contain { or }' }),
  /**
   * Overflow retry budget per agent (overflow-recovery §1.8, §3.6): a non-negative integer;
   * 0 disables recovery; unset means 1 (never 0: an unset key must not switch recovery off).
   */
  CTXMESH_MAX_OVERFLOW_RETRIES: env.int(1, 0),
  /** Sessions whose parsed log and projection stay cached in this process. */
  SESSIONS_CACHE_SESSIONS: env.int(256, 1, 1_000_000),
};

/** Parsed configuration. */
export type SessionsConfig = ReturnType<typeof loadSessionsConfig>;

/** Parse and validate. @throws ConfigError listing every problem */
export function loadSessionsConfig(e: Env) {
  return loadConfig(schema, e);
}
