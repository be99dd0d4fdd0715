/**
 * The whole mesh in one process (`ctxmesh start`, the e2e tests, the CLI's fallback): every
 * service on its own loopback gRPC port, the gateway on HTTP, and stores shared in process —
 * one SQLite file for the embedded index/ledger/sessions (or Redis/Qdrant when configured),
 * the in-process event bus (or NATS JetStream when `NATS_URL` is set).
 *
 * Configuration is every service's own schema read from one environment; all problems are
 * reported together before anything starts.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadOutline } from '@ctxmesh/outline';
import { startBudgetRender } from '@ctxmesh/budget-render';
import { loadGatherConfig, startGather } from '@ctxmesh/gather';
import { loadGatewayConfig, startGateway } from '@ctxmesh/gateway';
import { startIndexer, loadIndexerConfig } from '@ctxmesh/indexer';
import { createLedgerStore, loadLedgerConfig, startLedger } from '@ctxmesh/ledger';
import { loadOrchestratorConfig, retrieveSettingsFromConfig, settingsFromConfig, startOrchestrator, type LocalServices, type TraceSink } from '@ctxmesh/orchestrator';
import { loadRewriteConfig, startRewrite } from '@ctxmesh/rewrite';
import { createSessionsStore, loadSessionsConfig, startSessions } from '@ctxmesh/sessions';
import { loadTierReaderConfig, startTierReader } from '@ctxmesh/tier-reader';
import type { RunningServer } from '@ctxmesh/rpc';
import type { Embedder } from '@ctxmesh/embedder';
import { ConfigError, connectNats, connectRedis, env as envVar, loadConfig, type Env, type Logger } from '@ctxmesh/runtime';
import { startSearchThread } from './search-thread';
import { createEmbedder, DB_FILE, InProcEventBus, NatsEventBus, NatsTraceStore, openEmbeddedDb, openVectorStore, SqliteTraceStore, warmSoon, type EventBus, type VectorIndex } from '@ctxmesh/stores';

/** Name of the embedded SQLite file inside the data dir (`@ctxmesh/stores` `DB_FILE`). */
export { DB_FILE };

/** Options of {@link startMesh}. */
export interface MeshOptions {
  /** Environment (every service's variables). */
  env: Env;
  /** Logger. */
  log: Logger;
  /**
   * Run gather and tier-reader in a search thread of their own (`search-thread.ts`) when the
   * vector store is the embedded one, so searching uses a second core. Needs the built
   * `dist/search-worker.js`. `ctxmesh start` turns it on unless `CTXMESH_SEARCH_THREAD=off`.
   * @default false
   */
  searchThread?: boolean;
}

/** A running mesh. */
export interface Mesh {
  /** Gateway base URL, e.g. http://127.0.0.1:1933. */
  gatewayUrl: string;
  /** gRPC addresses by service. */
  addrs: Record<string, string>;
  /** The event bus the gateway and indexer share. */
  bus: EventBus;
  /** The vector index (for tests and benches). */
  index: VectorIndex;
  /** The embedder shared by gather and the indexer (for tests and benches). */
  embedder: Embedder;
  /** Running gRPC servers of this thread by service (gather and tier-reader are absent when they run in the search thread). */
  servers: Record<string, RunningServer>;
  /** Data directory in use. */
  dataDir: string;
  /** Stop everything, in reverse order. */
  stop(): Promise<void>;
}

type Closer = () => Promise<unknown>;

/** The one-process mesh's own variables (beside every service's). */
export const meshSchema = {
  /**
   * `ctxmesh start` runs gather and tier-reader in a search thread (a second core for searching)
   * when the vector store is embedded; `off` keeps every service on the main thread.
   */
  CTXMESH_SEARCH_THREAD: envVar.bool(true),
  /**
   * The orchestrator calls the services of its own thread in process (`inProcessPort`: same
   * handlers, deadlines, errors and metrics, no HTTP/2 framing or protobuf), the gateway calls
   * the orchestrator so, and gather and tier-reader in the search thread are called over its
   * MessagePort (`ThreadChannel`); `off` sends every call over loopback gRPC.
   */
  CTXMESH_IN_PROCESS_CALLS: envVar.bool(true),
};

/** Read every service's configuration; throws one ConfigError listing all problems. */
export function loadMeshConfig(env: Env) {
  const problems: string[] = [];
  const attempt = <T>(fn: () => T): T | undefined => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      for (const p of err.problems) if (!problems.includes(p)) problems.push(p);
      return undefined;
    }
  };
  const cfg = {
    gateway: attempt(() => loadGatewayConfig(env)),
    orchestrator: attempt(() => loadOrchestratorConfig(env)),
    gather: attempt(() => loadGatherConfig(env)),
    tierReader: attempt(() => loadTierReaderConfig(env)),
    ledger: attempt(() => loadLedgerConfig(env)),
    rewrite: attempt(() => loadRewriteConfig(env)),
    sessions: attempt(() => loadSessionsConfig(env)),
    indexer: attempt(() => loadIndexerConfig(env)),
    mesh: attempt(() => loadConfig(meshSchema, env)),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return cfg as { [K in keyof typeof cfg]: NonNullable<(typeof cfg)[K]> };
}

