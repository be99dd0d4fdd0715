/**
 * indexer configuration from the environment (every problem listed at once). The store and
 * embedder variables are the same ones gather reads, so both sides build comparable vectors.
 */
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';

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
  /** Writes applied at once (one per URI). */
  INDEXER_CONCURRENCY: env.int(8, 1, 256),
  /** First retry delay after a transient failure, ms (doubles per attempt, at most 30 s). */
  INDEXER_RETRY_DELAY_MS: env.int(1000, 1, 60_000),
  /** Texts per embedder call. */
  INDEXER_EMBED_BATCH: env.int(64, 1, 4096),

  /** Vector store: the embedded SQLite file or Qdrant. */
  CTXMESH_VECTOR: env.oneOf(['embedded', 'qdrant'], 'embedded'),
  /** Qdrant REST URL (required with CTXMESH_VECTOR=qdrant). */
  QDRANT_URL: env.optUrl(['http', 'https']),
  QDRANT_API_KEY: env.optStr(),
  QDRANT_COLLECTION: env.str('ctxmesh_nodes'),
  /** Directory of the embedded SQLite file. */
  CTXMESH_DATA_DIR: env.str('.ctxmesh'),

  /** OpenAI-compatible embeddings endpoint; unset → the built-in lexical embedder. */
  CTXMESH_EMBEDDINGS_URL: env.optUrl(['http', 'https']),
  /** Model name (required with CTXMESH_EMBEDDINGS_URL). */
  CTXMESH_EMBEDDINGS_MODEL: env.optStr(),
  /** Vector length of the model (required with CTXMESH_EMBEDDINGS_URL). */
  CTXMESH_EMBEDDINGS_DIMENSION: env.int(undefined, 1, 65_536).optional(),
  CTXMESH_EMBEDDINGS_API_KEY: env.optStr(),
  /** Per-request timeout of the embeddings endpoint, ms. */
  CTXMESH_EMBEDDINGS_TIMEOUT_MS: env.int(10_000, 1, 600_000),
  /** Dimension of the built-in lexical embedder (a power of two in 64..4096). */
  CTXMESH_LEXICAL_DIMENSION: env.int(256, 64, 4096),
};

/** Parsed configuration. */
export type IndexerConfig = ReturnType<typeof loadIndexerConfig>;

/**
 * Parse and validate, including the rules that span variables (Qdrant needs its URL; an
 * embeddings endpoint needs a model and a dimension), all reported together.
 * @throws ConfigError listing every problem
 */
export function loadIndexerConfig(e: Env) {
  const raw = (k: keyof typeof schema): string | undefined => e[k]?.trim() || undefined;
  const problems: string[] = [];
  let cfg: Readonly<ReturnType<typeof parse>> | undefined;
  try {
    cfg = parse(e);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (raw('CTXMESH_VECTOR') === 'qdrant' && raw('QDRANT_URL') === undefined) problems.push('QDRANT_URL: required when CTXMESH_VECTOR=qdrant');
  if (raw('CTXMESH_EMBEDDINGS_URL') !== undefined) {
    if (raw('CTXMESH_EMBEDDINGS_MODEL') === undefined) problems.push('CTXMESH_EMBEDDINGS_MODEL: required when CTXMESH_EMBEDDINGS_URL is set');
    if (raw('CTXMESH_EMBEDDINGS_DIMENSION') === undefined) problems.push('CTXMESH_EMBEDDINGS_DIMENSION: required when CTXMESH_EMBEDDINGS_URL is set');
  }
  const lex = cfg?.CTXMESH_LEXICAL_DIMENSION;
  if (lex !== undefined && (lex & (lex - 1)) !== 0) problems.push(`CTXMESH_LEXICAL_DIMENSION: must be a power of two (got ${lex})`);
  if (problems.length > 0 || cfg === undefined) throw new ConfigError(problems);
  return cfg;
}

function parse(e: Env) {
  return loadConfig(schema, e);
}
