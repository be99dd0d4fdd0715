/** Start the orchestrator (used by main.ts and by the all-in-one launcher). */
import { checkHealth, startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import { grpcPorts, type DownstreamAddrs, type LocalServices } from './clients/grpc';
import type { ContextSettings } from './domain/context';
import type { RetrieveSettings } from './domain/retrieve';
import type { TraceSink } from './domain/trace';
import { createServer } from './server';

/** Start options. */
export interface StartOptions {
  port: number;
  host?: string;
  log: Logger;
  /** Downstream service addresses (health checks, and the calls of every downstream not in `local`). */
  addrs: DownstreamAddrs;
  /** Downstreams mounted in this thread, called in process. @default {} (all over gRPC) */
  local?: LocalServices;
  /** Context-mode pipeline settings. */
  settings: ContextSettings;
  /** Retrieve settings. @default defaultRetrieveSettings() (nothing configured, traces off) */
  retrieve?: RetrieveSettings;
  /**
   * Retrieve trace store (e.g. `@ctxmesh/stores` NatsTraceStore or SqliteTraceStore), owned by
   * the caller: stopping the server does not close it. Null/absent = no traces.
   */
  traces?: TraceSink | null;
  /** Budget for calls that arrive without a deadline, ms. */
  defaultDeadlineMs?: number;
}

/** Bind and serve; readiness requires the mandatory downstreams to be SERVING. */
export async function startOrchestrator(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'orchestrator' });
  const ports = grpcPorts(opts.addrs, opts.local);
  const running = await startServer({
    domain: 'orchestrator',
    services: [
      createServer({
        ports,
        settings: opts.settings,
        retrieve: opts.retrieve,
        traces: opts.traces,
        log,
        shutdownSignal: shutdownController.signal,
        defaultDeadlineMs: opts.defaultDeadlineMs,
      }),
    ],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    checkReady: async () => {
      const mandatory = [opts.addrs.gather, opts.addrs.tierReader, opts.addrs.budgetRender];
      const states = await Promise.all(mandatory.map((a) => checkHealth(a, '', 500)));
      return states.every(Boolean);
    },
  });
  return {
    ...running,
    shutdown: async () => {
      await running.shutdown();
      ports.close();
    },
  };
}
