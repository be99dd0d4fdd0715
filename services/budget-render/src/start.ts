/** Start budget-render on a port (used by main.ts and by the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import { closeExactPool } from './domain/offload';
import { createServer } from './server';

/** Start options. */
export interface StartOptions {
  port: number;
  host?: string;
  log: Logger;
}

/** Bind and serve. */
export async function startBudgetRender(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'budget-render' });
  const server = await startServer({
    domain: 'budget-render',
    services: [createServer({ log, shutdownSignal: shutdownController.signal })],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
  });
  // The exact-tokenizer worker (started on first large exact request) goes with the server.
  return {
    ...server,
    shutdown: async () => {
      await server.shutdown();
      await closeExactPool();
    },
  };
}
