/**
 * The ledger service's store: the data it owns is the `ledger:*` Redis keys (or, embedded, the
 * `ledger_*` tables of the SQLite file). The composition root picks one; nothing falls back
 * from a configured Redis to the embedded store.
 */
import { RedisLedgerStore, SqliteLedgerStore, type LedgerStore } from '@ctxmesh/stores';

/** Which adapter to run on. */
export type LedgerStoreConfig =
  | {
      /** Redis: one hash per session with a sliding TTL. */
      kind: 'redis';
      /** A connected client (the caller owns and quits it). */
      redis: ConstructorParameters<typeof RedisLedgerStore>[0];
      /** Key prefix. @default "ledger:" */
      keyPrefix?: string;
      /** Idle lifetime of a session's ledger, ms. @default 604800000 (7 days) */
      ttlMs?: number;
    }
  | {
      /** The embedded SQLite file shared with the other embedded stores. */
      kind: 'embedded';
      /** An open database handle (the caller owns and closes it). */
      db: ConstructorParameters<typeof SqliteLedgerStore>[0];
      /** Idle lifetime of a session's ledger, ms. @default 604800000 (7 days) */
      ttlMs?: number;
    };

/** Build the ledger's store from configuration. */
export function createLedgerStore(cfg: LedgerStoreConfig): LedgerStore {
  return cfg.kind === 'redis'
    ? new RedisLedgerStore(cfg.redis, { keyPrefix: cfg.keyPrefix, ttlMs: cfg.ttlMs })
    : new SqliteLedgerStore(cfg.db, { ttlMs: cfg.ttlMs });
}
