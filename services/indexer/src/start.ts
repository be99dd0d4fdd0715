/** Start the indexer: gRPC service plus the ingest consumer (used by main.ts and the all-in-one launcher). */
import { startServer, type RunningServer } from '@ctxmesh/rpc';
import { createCore, createServer, type IndexerCore, type IndexerDeps } from './server';
import { IngestConsumer, type IngestConsumerOptions } from './ingest/consumer';

/** Start options. */
export interface StartOptions extends Omit<IndexerDeps, 'shutdownSignal'> {
  port: number;
  host?: string;
  /**
   * Consume the ingest stream from `bus` with these options; `false` (or no bus) serves
   * ApplyWrite only.
   */
  consumer: IngestConsumerOptions | false;
  /** Readiness poll interval, ms. @default 2000 */
  readyPollMs?: number;
}

/** A running indexer. */
export interface RunningIndexer extends RunningServer {
  /** Shared apply path and status book. */
  core: IndexerCore;
  /** The ingest consumer, or null when not consuming. */
  consumer: IngestConsumer | null;
}

/**
 * Bind and serve, then start consuming. Readiness (service '') = index ping and bus ping.
 * Shutdown stops the consumer first (in-flight writes finish and are acked), then drains RPCs,
 * then ends the record threads; the index, bus and embedder stay open (their owner closes them).
 */
export async function startIndexer(opts: StartOptions): Promise<RunningIndexer> {
  const shutdownController = new AbortController();
  const log = opts.log.child({ service: 'indexer' });
  const deps: IndexerDeps = { ...opts, log, shutdownSignal: shutdownController.signal };
  const core = createCore(deps);
  const running = await startServer({
    domain: 'indexer',
    services: [createServer(deps, core)],
    port: opts.port,
    host: opts.host,
    log,
    shutdownController,
    readyPollMs: opts.readyPollMs,
    checkReady: async () => {
      const [index, bus] = await Promise.all([opts.index.ping(), opts.bus ? opts.bus.ping() : Promise.resolve(true)]);
      return index && bus;
    },
  });
  let consumer: IngestConsumer | null = null;
  if (opts.bus !== undefined && opts.consumer !== false) {
    try {
      consumer = await IngestConsumer.start({ bus: opts.bus, applier: core.applier, book: core.book, log }, opts.consumer);
    } catch (err) {
      await running.shutdown();
      await core.close();
      throw err;
    }
  }
  let stopping: Promise<void> | undefined;
  return {
    ...running,
    core,
    consumer,
    shutdown: () => {
      stopping ??= (async () => {
        await consumer?.stop();
        await running.shutdown();
        await core.close();
      })();
      return stopping;
    },
  };
}
