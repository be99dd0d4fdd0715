/**
 * Composition root: `ctxmesh serve ledger`. The only file that reads process.env. Redis when
 * REDIS_URL is set (unreachable → start-up error, never a silent fallback), else the embedded
 * SQLite file shared with the other embedded stores.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectRedis, createLogger, runMain } from '@ctxmesh/runtime';
import { openEmbeddedDb } from '@ctxmesh/stores';
import { loadLedgerConfig } from './config';
import { startLedger } from './start';
import { createLedgerStore } from './stores/ledger-store';

/** File name of the embedded SQLite database inside CTXMESH_DATA_DIR. */
export const EMBEDDED_DB_FILE = 'ctxmesh.db';

/** Run the ledger as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'ledger' } });
  return runMain('ledger', log, async () => {
    const cfg = loadLedgerConfig(process.env);
    let release: () => Promise<void>;
    let store;
    if (cfg.REDIS_URL !== undefined) {
      const redis = await connectRedis(cfg.REDIS_URL);
      store = createLedgerStore({ kind: 'redis', redis, keyPrefix: cfg.LEDGER_KEY_PREFIX, ttlMs: cfg.LEDGER_TTL_MS });
      release = async () => {
        await redis.quit().catch(() => redis.disconnect());
      };
    } else {
      mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
      const db = openEmbeddedDb(join(cfg.CTXMESH_DATA_DIR, EMBEDDED_DB_FILE));
      store = createLedgerStore({ kind: 'embedded', db, ttlMs: cfg.LEDGER_TTL_MS });
      release = async () => {
        db.close();
      };
    }
    const server = await startLedger({ port: cfg.LEDGER_PORT, host: cfg.LEDGER_HOST, log, store, storeTimeoutMs: cfg.LEDGER_STORE_TIMEOUT_MS });
    log.info({ store: cfg.REDIS_URL !== undefined ? 'redis' : 'embedded' }, 'ledger store');
    return {
      stop: async () => {
        await server.shutdown();
        await store.close();
        await release();
      },
    };
  });
}
