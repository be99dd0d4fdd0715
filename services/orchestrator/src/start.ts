/** Start the orchestrator (used by main.ts and by the all-in-one launcher). */
import { checkHealth, startServer, type RunningServer } from '@ctxmesh/rpc';
import type { Logger } from 'pino';
import { grpcPorts, type DownstreamAddrs } from './clients/grpc';
import type { ContextSettings } from './domain/context';
import { createServer } from './server';

/** Start options. */
export interface StartOptions {
  port: number;
  host?: string;
  log: Logger;
  /** Downstream service addresses. */
  addrs: DownstreamAddrs;
  /** Pipeline settings. */
  settings: ContextSettings;
  /** Budget for calls that arrive without a deadline, ms. */
  defaultDeadlineMs?: number;
}

/** Bind and serve; readiness requires the mandatory downstreams to be SERVING. */
export async function startOrchestrator(opts: StartOptions): Promise<RunningServer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'orchestrator' });
  const ports = grpcPorts(opts.addrs);
  const running = await startServer({
    domain: 'orchestrator',
    services: [createServer({ ports, settings: opts.settings, log, shutdownSignal: shutdownController.signal, defaultDeadlineMs: opts.defaultDeadlineMs })],
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
