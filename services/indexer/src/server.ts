/**
 * createServer(deps): the indexer's gRPC service. No env, no listening, no side effects on
 * import. The apply path ({@link Applier}) and the status book are shared with the bus
 * consumer, so ApplyWrite and the ingest stream write through the same code and ordering.
 */
import type { Embedder } from '@ctxmesh/embedder';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { indexer } from '@ctxmesh/proto';
import { implement, type MountedService } from '@ctxmesh/rpc';
import type { EventBus, VectorIndex } from '@ctxmesh/stores';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { Applier } from './domain/apply';
import { MAX_PASSAGE_TOKENS } from './domain/chunk';
import { WriteStatusBook } from './domain/status';
import { applyWriteHandler } from './handlers/apply-write';
import { getIndexStatsHandler } from './handlers/get-index-stats';
import { getWriteStatusHandler } from './handlers/get-write-status';
import { RecordPool } from './threads/record-pool';

/** Dependencies of the indexer. */
export interface IndexerDeps {
  /** The vector index written to (the caller owns it). */
  index: VectorIndex;
  /** Embedder; its dimension must match the index. */
  embedder: Embedder;
  /** Code outliner (`@ctxmesh/outline`'s `outline`); absent → code overviews fall back to §4.4 rules 3–4. */
  outliner?: CodeOutliner | null;
  /** Event bus: ApplyWrite announces its outcomes on it; the consumer reads the ingest stream from it. */
  bus?: EventBus;
  log: Logger;
  /** Texts per embedder call. @default 64 */
  embedBatchSize?: number;
  /** Passage size limit, estimated tokens. @default 512 */
  maxPassageTokens?: number;
  /** Writes remembered for GetWriteStatus. @default 10000 */
  statusCapacity?: number;
  /**
   * Worker threads that build (and, with the built-in lexical embedder, embed) the records of
   * the documents written, off the event loop ({@link RecordPool}); 0 builds them in process.
   * @default 0
   */
  recordThreads?: number;
  shutdownSignal?: AbortSignal;
}

/** The state shared by the RPC handlers and the bus consumer. */
export interface IndexerCore {
  applier: Applier;
  book: WriteStatusBook;
  /** The record threads (null: records are built in process). */
  pool: RecordPool | null;
  /** Release what the core started (the record threads). */
  close(): Promise<void>;
}

/** Build the shared apply path and status book. */
export function createCore(deps: IndexerDeps): IndexerCore {
  const maxPassageTokens = deps.maxPassageTokens ?? MAX_PASSAGE_TOKENS;
  const threads = Math.max(0, Math.floor(deps.recordThreads ?? 0));
  const pool = threads > 0 ? new RecordPool({ threads, embedder: deps.embedder, outliner: deps.outliner ?? null, maxPassageTokens, log: deps.log }) : null;
  return {
    applier: new Applier({
      index: deps.index,
      embedder: deps.embedder,
      outliner: deps.outliner,
      embedBatchSize: deps.embedBatchSize,
      maxPassageTokens,
      builder: pool ?? undefined,
    }),
    book: new WriteStatusBook(deps.statusCapacity),
    pool,
    close: async () => {
      await pool?.close();
    },
  };
}

/** The handlers, also callable in process (the all-in-one mesh, benchmarks). */
export function createHandlers(core: IndexerCore, deps: Pick<IndexerDeps, 'index' | 'bus'>) {
  return {
    applyWrite: applyWriteHandler(core.applier, core.book, deps.bus),
    getWriteStatus: getWriteStatusHandler(core.book),
    getIndexStats: getIndexStatsHandler(deps.index, core.book),
  };
}

/** Build the mounted service (over `core` when given, so a consumer can share it). */
export function createServer(deps: IndexerDeps, core: IndexerCore = createCore(deps)): MountedService {
  return {
    name: 'ctxmesh.indexer.v1.IndexerService',
    definition: indexer.IndexerServiceService,
    implementation: implement<indexer.IndexerServiceServer>(indexer.IndexerServiceService, createHandlers(core, deps), {
      domain: 'indexer',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      observe: observeRpc,
    }),
  };
}
