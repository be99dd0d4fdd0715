/**
 * createServer(deps): the orchestrator's gRPC service, no env and no listening here. One file
 * per RPC under `handlers/`, each over a domain function with a typed input.
 */
import { orchestrator } from '@ctxmesh/proto';
import { implement, type Handlers, type MountedService } from '@ctxmesh/rpc';
import { observeRpc, stageDuration } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import type { ContextSettings } from './domain/context';
import type { Ports } from './domain/ports';
import { defaultRetrieveSettings, type RetrieveSettings } from './domain/retrieve';
import { LatencyEstimator, stagePriors } from './domain/stages';
import type { TraceSink } from './domain/trace';
import { assembleContextHandler } from './handlers/assemble-context';
import type { HandlerEnv } from './handlers/env';
import { getTraceHandler } from './handlers/get-trace';
import { readContentHandler } from './handlers/read-content';
import { retrieveHandler } from './handlers/retrieve';
import { searchHandler } from './handlers/search';

/** Dependencies of the orchestrator. */
export interface OrchestratorDeps {
  ports: Ports;
  /** Context-mode settings. */
  settings: ContextSettings;
  /** Retrieve settings. @default defaultRetrieveSettings() (nothing configured, traces off) */
  retrieve?: RetrieveSettings;
  /** Trace store (retrieve traces and GetTrace); null/absent = no traces. */
  traces?: TraceSink | null;
  log: Logger;
  shutdownSignal?: AbortSignal;
  defaultDeadlineMs?: number;
}

/** The handlers of OrchestratorService. */
export type OrchestratorHandlers = Handlers<orchestrator.OrchestratorServiceServer>;

/**
 * The handlers over `deps`, callable in process. One latency estimator serves every request:
 * an optional stage's expected cost starts at its configured timeout and then follows its runs.
 */
export function handlers(deps: Pick<OrchestratorDeps, 'ports' | 'settings' | 'retrieve' | 'traces'>): OrchestratorHandlers {
  const rs = deps.retrieve ?? defaultRetrieveSettings();
  const env: HandlerEnv = {
    ports: deps.ports,
    settings: deps.settings,
    retrieve: rs,
    estimator: new LatencyEstimator(
      stagePriors({
        expansionTimeoutMs: deps.settings.expansionTimeoutMs,
        rewriteTimeoutMs: deps.settings.rewriteTimeoutMs,
        queryRewriteTimeoutMs: rs.queryRewriteTimeoutMs,
        rerankTimeoutMs: rs.rerankTimeoutMs,
        graphAssistTimeoutMs: rs.graphAssistTimeoutMs,
      }),
    ),
    traces: deps.traces ?? null,
    observe: (pipeline) => (r) => stageDuration.labels(pipeline, r.stage, r.outcome).observe(r.ms / 1000),
  };
  return {
    search: searchHandler(env),
    assembleContext: assembleContextHandler(env),
    retrieve: retrieveHandler(env),
    readContent: readContentHandler(env),
    getTrace: getTraceHandler(env),
  };
}

/** Build the orchestrator's mounted service. */
export function createServer(deps: OrchestratorDeps): MountedService {
  const implementation = implement<orchestrator.OrchestratorServiceServer>(orchestrator.OrchestratorServiceService, handlers(deps), {
    domain: 'orchestrator',
    log: deps.log,
    shutdownSignal: deps.shutdownSignal,
    observe: observeRpc,
    defaultDeadlineMs: deps.defaultDeadlineMs,
  });
  return { name: 'ctxmesh.orchestrator.v1.OrchestratorService', definition: orchestrator.OrchestratorServiceService, implementation };
}