/** Start every service; resolves when the gateway is listening. */
export async function startMesh(opts: MeshOptions): Promise<Mesh> {
  const { env, log } = opts;
  const cfg = loadMeshConfig(env);
  const closers: Closer[] = [];
  const stopAll = async () => {
    for (const c of closers.splice(0).reverse()) {
      await c().catch((err: unknown) => log.warn({ err }, 'error while stopping'));
    }
  };
  const host = '127.0.0.1';
  const dataDir = resolve(cfg.gather.CTXMESH_DATA_DIR);
  try {
    // Shared stores.
    const embedder = createEmbedder(cfg.gather);
    let db: ReturnType<typeof openEmbeddedDb> | null = null;
    const needsDb = cfg.gather.CTXMESH_VECTOR === 'embedded' || !cfg.ledger.REDIS_URL;
    if (needsDb) {
      mkdirSync(dataDir, { recursive: true });
      const opened = openEmbeddedDb(join(dataDir, DB_FILE));
      db = opened;
      closers.push(async () => opened.close());
    }
    // The embedded index shares the mesh's one SQLite handle with the ledger and sessions.
    const store = await openVectorStore(cfg.gather, embedder.dimension, { db: db ?? undefined });
    closers.push(() => store.close());
    const index = store.index;

    const redis = cfg.ledger.REDIS_URL ? await connectRedis(cfg.ledger.REDIS_URL) : null;
    if (redis) closers.push(() => redis.quit());

    let bus: EventBus;
    let natsConn: Awaited<ReturnType<typeof connectNats>> | null = null;
    if (env.NATS_URL) {
      const nc = await connectNats(env.NATS_URL, 'ctxmesh');
      natsConn = nc;
      closers.push(() => nc.drain());
      const nats = await NatsEventBus.create(nc, {
        stream: cfg.gateway.ingest.stream,
        subjects: [cfg.indexer.CTXMESH_INGEST_SUBJECTS],
        deadLetterSubject: cfg.gateway.ingest.deadLetterSubject,
        doneSubjectPrefix: cfg.gateway.ingest.doneSubjectPrefix,
        onError: (err, context) => log.warn({ err, context }, 'event bus error'),
      });
      bus = nats;
    } else {
      bus = new InProcEventBus({ subjects: [cfg.indexer.CTXMESH_INGEST_SUBJECTS] });
    }
    const theBus = bus;
    closers.push(() => theBus.close());

    const outliner = await loadOutline((err) => log.warn({ err }, 'code outliner unavailable; code files get document overviews'));

    // Leaf services on free loopback ports.
    const servers: Record<string, RunningServer> = {};
    const up = (name: string, s: RunningServer) => {
      servers[name] = s;
      closers.push(() => s.shutdown());
      return s;
    };
    // Loads the readers' scan cache once the mesh listens (here, or in the search thread).
    let warmReaders = (): void => warmSoon(store, log);
    // The readers of the index: in the search thread (embedded store, when asked), else here.
    const readers = async (): Promise<{ gather: string; tierReader: string; local: LocalServices }> => {
      if (opts.searchThread && cfg.gather.CTXMESH_VECTOR === 'embedded') {
        const thread = await startSearchThread(env, log.level);
        closers.push(() => thread.stop());
        warmReaders = () => thread.warm();
        // Another thread of this process: its services are called over the thread's channel
        // (when in-process calls are on; the orchestrator's `local` below decides).
        return { gather: thread.gather, tierReader: thread.tierReader, local: { gather: thread.channel, tierReader: thread.channel } };
      }
      const [g, t] = await Promise.all([
        startGather({ port: 0, host, log, index, embedder, embedCacheSize: cfg.gather.GATHER_EMBED_CACHE_SIZE }),
        startTierReader({ port: 0, host, log, index, outliner: cfg.tierReader.TIER_READER_CODE_OUTLINE ? outliner : null }),
      ]);
      up('gather', g);
      up('tier-reader', t);
      return { gather: g.address, tierReader: t.address, local: { gather: g.services[0], tierReader: t.services[0] } };
    };
    const [read, budgetRender, ledger, rewrite, sessions] = await Promise.all([
      readers(),
      startBudgetRender({ port: 0, host, log }),
      startLedger({
        port: 0,
        host,
        log,
        store: createLedgerStore(redis ? { kind: 'redis', redis, keyPrefix: cfg.ledger.LEDGER_KEY_PREFIX, ttlMs: cfg.ledger.LEDGER_TTL_MS } : { kind: 'embedded', db: db!, ttlMs: cfg.ledger.LEDGER_TTL_MS }),
        storeTimeoutMs: cfg.ledger.LEDGER_STORE_TIMEOUT_MS,
      }),
      startRewrite({ port: 0, host, log, settings: cfg.rewrite.settings }),
      startSessions({
        port: 0,
        host,
        log,
        store: createSessionsStore(redis ? { kind: 'redis', redis, keyPrefix: cfg.sessions.SESSIONS_KEY_PREFIX } : { kind: 'embedded', db: db! }),
        maxOverflowRetries: cfg.sessions.CTXMESH_MAX_OVERFLOW_RETRIES,
        cacheSessions: cfg.sessions.SESSIONS_CACHE_SESSIONS,
      }),
    ]);
    up('budget-render', budgetRender);
    up('ledger', ledger);
    up('rewrite', rewrite);
    up('sessions', sessions);
    const indexer = up(
      'indexer',
      await startIndexer({
        port: 0,
        host,
        log,
        index,
        embedder,
        outliner,
        bus,
        embedBatchSize: cfg.indexer.INDEXER_EMBED_BATCH,
        recordThreads: cfg.indexer.INDEXER_RECORD_THREADS,
        consumer: {
          durable: cfg.indexer.INDEXER_DURABLE,
          subjects: [cfg.indexer.CTXMESH_INGEST_SUBJECTS],
          maxDeliver: cfg.indexer.INDEXER_MAX_DELIVER,
          ackWaitMs: cfg.indexer.INDEXER_ACK_WAIT_MS,
          concurrency: cfg.indexer.INDEXER_CONCURRENCY,
          batchSize: cfg.indexer.INDEXER_BATCH_SIZE,
          batchWaitMs: cfg.indexer.INDEXER_BATCH_WAIT_MS,
          retryDelayMs: cfg.indexer.INDEXER_RETRY_DELAY_MS,
        },
      }),
    );

    const addrs = {
      gather: read.gather,
      tierReader: read.tierReader,
      budgetRender: budgetRender.address,
      ledger: ledger.address,
      rewrite: rewrite.address,
      sessions: sessions.address,
    };
    // Retrieval traces (RETRIEVAL_TRACE_ENABLED): a JetStream stream with NATS, else the SQLite file.
    let traces: TraceSink | null = null;
    if (cfg.orchestrator.RETRIEVAL_TRACE_ENABLED) {
      const maxAgeMs = cfg.orchestrator.CTXMESH_TRACE_MAX_AGE_MS;
      if (natsConn) traces = await NatsTraceStore.create(natsConn, { stream: cfg.orchestrator.CTXMESH_TRACE_STREAM, maxAgeMs });
      else {
        if (!db) {
          mkdirSync(dataDir, { recursive: true });
          const opened = openEmbeddedDb(join(dataDir, DB_FILE));
          db = opened;
          closers.push(async () => opened.close());
        }
        traces = new SqliteTraceStore(db, { maxAgeMs });
      }
    }
    const orchestrator = up(
      'orchestrator',
      await startOrchestrator({
        port: 0,
        host,
        log,
        addrs,
        // Services of this thread are called in process; the search thread's over gRPC.
        local: cfg.mesh.CTXMESH_IN_PROCESS_CALLS
          ? { ...read.local, budgetRender: budgetRender.services[0], ledger: ledger.services[0], rewrite: rewrite.services[0], sessions: sessions.services[0] }
          : {},
        settings: settingsFromConfig(cfg.orchestrator),
        retrieve: retrieveSettingsFromConfig(cfg.orchestrator),
        traces,
        defaultDeadlineMs: cfg.orchestrator.CTXMESH_DEFAULT_DEADLINE_MS,
      }),
    );

    const gateway = await startGateway({
      port: cfg.gateway.port,
      host: env.GATEWAY_HOST ?? host,
      log,
      orchestratorAddr: orchestrator.address,
      // The gateway's hop into the orchestrator of this thread is in process too.
      ...(cfg.mesh.CTXMESH_IN_PROCESS_CALLS ? { localOrchestrator: orchestrator.services[0] } : {}),
      sessionsAddr: sessions.address,
      bus,
      ingestSubject: cfg.gateway.ingest.subject,
      auth: cfg.gateway.auth,
      deadlines: cfg.gateway.deadlines,
      bodyLimitBytes: cfg.gateway.bodyLimitBytes,
      maxDocumentBytes: cfg.gateway.maxDocumentBytes,
      receive: cfg.gateway.receive,
      hooks: cfg.gateway.hooks,
    });
    closers.push(() => gateway.stop());
    // Listening: the first question should not be the one that loads the scan cache.
    warmReaders();

    return {
      gatewayUrl: gateway.url,
      addrs: { ...addrs, orchestrator: orchestrator.address, indexer: indexer.address },
      bus,
      index,
      embedder,
      servers,
      dataDir,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
