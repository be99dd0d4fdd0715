/**
 * The kernel called in process: the orchestrator's pipelines (`assembleContext`,
 * `listSearch`) with their ports implemented by direct calls to the services' own in-process
 * handler factories, over the same vector index and embedder the running mesh uses. Compared
 * side by side with the same request through the gateway, the difference is the price of the
 * mesh (HTTP + gRPC hops + serialisation), nothing else.
 */
import { Metadata } from '@grpc/grpc-js';
import { handlers as budgetRenderHandlers } from '@ctxmesh/budget-render';
import { loadMeshConfig } from '@ctxmesh/ctxmesh';
import type { Embedder } from '@ctxmesh/embedder';
import { handlers as gatherHandlers } from '@ctxmesh/gather';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { createHandlers as ledgerHandlers, createLedgerStore } from '@ctxmesh/ledger';
import { LatencyEstimator, assembleContext, contextInput, listSearch, retrieve, retrieveInput, retrieveSettingsFromConfig, settingsFromConfig, stagePriors, type Ports } from '@ctxmesh/orchestrator';
import type { orchestrator } from '@ctxmesh/proto';
import { createHandlers as rewriteHandlers } from '@ctxmesh/rewrite';
import { Budget, Code, CtxError, type CallContext } from '@ctxmesh/rpc';
import { silentLogger, type Env } from '@ctxmesh/runtime';
import { SessionLog, Workspaces, createHandlers as sessionsHandlers, createSessionsStore } from '@ctxmesh/sessions';
import { openEmbeddedDb, type VectorIndex } from '@ctxmesh/stores';
import { handlers as tierReaderHandlers } from '@ctxmesh/tier-reader';

/** What the in-process kernel runs over (the mesh's own instances). */
export interface InProcessDeps {
  /** The mesh's vector index (same instance: same SQLite handle and scan cache). */
  index: VectorIndex;
  /** The mesh's embedder. */
  embedder: Embedder;
  /** Code outliner, or null. */
  outliner: CodeOutliner | null;
  /** The environment the mesh was started with (same settings). */
  env: Env;
}

/** Output of the context pipeline, as the orchestrator returns it before serialisation. */
export type ContextOutcome = Awaited<ReturnType<typeof assembleContext>>;

/** The pipelines, callable without any network hop. */
export interface InProcessKernel {
  /** Direct-call ports (exposed so a caller can time the stages itself). */
  ports: Ports;
  /** Context mode. */
  assembleContext(req: orchestrator.AssembleContextRequest): Promise<ContextOutcome>;
  /** List mode and /find. */
  search(req: orchestrator.SearchRequest): Promise<orchestrator.SearchResponse>;
  /** Retrieve (the response message; traces off, as in a default mesh). */
  retrieve(req: orchestrator.RetrieveRequest): Promise<orchestrator.RetrieveResponse>;
  /** Release the private ledger/sessions database. */
  close(): void;
}

/** Deadline given to every in-process call, ms (the gateway's default budget). */
export const IN_PROCESS_DEADLINE_MS = 60_000;

type AnyHandler = (req: never, ctx: CallContext) => Promise<unknown>;

/**
 * Ports whose every method calls the matching handler directly with a fresh CallContext
 * carrying the caller's Budget. A method without a handler fails as the server adapter would
 * (UNIMPLEMENTED), so the pipelines degrade the same way in and out of process.
 */
function portOf<M extends string>(domain: string, methods: readonly M[], impl: Partial<Record<string, AnyHandler>>): Record<M, (req: unknown, budget: Budget) => Promise<unknown>> {
  const log = silentLogger();
  const out = {} as Record<M, (req: unknown, budget: Budget) => Promise<unknown>>;
  for (const m of methods) {
    const h = impl[m];
    out[m] = h
      ? (req, budget) => h(req as never, { budget, log, metadata: new Metadata(), requestId: budget.requestId })
      : async () => {
          throw new CtxError(Code.UNIMPLEMENTED, 'UNIMPLEMENTED', `${domain}.${m} is not implemented`);
        };
  }
  return out;
}

