/**
 * The search thread's entry (a `worker_threads` worker started by {@link startSearchThread} in
 * `search-thread.ts`): gather and tier-reader — the services that read the vector index — with a
 * connection of their own to the embedded SQLite file, so that searching runs on the machine's
 * second core while the main thread serves HTTP, orchestrates and writes.
 *
 * Protocol with the main thread (structured messages on the worker's port):
 * - in `workerData`: {@link SearchWorkerData};
 * - out: `{ type: 'ready', gather, tierReader, channel }` once both listen: their gRPC addresses
 *   (health checks, and any caller of another process) and a `MessagePort` that serves both to
 *   the main thread's orchestrator (`serveOverPort`: structured clone, no HTTP/2 or protobuf); or
 *   `{ type: 'failed', message, problems? }` when they cannot start;
 * - in: `{ type: 'stop' }` → both servers drain, the index closes, and the thread ends;
 * - in: `{ type: 'warm' }` → the vector store loads its scan cache now (`warmSoon`), not at the first search;
 * - in: `{ type: 'metrics', id }` → out: `{ type: 'metrics', id, metrics }` (this thread's own
 *   metrics, prom-client JSON, for the main thread's `/metrics`).
 *
 * Telemetry starts before anything loads grpc-js (the module registry is this thread's own).
 */
import { MessageChannel, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { startTelemetry } from '@ctxmesh/telemetry';

/** What the main thread hands the worker. */
export interface SearchWorkerData {
  /** The mesh's environment (every service reads its own variables from it). */
  env: Record<string, string | undefined>;
  /** Logger level of the thread's logger (the main logger's). */
  logLevel: string;
}

/** Messages the worker posts. */
export type SearchWorkerMessage =
  | { type: 'ready'; gather: string; tierReader: string; channel: MessagePort }
  | { type: 'failed'; message: string; problems?: string[] }
  | { type: 'metrics'; id: number; metrics: Awaited<ReturnType<typeof import('@ctxmesh/telemetry').ownMetrics>> };

async function run(port: NonNullable<typeof parentPort>, data: SearchWorkerData): Promise<void> {
  const telemetry = startTelemetry('ctxmesh', data.env);
  const { createLogger, ConfigError } = require('@ctxmesh/runtime') as typeof import('@ctxmesh/runtime');
  const { loadGatherConfig, startGather } = require('@ctxmesh/gather') as typeof import('@ctxmesh/gather');
  const { loadTierReaderConfig, startTierReader } = require('@ctxmesh/tier-reader') as typeof import('@ctxmesh/tier-reader');
  const { createEmbedder, openVectorStore, warmSoon } = require('@ctxmesh/stores') as typeof import('@ctxmesh/stores');
  const { loadOutline } = require('@ctxmesh/outline') as typeof import('@ctxmesh/outline');
  const log = createLogger({ base: { app: 'ctxmesh', thread: 'search' }, level: data.logLevel as 'info' });
  const closers: Array<() => Promise<unknown>> = [];
  const stop = async (): Promise<void> => {
    for (const c of closers.splice(0).reverse()) await c().catch((err: unknown) => log.warn({ err }, 'error while stopping the search thread'));
    await telemetry.shutdown().catch(() => undefined);
    port.close();
  };
  try {
    const gatherCfg = loadGatherConfig(data.env);
    const tierCfg = loadTierReaderConfig(data.env);
    const embedder = createEmbedder(gatherCfg);
    // Its own connection to the file: searches sync their scan cache from the change log, so
    // they see every write the main thread commits.
    const store = await openVectorStore(gatherCfg, embedder.dimension);
    closers.push(() => store.close());
    const outliner = tierCfg.TIER_READER_CODE_OUTLINE ? await loadOutline((err) => log.warn({ err }, 'code outliner unavailable; code files get document overviews')) : null;
    const host = '127.0.0.1';
    const [gather, tierReader] = await Promise.all([
      startGather({ port: 0, host, log, index: store.index, embedder, embedCacheSize: gatherCfg.GATHER_EMBED_CACHE_SIZE }),
      startTierReader({ port: 0, host, log, index: store.index, outliner }),
    ]);
    closers.push(() => gather.shutdown(), () => tierReader.shutdown());
    const { serveOverPort } = require('@ctxmesh/rpc') as typeof import('@ctxmesh/rpc');
    const channel = new MessageChannel();
    const unserve = serveOverPort(channel.port1, [...gather.services, ...tierReader.services]);
    closers.push(async () => {
      unserve();
      channel.port1.close();
    });
    const { ownMetrics } = require('@ctxmesh/telemetry') as typeof import('@ctxmesh/telemetry');
    port.on('message', (m: { type?: string; id?: number }) => {
      if (m?.type === 'stop') void stop();
      // Once the mesh listens: the scan cache loads then rather than at the first question (19 s at 100,000 documents).
      if (m?.type === 'warm') warmSoon(store, log);
      // The main thread's /metrics asks for gather's and tier-reader's RPC metrics.
      if (m?.type === 'metrics') void ownMetrics().then((metrics) => port.postMessage({ type: 'metrics', id: m.id, metrics }));
    });
    port.postMessage({ type: 'ready', gather: gather.address, tierReader: tierReader.address, channel: channel.port2 } satisfies SearchWorkerMessage, [channel.port2]);
  } catch (err) {
    const problems = err instanceof ConfigError ? err.problems : undefined;
    port.postMessage({ type: 'failed', message: err instanceof Error ? err.message : String(err), problems } satisfies SearchWorkerMessage);
    await stop();
  }
}

if (parentPort) void run(parentPort, workerData as SearchWorkerData);
