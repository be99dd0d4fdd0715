/** Start gather on a port (used by main.ts and by the all-in-one launcher). */
import type { Embedder } from '@ctxmesh/embedder';
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import { addBackgroundWork, type BackgroundWork } from '@ctxmesh/telemetry';
import { EmbeddedVectorIndex, type VectorIndex } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { createServer, gatherReady } from './server';

/** Start options. */
export interface StartOptions {
  /** Port (0 = any free port). */
  port: number;
  /** Bind host. @default 127.0.0.1 */
  host?: string;
  /** Logger. */
  log: Logger;
  /** The vector index (owned by the caller: closing the server does not close it). */
  index: VectorIndex;
  /** Query embedder (dimension = the index's). */
  embedder: Embedder;
  /** Query embeddings kept in the LRU. @default 512 */
  embedCacheSize?: number;
  /** Budget of calls that arrive without a deadline, ms. @default 30000 */
  defaultDeadlineMs?: number;
}

/** Bind and serve; readiness follows the index's `ping`. */
export async function startGather(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'gather' });
  // The index gather searches reports its background work (the embedded one: HNSW rows still
  // to add, lexical tail rows still to merge) in /metrics while gather serves it.
  const background = backgroundWorkOf(opts.index);
  const stopReporting = background ? addBackgroundWork(background) : () => undefined;
  const running = await startServer({
    domain: 'gather',
    services: [
      createServer({
        index: opts.index,
        embedder: opts.embedder,
        log,
        shutdownSignal: shutdownController.signal,
        embedCacheSize: opts.embedCacheSize,
        defaultDeadlineMs: opts.defaultDeadlineMs,
      }),
    ],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    checkReady: () => gatherReady(opts.index),
  }).catch((err: unknown) => {
    stopReporting();
    throw err;
  });
  return {
    ...running,
    shutdown: async () => {
      stopReporting();
      await running.shutdown();
    },
  };
}

/** The index's background-work reader, when it has one (the embedded index; not part of the port). */
function backgroundWorkOf(index: VectorIndex): BackgroundWork | null {
  return index instanceof EmbeddedVectorIndex ? () => index.backgroundRows() : null;
}