/** Build the in-process kernel over the mesh's index and embedder. */
export function inProcessKernel(deps: InProcessDeps): InProcessKernel {
  const cfg = loadMeshConfig(deps.env);
  // Ledger and sessions get a private in-memory database: the bench's requests name no session,
  // so neither is called on either side; they exist so the ports are complete.
  const db = openEmbeddedDb(':memory:');
  const ledgerStore = createLedgerStore({ kind: 'embedded', db, ttlMs: cfg.ledger.LEDGER_TTL_MS });
  const sessionsStore = createSessionsStore({ kind: 'embedded', db });
  const g = gatherHandlers({ index: deps.index, embedder: deps.embedder, embedCacheSize: cfg.gather.GATHER_EMBED_CACHE_SIZE }) as Record<string, AnyHandler>;
  const t = tierReaderHandlers({ index: deps.index, outliner: cfg.tierReader.TIER_READER_CODE_OUTLINE ? deps.outliner : null }) as unknown as Record<string, AnyHandler>;
  const br = budgetRenderHandlers as unknown as Record<string, AnyHandler>;
  const l = ledgerHandlers(ledgerStore, cfg.ledger.LEDGER_STORE_TIMEOUT_MS) as unknown as Record<string, AnyHandler>;
  const rw = rewriteHandlers({ settings: cfg.rewrite.settings }) as unknown as Record<string, AnyHandler>;
  const se = sessionsHandlers({
    sessions: new SessionLog({ store: sessionsStore, maxOverflowRetries: cfg.sessions.CTXMESH_MAX_OVERFLOW_RETRIES, cacheSessions: cfg.sessions.SESSIONS_CACHE_SESSIONS }),
    workspaces: new Workspaces(sessionsStore),
  }) as unknown as Record<string, AnyHandler>;
  const ports = {
    gather: portOf('gather', ['find', 'gatherCandidates', 'gatherPassages', 'expandLinks'], g),
    tierReader: portOf('tier-reader', ['readTiers', 'readContent'], t),
    budgetRender: portOf('budget-render', ['planRender', 'countTokens', 'trimPassages'], br),
    ledger: portOf('ledger', ['beginTurn', 'recordServed'], l),
    rewrite: portOf('rewrite', ['expandQuery', 'rewriteDigest', 'rewriteQuery', 'rerank'], rw),
    sessions: portOf('sessions', ['getSearchContext', 'resolveWorkspace'], se),
  } as unknown as Ports;
  const settings = settingsFromConfig(cfg.orchestrator);
  const rs = retrieveSettingsFromConfig(cfg.orchestrator);
  // One estimator for both pipelines, primed as the orchestrator's server primes its own.
  const estimator = new LatencyEstimator(
    stagePriors({
      expansionTimeoutMs: settings.expansionTimeoutMs,
      rewriteTimeoutMs: settings.rewriteTimeoutMs,
      queryRewriteTimeoutMs: rs.queryRewriteTimeoutMs,
      rerankTimeoutMs: rs.rerankTimeoutMs,
      graphAssistTimeoutMs: rs.graphAssistTimeoutMs,
    }),
  );
  const withBudget = async <T>(requestId: string, fn: (b: Budget) => Promise<T>): Promise<T> => {
    const budget = Budget.ofMs(IN_PROCESS_DEADLINE_MS, { requestId });
    try {
      return await fn(budget);
    } finally {
      budget.dispose();
    }
  };
  return {
    ports,
    assembleContext: (req) => withBudget(req.identity?.requestId ?? '', (b) => assembleContext(contextInput(req, settings.defaultPacking), b, { ports, settings, estimator })),
    search: (req) => withBudget(req.identity?.requestId ?? '', (b) => listSearch(req, ports, b)),
    retrieve: (req) => withBudget(req.identity?.requestId ?? '', async (b) => (await retrieve(retrieveInput(req, rs.defaults), b, { ports, settings: rs, estimator, traces: null })).response),
    close: () => db.close(),
  };
}
