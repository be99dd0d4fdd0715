/** Start the ledger on a port (used by main.ts and by the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { LedgerStore } from '@ctxmesh/stores';
import type { Logger } from 'pino';
import { createServer } from './server';

/** Start options. */
export interface StartOptions {
  port: number;
  host?: string;
  log: Logger;
  /** The ledger store; the caller owns it (and closes it after shutdown). */
  store: LedgerStore;
  /** Longest wait for one store call, ms. @default 1000 */
  storeTimeoutMs?: number;
  /** Readiness poll interval, ms. @default 2000 */
  readyPollMs?: number;
}

/** Bind and serve; readiness (service '') follows the store's ping. */
export async function startLedger(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'ledger' });
  return startServer({
    domain: 'ledger',
    services: [createServer({ store: opts.store, log, storeTimeoutMs: opts.storeTimeoutMs, shutdownSignal: shutdownController.signal })],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    readyPollMs: opts.readyPollMs,
    checkReady: () => opts.store.ping(),
  });
}
