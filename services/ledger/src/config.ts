/** ledger configuration from the environment (every problem listed at once). */
import { DEFAULT_LEDGER_TTL_MS } from '@ctxmesh/stores';
import { env, loadConfig, type Env } from '@ctxmesh/runtime';

/** Schema: env var name → parser. */
export const schema = {
  /** gRPC port. */
  LEDGER_PORT: env.port(50065),
  /** Bind host; `ctxmesh serve ledger` runs in a container, so every interface by default. */
  LEDGER_HOST: env.str('0.0.0.0'),
  /** Redis holding the `ledger:*` keys; unset → the embedded SQLite file in CTXMESH_DATA_DIR. */
  REDIS_URL: env.optUrl(['redis', 'rediss']),
  /** Directory of the embedded SQLite file (used without REDIS_URL). */
  CTXMESH_DATA_DIR: env.str('.ctxmesh'),
  /** Key prefix of the ledger hashes in Redis. */
  LEDGER_KEY_PREFIX: env.str('ledger:'),
  /** Idle lifetime of a session's ledger, ms (7 days by default). */
  LEDGER_TTL_MS: env.int(DEFAULT_LEDGER_TTL_MS, 1000, 365 * 24 * 3600 * 1000),
  /** Longest wait for one store call before the request degrades, ms. */
  LEDGER_STORE_TIMEOUT_MS: env.int(1000, 1, 60_000),
};

/** Parsed configuration. */
export type LedgerConfig = ReturnType<typeof loadLedgerConfig>;

/** Parse and validate. @throws ConfigError listing every problem */
export function loadLedgerConfig(e: Env) {
  return loadConfig(schema, e);
}
