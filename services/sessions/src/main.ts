/**
 * Composition root: `ctxmesh serve sessions`. The only file that reads process.env. Redis
 * when REDIS_URL is set (unreachable → start-up error, never a silent fallback), else the
 * embedded SQLite file shared with the other embedded stores.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectRedis, createLogger, runMain } from '@ctxmesh/runtime';
import { openEmbeddedDb } from '@ctxmesh/stores';
import { loadSessionsConfig } from './config';
import { startSessions } from './start';
import { createSessionsStore, type SessionsStore } from './stores/sessions-store';

/** File name of the embedded SQLite database inside CTXMESH_DATA_DIR (shared by every embedded store). */
export const EMBEDDED_DB_FILE = 'ctxmesh.db';

/** Run the sessions service as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'sessions' } });
  return runMain('sessions', log, async () => {
    const cfg = loadSessionsConfig(process.env);
    let release: () => Promise<void>;
    let store: SessionsStore;
    if (cfg.REDIS_URL !== undefined) {
      const redis = await connectRedis(cfg.REDIS_URL);
      store = createSessionsStore({ kind: 'redis', redis, keyPrefix: cfg.SESSIONS_KEY_PREFIX });
      release = async () => {
        await redis.quit().catch(() => redis.disconnect());
      };
    } else {
      mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
      const db = openEmbeddedDb(join(cfg.CTXMESH_DATA_DIR, EMBEDDED_DB_FILE));
      store = createSessionsStore({ kind: 'embedded', db });
      release = async () => {
        db.close();
      };
    }
    const server = await startSessions({
      port: cfg.SESSIONS_PORT,
      host: cfg.SESSIONS_HOST,
      log,
      store,
      maxOverflowRetries: cfg.CTXMESH_MAX_OVERFLOW_RETRIES,
      cacheSessions: cfg.SESSIONS_CACHE_SESSIONS,
    }).catch(async (err: unknown) => {
      await release();
      throw err;
    });
    log.info({ store: cfg.REDIS_URL !== undefined ? 'redis' : 'embedded', maxOverflowRetries: cfg.CTXMESH_MAX_OVERFLOW_RETRIES }, 'sessions store');
    return {
      stop: async () => {
        await server.shutdown();
        await store.close();
        await release();
      },
    };
  });
}
