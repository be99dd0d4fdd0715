/** Start the sessions service on a port (used by main.ts and by the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import { SessionLog, Workspaces } from './domain';
import { createServer } from './server';
import type { SessionsStore } from './stores/sessions-store';

/** Start options. */
export interface StartOptions {
  port: number;
  host?: string;
  log: Logger;
  /** The store; the caller owns it (and closes it after shutdown). */
  store: SessionsStore;
  /**
   * Overflow retry budget per agent: a non-negative integer, 0 disables recovery.
   * Validated before binding, so a bad value fails start-up. @default 1
   */
  maxOverflowRetries?: number;
  /** Sessions cached in process. @default 256 */
  cacheSessions?: number;
  /** Readiness poll interval, ms. @default 2000 */
  readyPollMs?: number;
}

/**
 * Bind and serve; readiness (service '') follows the store's ping.
 * @throws ConfigError (the runtime's, as for the environment) for an invalid `maxOverflowRetries`, before anything listens
 */
export async function startSessions(opts: StartOptions): Promise<RunningServer> {
  const sessions = new SessionLog({ store: opts.store, maxOverflowRetries: opts.maxOverflowRetries, cacheSessions: opts.cacheSessions });
  const workspaces = new Workspaces(opts.store);
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'sessions' });
  return startServer({
    domain: 'sessions',
    services: [createServer({ sessions, workspaces, log, shutdownSignal: shutdownController.signal })],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    readyPollMs: opts.readyPollMs,
    checkReady: () => opts.store.ping(),
  });
}
