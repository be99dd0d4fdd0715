/**
 * Composition root: `ctxmesh serve indexer`. The only file that reads process.env.
 * Store and embedder come from the shared factory of `@ctxmesh/stores` (the variables gather and
 * tier-reader read); the bus is NATS JetStream (the in-process bus only exists inside the
 * all-in-one process). A configured store that cannot be reached fails the start; nothing falls
 * back to an embedded store.
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import { loadOutline } from '@ctxmesh/outline';
import { connectNats, createLogger, runMain } from '@ctxmesh/runtime';
import { NatsEventBus, createEmbedder, openVectorStore, type EventBus } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { loadIndexerConfig } from './config';
import { startIndexer } from './start';

/** Something to release at shutdown. */
type Closer = () => Promise<void>;

/** Retries of a failed embeddings call: the indexer acks only after a write, so a blip is worth retrying. */
const EMBED_RETRIES = 2;

/** The code outliner, or null (logged) when tree-sitter cannot load: code files then get the document overview. */
export function loadOutliner(log: Logger): Promise<CodeOutliner | null> {
  return loadOutline((err) => log.warn({ err }, 'code outliner unavailable; code files get document overviews'));
}

/** Run the indexer as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'indexer' } });
  return runMain('indexer', log, async () => {
    const cfg = loadIndexerConfig(process.env);
    const closers: Closer[] = [];
    const release = async () => {
      for (const close of closers.splice(0).reverse()) await close().catch((err: unknown) => log.warn({ err }, 'error while releasing'));
    };
    try {
      const embedder = createEmbedder(cfg, { maxRetries: EMBED_RETRIES });
      const store = await openVectorStore(cfg, embedder.dimension);
      closers.push(() => store.close());
      const index = store.index;
      const outliner = await loadOutliner(log);
      let bus: EventBus | undefined;
      if (cfg.NATS_URL !== undefined) {
        const nc = await connectNats(cfg.NATS_URL, 'ctxmesh-indexer');
        closers.push(() => nc.drain());
        const nats = await NatsEventBus.create(nc, {
          stream: cfg.CTXMESH_INGEST_STREAM,
          subjects: [cfg.CTXMESH_INGEST_SUBJECTS],
          deadLetterSubject: cfg.CTXMESH_INGEST_DLQ_SUBJECT,
          doneSubjectPrefix: cfg.CTXMESH_INGEST_DONE_PREFIX,
          onError: (err, context) => log.warn({ err, context }, 'event bus error'),
        });
        closers.push(() => nats.close());
        bus = nats;
      } else {
        log.warn('NATS_URL is not set: not consuming the ingest stream (ApplyWrite only)');
      }
      const server = await startIndexer({
        port: cfg.INDEXER_PORT,
        host: cfg.INDEXER_HOST,
        log,
        index,
        embedder,
        outliner,
        bus,
        embedBatchSize: cfg.INDEXER_EMBED_BATCH,
        recordThreads: cfg.INDEXER_RECORD_THREADS,
        consumer: {
          durable: cfg.INDEXER_DURABLE,
          subjects: [cfg.CTXMESH_INGEST_SUBJECTS],
          maxDeliver: cfg.INDEXER_MAX_DELIVER,
          ackWaitMs: cfg.INDEXER_ACK_WAIT_MS,
          concurrency: cfg.INDEXER_CONCURRENCY,
          batchSize: cfg.INDEXER_BATCH_SIZE,
          batchWaitMs: cfg.INDEXER_BATCH_WAIT_MS,
          retryDelayMs: cfg.INDEXER_RETRY_DELAY_MS,
        },
      });
      log.info({ store: store.description, embedder: embedder.id, consuming: bus !== undefined, outliner: outliner !== null }, 'indexer started');
      return {
        stop: async () => {
          await server.shutdown();
          await release();
        },
      };
    } catch (err) {
      await release();
      throw err;
    }
  });
}
