/**
 * Composition root: `ctxmesh serve indexer`. The only file that reads process.env.
 * Store and embedder come from the same variables gather reads; the bus is NATS JetStream
 * (the in-process bus only exists inside the all-in-one process). A configured store that
 * cannot be reached fails the start; nothing falls back to an embedded store.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HttpEmbedder, LexicalEmbedder, type Embedder } from '@ctxmesh/embedder';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { createOutliner } from '@ctxmesh/outline';
import { connectNats, createLogger, runMain } from '@ctxmesh/runtime';
import { EmbeddedVectorIndex, NatsEventBus, QdrantVectorIndex, openEmbeddedDb, type EventBus, type VectorIndex } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { loadIndexerConfig, type IndexerConfig } from './config';
import { startIndexer } from './start';

/** File name of the embedded SQLite database inside CTXMESH_DATA_DIR. */
export const EMBEDDED_DB_FILE = 'ctxmesh.db';

/** Something to release at shutdown. */
type Closer = () => Promise<void>;

/** The embedder the configuration names: the OpenAI-compatible endpoint, else the lexical one. */
export function embedderFromConfig(cfg: IndexerConfig): Embedder {
  if (cfg.CTXMESH_EMBEDDINGS_URL !== undefined) {
    return new HttpEmbedder({
      url: cfg.CTXMESH_EMBEDDINGS_URL,
      model: cfg.CTXMESH_EMBEDDINGS_MODEL!,
      dimension: cfg.CTXMESH_EMBEDDINGS_DIMENSION!,
      apiKey: cfg.CTXMESH_EMBEDDINGS_API_KEY,
      timeoutMs: cfg.CTXMESH_EMBEDDINGS_TIMEOUT_MS,
      maxRetries: 2,
    });
  }
  return new LexicalEmbedder({ dimension: cfg.CTXMESH_LEXICAL_DIMENSION });
}

/**
 * Open the vector index the configuration names, at the embedder's dimension.
 * @param closers receives the release steps, in opening order
 */
export async function vectorIndexFromConfig(cfg: IndexerConfig, dimension: number, closers: Closer[]): Promise<VectorIndex> {
  if (cfg.CTXMESH_VECTOR === 'qdrant') {
    const index = await QdrantVectorIndex.open({ url: cfg.QDRANT_URL, apiKey: cfg.QDRANT_API_KEY, collection: cfg.QDRANT_COLLECTION, dimension });
    closers.push(() => index.close());
    return index;
  }
  mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
  const db = openEmbeddedDb(join(cfg.CTXMESH_DATA_DIR, EMBEDDED_DB_FILE));
  closers.push(async () => {
    db.close();
  });
  const index = new EmbeddedVectorIndex(db, { dimension });
  closers.push(() => index.close());
  return index;
}

/** The code outliner, or null (with a warning) when tree-sitter cannot load: overviews then skip rule 2. */
export async function loadOutliner(log: Logger): Promise<CodeOutliner | null> {
  try {
    return (await createOutliner()).outline;
  } catch (err) {
    log.warn({ err }, 'code outliner unavailable; code files get document overviews');
    return null;
  }
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
      const embedder = embedderFromConfig(cfg);
      const index = await vectorIndexFromConfig(cfg, embedder.dimension, closers);
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
        consumer: {
          durable: cfg.INDEXER_DURABLE,
          subjects: [cfg.CTXMESH_INGEST_SUBJECTS],
          maxDeliver: cfg.INDEXER_MAX_DELIVER,
          ackWaitMs: cfg.INDEXER_ACK_WAIT_MS,
          concurrency: cfg.INDEXER_CONCURRENCY,
          retryDelayMs: cfg.INDEXER_RETRY_DELAY_MS,
        },
      });
      log.info({ vector: cfg.CTXMESH_VECTOR, embedder: embedder.id, consuming: bus !== undefined, outliner: outliner !== null }, 'indexer started');
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
