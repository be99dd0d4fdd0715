/**
 * indexer configuration from the environment (every problem listed at once). The store and
 * embedder variables are the shared `storeSchema` of `@ctxmesh/stores`, the same gather and
 * tier-reader read, so every side opens the same index and builds comparable vectors.
 */
import { availableParallelism } from 'node:os';
import { env, type Env } from '@ctxmesh/runtime';
import { loadConfigWithStore, storeSchema } from '@ctxmesh/stores';

/** Schema: env var name → parser. */
export const schema = {
  /** gRPC port. */
  INDEXER_PORT: env.port(50068),
  /** Bind host; `ctxmesh serve indexer` runs in a container, so every interface by default. */
  INDEXER_HOST: env.str('0.0.0.0'),

  /** NATS with JetStream; unset → no ingest consumer (ApplyWrite only). */
  NATS_URL: env.optUrl(['nats', 'tls', 'ws', 'wss']),
  /** JetStream stream of the ingest subjects (the gateway publishes into it). */
  CTXMESH_INGEST_STREAM: env.str('CTXMESH_INGEST'),
  /** Subject filter of the ingest stream. */
  CTXMESH_INGEST_SUBJECTS: env.str('ctxmesh.ingest.>'),
  /** Dead-letter subject (its own stream `<stream>_DLQ`). */
  CTXMESH_INGEST_DLQ_SUBJECT: env.str('ctxmesh.dlq.ingest'),
  /** Prefix of the core-NATS done notices the gateway waits on. */
  CTXMESH_INGEST_DONE_PREFIX: env.str('ctxmesh.done.ingest'),
  /** Durable consumer name. */
  INDEXER_DURABLE: env.str('indexer'),
  /** Attempts before a write that keeps failing is dead-lettered. */
  INDEXER_MAX_DELIVER: env.int(5, 1, 1000),
  /** Ack wait, ms: an unacked write (a crashed indexer) is redelivered after it. */
  INDEXER_ACK_WAIT_MS: env.int(30_000, 100, 3_600_000),
  /**
   * Ingest batches applied at once (each holds at most one write per URI). Several small batches
   * rather than one large one: while one batch's records are built (in the record threads),
   * another's are stored, and the embedded index's group commit still writes the batches that
   * are ready together in one transaction.
   */
  INDEXER_CONCURRENCY: env.int(4, 1, 256),
  /** Most writes the ingest consumer applies in one batch (shared embedder calls, one store write). */
  INDEXER_BATCH_SIZE: env.int(8, 1, 1000),
  /** How long a batch that is not full waits for more writes, ms (0: apply what is there at once). */
  INDEXER_BATCH_WAIT_MS: env.int(10, 0, 10_000),
  /** First retry delay after a transient failure, ms (doubles per attempt, at most 30 s). */
  INDEXER_RETRY_DELAY_MS: env.int(1000, 1, 60_000),
  /** Texts per embedder call. */
  INDEXER_EMBED_BATCH: env.int(64, 1, 4096),
  /**
   * Worker threads that build the written documents' records (chunks, overviews, code outlines)
   * and, with the built-in lexical embedder, their vectors, off the event loop; 0 builds them
   * on the main thread. Default: one core less than the machine has, at least 1, at most 4.
   */
  INDEXER_RECORD_THREADS: env.int(defaultRecordThreads(), 0, 64),

  /** Vector store and embedder: the variables gather and tier-reader read too (`@ctxmesh/stores`). */
  ...storeSchema,
};

/** {@link schema}'s default of `INDEXER_RECORD_THREADS`: the cores left beside the event loop (1–4). */
export function defaultRecordThreads(cores = availableParallelism()): number {
  return Math.max(1, Math.min(4, cores - 1));
}

/** Parsed configuration. */
export type IndexerConfig = ReturnType<typeof loadIndexerConfig>;

/**
 * Parse and validate, including the store rules that span variables (Qdrant needs its URL; an
 * embeddings endpoint needs a model and a dimension), all reported together.
 * @throws ConfigError listing every problem
 */
export function loadIndexerConfig(e: Env) {
  return loadConfigWithStore(schema, e);
}
