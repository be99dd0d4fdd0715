/**
 * Composition root: `ctxmesh serve gather`. The only file that reads process.env.
 * (Telemetry is started by the CLI before any gRPC module loads.)
 */
import { createLogger, runMain } from '@ctxmesh/runtime';
import { createEmbedder, openVectorStore, warmSoon } from '@ctxmesh/stores';
import { loadGatherConfig } from './config';
import { startGather } from './start';

/** Run gather as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'gather' } });
  return runMain('gather', log, async () => {
    const cfg = loadGatherConfig(process.env);
    const embedder = createEmbedder(cfg);
    const store = await openVectorStore(cfg, embedder.dimension);
    log.info({ store: store.description, embedder: embedder.id }, 'vector store open');
    let server;
    try {
      server = await startGather({
        port: cfg.GATHER_PORT,
        host: cfg.GATHER_HOST,
        log,
        index: store.index,
        embedder,
        embedCacheSize: cfg.GATHER_EMBED_CACHE_SIZE,
        defaultDeadlineMs: cfg.CTXMESH_DEFAULT_DEADLINE_MS,
      });
    } catch (e) {
      await store.close();
      throw e;
    }
    const running = server;
    warmSoon(store, log);
    return {
      stop: async () => {
        await running.shutdown();
        await store.close();
      },
    };
  });
}
