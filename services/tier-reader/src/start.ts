/** Start tier-reader on a port (used by main.ts and by the all-in-one launcher). */
import type { CodeOutliner } from '@ctxmesh/kernel';
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { VectorIndex } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { createServer, tierReaderReady } from './server';

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
  /** Code outliner, or null. */
  outliner?: CodeOutliner | null;
  /** Budget of calls that arrive without a deadline, ms. @default 30000 */
  defaultDeadlineMs?: number;
}

/** Bind and serve; readiness follows the index's `ping`. */
export async function startTierReader(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'tier-reader' });
  return startServer({
    domain: 'tier-reader',
    services: [
      createServer({
        index: opts.index,
        outliner: opts.outliner,
        log,
        shutdownSignal: shutdownController.signal,
        defaultDeadlineMs: opts.defaultDeadlineMs,
      }),
    ],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    checkReady: () => tierReaderReady(opts.index),
  });
}
