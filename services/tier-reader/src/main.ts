/**
 * Composition root: `ctxmesh serve tier-reader`. The only file that reads process.env.
 * (Telemetry is started by the CLI before any gRPC module loads.)
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import { loadOutline } from '@ctxmesh/outline';
import { createLogger, runMain } from '@ctxmesh/runtime';
import { createEmbedder, openVectorStore } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { loadTierReaderConfig } from './config';
import { startTierReader } from './start';

/** The code outliner, or null (logged) when tree-sitter cannot load: code files then get the document overview. */
export function loadOutliner(log: Logger): Promise<CodeOutliner | null> {
  return loadOutline((err) => log.warn({ err }, 'code outliner unavailable; code files get document overviews'));
}

/** Run tier-reader as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'tier-reader' } });
  return runMain('tier-reader', log, async () => {
    const cfg = loadTierReaderConfig(process.env);
    const outliner = cfg.TIER_READER_CODE_OUTLINE ? await loadOutliner(log) : null;
    // The index's dense dimension is the configured embedder's (the one gather and the indexer use).
    const store = await openVectorStore(cfg, createEmbedder(cfg).dimension);
    log.info({ store: store.description, outliner: outliner !== null }, 'vector store open');
    let server;
    try {
      server = await startTierReader({
        port: cfg.TIER_READER_PORT,
        host: cfg.TIER_READER_HOST,
        log,
        index: store.index,
        outliner,
        defaultDeadlineMs: cfg.CTXMESH_DEFAULT_DEADLINE_MS,
      });
    } catch (e) {
      await store.close();
      throw e;
    }
    const running = server;
    return {
      stop: async () => {
        await running.shutdown();
        await store.close();
      },
    };
  });
}
