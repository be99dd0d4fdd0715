/** Start budget-render on a port (used by main.ts and by the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
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
  return startServer({
    domain: 'budget-render',
    services: [createServer({ log, shutdownSignal: shutdownController.signal })],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
  });
}
