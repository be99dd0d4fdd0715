/**
 * Composition root: `ctxmesh serve orchestrator`. The only file that reads process.env.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { connectNats, createLogger, runMain } from '@ctxmesh/runtime';
import { NatsTraceStore, openEmbeddedDb, SqliteTraceStore } from '@ctxmesh/stores';
import { loadOrchestratorConfig, type Config } from './config';
import { defaultRetrieveSettings, type RetrieveSettings } from './domain/retrieve';
import type { TraceSink } from './domain/trace';
import { startOrchestrator } from './start';

/** Run the orchestrator as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'orchestrator' } });
  return runMain('orchestrator', log, async () => {
    const cfg = loadOrchestratorConfig(process.env);
    const closers: Array<() => Promise<unknown>> = [];
    let traces: TraceSink | null = null;
    if (cfg.RETRIEVAL_TRACE_ENABLED) {
      if (cfg.NATS_URL !== undefined) {
        const nc = await connectNats(cfg.NATS_URL, 'ctxmesh-orchestrator');
        closers.push(() => nc.drain());
        traces = await NatsTraceStore.create(nc, { stream: cfg.CTXMESH_TRACE_STREAM, maxAgeMs: cfg.CTXMESH_TRACE_MAX_AGE_MS });
      } else {
        mkdirSync(cfg.CTXMESH_DATA_DIR, { recursive: true });
        const db = openEmbeddedDb(join(cfg.CTXMESH_DATA_DIR, 'ctxmesh.db'));
        closers.push(async () => db.close());
        traces = new SqliteTraceStore(db, { maxAgeMs: cfg.CTXMESH_TRACE_MAX_AGE_MS });
      }
    }
    const server = await startOrchestrator({
      port: cfg.ORCHESTRATOR_PORT,
      host: cfg.ORCHESTRATOR_HOST,
      log,
      addrs: {
        gather: cfg.GATHER_ADDR,
        tierReader: cfg.TIER_READER_ADDR,
        budgetRender: cfg.BUDGET_RENDER_ADDR,
        ledger: cfg.LEDGER_ADDR,
        rewrite: cfg.REWRITE_ADDR,
        sessions: cfg.SESSIONS_ADDR,
      },
      settings: settingsFromConfig(cfg),
      retrieve: retrieveSettingsFromConfig(cfg),
      traces,
      defaultDeadlineMs: cfg.CTXMESH_DEFAULT_DEADLINE_MS,
    });
    return {
      stop: async () => {
        await server.shutdown();
        for (const c of closers.reverse()) await c();
      },
    };
  });
}

/** Context-mode pipeline settings from a parsed config. */
export function settingsFromConfig(cfg: Config) {
  return {
    enableIntent: cfg.CTXMESH_ENABLE_INTENT,
    modelConfigured: cfg.CTXMESH_LLM_URL !== undefined,
    expansionTimeoutMs: cfg.CTXMESH_EXPANSION_TIMEOUT_MS,
    rewriteTimeoutMs: cfg.CTXMESH_REWRITE_TIMEOUT_MS,
    renderReserveMs: cfg.CTXMESH_RENDER_RESERVE_MS,
    expansionMessages: 20,
    rerank: cfg.CTXMESH_RERANK_URL !== undefined && cfg.CTXMESH_CONTEXT_RERANK,
    rerankTimeoutMs: cfg.SEARCH_RERANKING_TIMEOUT_MS,
    defaultPacking: cfg.CTXMESH_CONTEXT_PACKING,
  };
}

/** Retrieve settings from a parsed config (stage timeouts, what is configured, defaults, traces). */
export function retrieveSettingsFromConfig(cfg: Config): RetrieveSettings {
  return defaultRetrieveSettings({
    queryRewriteTimeoutMs: cfg.SEARCH_QUERY_REWRITE_TIMEOUT_MS,
    rerankTimeoutMs: cfg.SEARCH_RERANKING_TIMEOUT_MS,
    graphAssistTimeoutMs: cfg.SEARCH_GRAPH_ASSIST_TIMEOUT_MS,
    reserveMs: cfg.CTXMESH_RENDER_RESERVE_MS,
    modelConfigured: cfg.CTXMESH_LLM_URL !== undefined,
    rerankConfigured: cfg.CTXMESH_RERANK_URL !== undefined,
    defaults: {
      query_rewrite: cfg.SEARCH_QUERY_REWRITE_ENABLED,
      graph_assist: cfg.SEARCH_GRAPH_ASSIST_ENABLED,
      rerank: cfg.SEARCH_RERANKING_ENABLED,
    },
    traceEnabled: cfg.RETRIEVAL_TRACE_ENABLED,
  });
}
