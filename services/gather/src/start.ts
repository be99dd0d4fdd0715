/** Start gather on a port (used by main.ts and by the all-in-one launcher). */
import type { Embedder } from '@ctxmesh/embedder';
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { VectorIndex } from '@ctxmesh/stores';
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
  return startServer({
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
  });
}
