/**
 * The mesh as separate processes: `ctxmesh serve <service>` once per service, as containers
 * run it, sharing the embedded SQLite file through `CTXMESH_DATA_DIR` and the event bus
 * through NATS JetStream. Every stream and subject carries a unique prefix so the bench never
 * touches another mesh on the same NATS server, and the streams are deleted at the end.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { connectNats } from '@ctxmesh/runtime';
import { NatsEventBus } from '@ctxmesh/stores';
import { waitForOk } from './http';
import { freePort, stopChild } from './procs';

/** Services in start order (leaves first, the gateway last). */
export const SERVICES = ['gather', 'tier-reader', 'budget-render', 'ledger', 'rewrite', 'sessions', 'indexer', 'orchestrator', 'gateway'] as const;

/** A service name. */
export type ServiceName = (typeof SERVICES)[number];

/** A running multi-process mesh. */
export interface Cluster {
  /** Gateway base URL. */
  gatewayUrl: string;
  /** Pid of each service process. */
  pids: Record<ServiceName, number>;
  /** Stop every process and delete the bench's NATS streams. */
  stop(): Promise<void>;
}

/** Options of {@link startCluster}. */
export interface ClusterOptions {
  /** Data directory holding (or receiving) `ctxmesh.db`. */
  dataDir: string;
  /** NATS server URL (JetStream enabled). */
  natsUrl: string;
  /** Where each service's stdout/stderr go (`<svc>.log`). */
  logDir: string;
  /** Readiness wait, ms. @default 60000 */
  readyTimeoutMs?: number;
}

/** Thrown when the processes did not become ready; carries the tail of every log. */
export class ClusterStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterStartError';
  }
}

/** Path of the built `ctxmesh` CLI. */
export function ctxmeshBin(): string {
  return join(dirname(require.resolve('@ctxmesh/ctxmesh/package.json')), 'dist', 'bin.js');
}

const PORT_VAR: Record<ServiceName, string> = {
  gather: 'GATHER_PORT',
  'tier-reader': 'TIER_READER_PORT',
  'budget-render': 'BUDGET_RENDER_PORT',
  ledger: 'LEDGER_PORT',
  rewrite: 'REWRITE_PORT',
  sessions: 'SESSIONS_PORT',
  indexer: 'INDEXER_PORT',
  orchestrator: 'ORCHESTRATOR_PORT',
  gateway: 'GATEWAY_PORT',
};

const HOST_VAR: Record<ServiceName, string> = {
  gather: 'GATHER_HOST',
  'tier-reader': 'TIER_READER_HOST',
  'budget-render': 'BUDGET_RENDER_HOST',
  ledger: 'LEDGER_HOST',
  rewrite: 'REWRITE_HOST',
  sessions: 'SESSIONS_HOST',
  indexer: 'INDEXER_HOST',
  orchestrator: 'ORCHESTRATOR_HOST',
  gateway: 'GATEWAY_HOST',
};

/** Delete JetStream streams by name over the JetStream API (nothing but the bench's own). */
export async function deleteStreams(natsUrl: string, names: readonly string[]): Promise<void> {
  const nc = await connectNats(natsUrl, 'ctxmesh-bench-cleanup');
  try {
    for (const name of names) await nc.request(`$JS.API.STREAM.DELETE.${name}`, '', { timeout: 5000 }).catch(() => undefined);
  } finally {
    await nc.close();
  }
}

/** The bus names of one bench run: a stream, subjects and a durable nobody else uses. */
export function busNames(prefix: string): Record<string, string> {
  return {
    CTXMESH_INGEST_STREAM: `BENCH_${prefix}`,
    CTXMESH_INGEST_SUBJECT: `${prefix}.ingest.write`,
    CTXMESH_INGEST_SUBJECTS: `${prefix}.ingest.>`,
    CTXMESH_INGEST_DLQ_SUBJECT: `${prefix}.dlq`,
    CTXMESH_INGEST_DONE_PREFIX: `${prefix}.done`,
    INDEXER_DURABLE: `${prefix}-indexer`,
  };
}

/** Start every service as its own process and wait until the gateway is ready. */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  mkdirSync(opts.logDir, { recursive: true });
  const prefix = `bench${process.pid}x${Date.now().toString(36)}`;
  const bus = busNames(prefix);
  const ports = {} as Record<ServiceName, number>;
  for (const s of SERVICES) ports[s] = await freePort();
  const addr = (s: ServiceName) => `127.0.0.1:${ports[s]}`;
  const shared: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LOG_LEVEL: 'warn',
    CTXMESH_DATA_DIR: opts.dataDir,
    NATS_URL: opts.natsUrl,
    GATHER_ADDR: addr('gather'),
    TIER_READER_ADDR: addr('tier-reader'),
    BUDGET_RENDER_ADDR: addr('budget-render'),
    LEDGER_ADDR: addr('ledger'),
    REWRITE_ADDR: addr('rewrite'),
    SESSIONS_ADDR: addr('sessions'),
    ORCHESTRATOR_ADDR: addr('orchestrator'),
    ...bus,
  };
  const children = new Map<ServiceName, ChildProcess>();
  const bin = ctxmeshBin();
  const stop = async () => {
    // Reverse order: the gateway stops taking requests first.
    for (const s of [...SERVICES].reverse()) {
      const c = children.get(s);
      if (c) await stopChild(c);
    }
    await deleteStreams(opts.natsUrl, NatsEventBus.streamsOf(bus.CTXMESH_INGEST_STREAM!)).catch(() => undefined);
  };
  try {
    for (const s of SERVICES) {
      const out = openSync(join(opts.logDir, `${s}.log`), 'a');
      const child = spawn(process.execPath, [bin, 'serve', s], {
        env: { ...shared, [PORT_VAR[s]]: String(ports[s]), [HOST_VAR[s]]: '127.0.0.1' },
        stdio: ['ignore', out, out],
      });
      children.set(s, child);
    }
    const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;
    const waited = await waitForOk(gatewayUrl, '/ready', opts.readyTimeoutMs ?? 60_000, 100);
    if (waited === null) {
      const tails = SERVICES.map((s) => {
        let text = '';
        try {
          text = readFileSync(join(opts.logDir, `${s}.log`), 'utf8').slice(-600);
        } catch {
          text = '(no log)';
        }
        const c = children.get(s);
        return `--- ${s} (exit ${c?.exitCode ?? c?.signalCode ?? 'running'}):\n${text}`;
      });
      throw new ClusterStartError(`the separate-process mesh was not ready within ${opts.readyTimeoutMs ?? 60_000} ms\n${tails.join('\n')}`);
    }
    const pids = Object.fromEntries([...children].map(([s, c]) => [s, c.pid ?? -1])) as Record<ServiceName, number>;
    return { gatewayUrl, pids, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
