/** Start the gateway on a port (used by main.ts and by the all-in-one launcher). */
import { checkHealth, type MountedService } from '@ctxmesh/rpc';
import type { EventBus } from '@ctxmesh/stores';
import { ConfigError, type Logger } from '@ctxmesh/runtime';
import { orchestratorClient } from './clients/orchestrator';
import { sessionsClient } from './clients/sessions';
import type { DeadlineConfig, HooksConfig, ReceiveTimeouts } from './config';
import type { AuthConfig } from './domain';
import { buildApp } from './http/app';
import { packageVersion } from './version';

/** Start options. */
export interface StartGatewayOptions {
  /** HTTP port (0 = any free port). */
  port: number;
  /** Bind host. @default 127.0.0.1 */
  host?: string;
  log: Logger;
  /** Orchestrator `host:port`. */
  orchestratorAddr: string;
  /**
   * The orchestrator, when this thread mounts it (the one-process launcher): called in process
   * instead of over `orchestratorAddr` (which the readiness probe still checks).
   */
  localOrchestrator?: Pick<MountedService, 'definition' | 'implementation' | 'name'>;
  /** Sessions service `host:port`. */
  sessionsAddr: string;
  /** Subject writes are published on. @default "ctxmesh.ingest.write" */
  ingestSubject?: string;
  /** Event bus shared with the indexer; owned by the caller (not closed by `stop`). */
  bus: EventBus;
  /** @default { mode: "dev" } */
  auth?: AuthConfig;
  /** @default { defaultMs: 60000, maxMs: 120000 } */
  deadlines?: DeadlineConfig;
  /** @default 8 MiB */
  bodyLimitBytes?: number;
  /** Largest document a write may carry, UTF-8 bytes. @default 4 MiB */
  maxDocumentBytes?: number;
  /** Receive timeouts against slow senders. @default { headersMs: 10000, requestMs: 30000 } */
  receive?: ReceiveTimeouts;
  /** Timeout of each readiness probe, ms. @default 1000 */
  readyProbeMs?: number;
  /** The harness hook routes. @default DEFAULT_HOOKS */
  hooks?: HooksConfig;
}

/** A running gateway. */
export interface RunningGateway {
  /** `http://host:port`. */
  url: string;
  /** Bound port. */
  port: number;
  /** Stop accepting, finish in-flight requests, close the gRPC channels. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Listen. `/ready` is 200 while the orchestrator and the sessions service are SERVING (the
 * latter follows its store: Redis, or the SQLite file) and the bus answers.
 */
export async function startGateway(opts: StartGatewayOptions): Promise<RunningGateway> {
  const log = opts.log.child({ service: 'gateway' });
  const orchestrator = orchestratorClient(opts.orchestratorAddr, opts.localOrchestrator);
  const sessions = sessionsClient(opts.sessionsAddr);
  const probeMs = opts.readyProbeMs ?? 1000;
  const app = buildApp({
    log,
    auth: opts.auth ?? { mode: 'dev' },
    deadlines: opts.deadlines ?? { defaultMs: 60_000, maxMs: 120_000 },
    orchestrator,
    sessions,
    bus: opts.bus,
    ingestSubject: opts.ingestSubject,
    bodyLimitBytes: opts.bodyLimitBytes,
    maxDocumentBytes: opts.maxDocumentBytes,
    receive: opts.receive,
    hooks: opts.hooks,
    version: packageVersion(),
    readiness: [
      { name: 'orchestrator', critical: true, check: () => checkHealth(opts.orchestratorAddr, '', probeMs) },
      // Sessions' readiness is its store's: a configured store that cannot be reached makes
      // /ready false (context requests still degrade to dedup "unavailable" meanwhile).
      { name: 'sessions', critical: true, check: () => checkHealth(opts.sessionsAddr, '', probeMs) },
      { name: 'event_bus', critical: true, check: () => opts.bus.ping() },
    ],
  });
  const host = opts.host ?? '127.0.0.1';
  try {
    await app.listen({ port: opts.port, host });
  } catch (err) {
    orchestrator.close();
    sessions.close();
    // A busy port is the operator's to fix: say which variable moves it (printed as one line
    // by runMain, like any configuration problem) instead of a stack trace.
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new ConfigError([`GATEWAY_PORT: port ${opts.port} on ${host} is already in use; set GATEWAY_PORT to a free port (or stop what listens there)`]);
    }
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  log.info({ port, auth: opts.auth?.mode ?? 'dev' }, 'listening');
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}`,
    port,
    stop: () =>
      (stopping ??= (async () => {
        await app.close();
        orchestrator.close();
        sessions.close();
        log.info('stopped');
      })()),
  };
}
