/**
 * Orchestrator configuration from the environment (every problem listed at once).
 */
import { PACKINGS } from '@ctxmesh/kernel';
import { env, loadConfig, type Env } from '@ctxmesh/runtime';

/** Schema: env var name → parser. */
export const schema = {
  ORCHESTRATOR_PORT: env.port(50061),
  /** Bind host; `ctxmesh serve orchestrator` runs in a container, so every interface by default. */
  ORCHESTRATOR_HOST: env.str('0.0.0.0'),
  GATHER_ADDR: env.addr('127.0.0.1:50062'),
  TIER_READER_ADDR: env.addr('127.0.0.1:50063'),
  BUDGET_RENDER_ADDR: env.addr('127.0.0.1:50064'),
  LEDGER_ADDR: env.addr('127.0.0.1:50065'),
  REWRITE_ADDR: env.addr('127.0.0.1:50066'),
  SESSIONS_ADDR: env.addr('127.0.0.1:50067'),
  /** Intent analysis (query expansion); false keeps sessions untouched. */
  CTXMESH_ENABLE_INTENT: env.bool(true),
  /** Set when the rewrite service has a chat model (CTXMESH_LLM_URL). */
  CTXMESH_LLM_URL: env.optUrl(['http', 'https']),
  /** Query expansion fuse (context-contract §8.1). */
  CTXMESH_EXPANSION_TIMEOUT_MS: env.int(5000, 1, 600_000),
  /** Digest rewrite fuse (context-contract §8.2). */
  CTXMESH_REWRITE_TIMEOUT_MS: env.int(30_000, 1, 600_000),
  /** Retrieve query rewrite stage timeout. */
  SEARCH_QUERY_REWRITE_TIMEOUT_MS: env.int(6000, 1, 600_000),
  /** Cross-encoder rerank stage timeout. */
  SEARCH_RERANKING_TIMEOUT_MS: env.int(8000, 1, 600_000),
  /** Graph assist stage timeout. */
  SEARCH_GRAPH_ASSIST_TIMEOUT_MS: env.int(2000, 1, 600_000),
  /** Reserve kept for mandatory legs when admitting optional stages. */
  CTXMESH_RENDER_RESERVE_MS: env.int(20, 0, 60_000),
  /** Budget of calls that arrive without a deadline. */
  CTXMESH_DEFAULT_DEADLINE_MS: env.int(60_000, 1, 600_000),
  /** Set when the rewrite service has a `/rerank` endpoint (the rerank stage is configured). */
  CTXMESH_RERANK_URL: env.optUrl(['http', 'https']),
  /** Retrieve runs query rewrite unless the request's `stages` says otherwise (needs a model). */
  SEARCH_QUERY_REWRITE_ENABLED: env.bool(true),
  /** Retrieve runs cross-encoder rerank unless the request's `stages` says otherwise (needs CTXMESH_RERANK_URL). */
  SEARCH_RERANKING_ENABLED: env.bool(true),
  /** Retrieve runs graph assist unless the request's `stages` says otherwise. */
  SEARCH_GRAPH_ASSIST_ENABLED: env.bool(false),
  /** Context mode re-orders its candidates with the cross-encoder too (needs CTXMESH_RERANK_URL). */
  CTXMESH_CONTEXT_RERANK: env.bool(false),
  /** Packing of a context request that names none: `compat` (the contract's kernel) or `evidence`. */
  CTXMESH_CONTEXT_PACKING: env.oneOf(PACKINGS, 'evidence'),
  /** Write one trace row per retrieve request. */
  RETRIEVAL_TRACE_ENABLED: env.bool(false),
  /** NATS server holding the trace stream; unset → the embedded SQLite file in CTXMESH_DATA_DIR. */
  NATS_URL: env.optUrl(['nats', 'tls', 'ws', 'wss']),
  /** Directory of the embedded SQLite file (traces without NATS). */
  CTXMESH_DATA_DIR: env.str('.ctxmesh'),
  /** JetStream stream of the trace rows. */
  CTXMESH_TRACE_STREAM: env.str('CTXMESH_TRACES'),
  /** Retention of trace rows, ms (default 7 days). */
  CTXMESH_TRACE_MAX_AGE_MS: env.int(7 * 24 * 3600 * 1000, 1000, 365 * 24 * 3600 * 1000),
};

/** Parsed configuration. */
export type Config = ReturnType<typeof loadOrchestratorConfig>;

/** Parse and validate. @throws ConfigError listing every problem */
export function loadOrchestratorConfig(e: Env) {
  return loadConfig(schema, e);
}
