/**
 * createServer(deps): the orchestrator's gRPC service, no env and no listening here.
 */
import { orchestrator } from '@ctxmesh/proto';
import { Code, CtxError, implement, type MountedService } from '@ctxmesh/rpc';
import { observeRpc, stageDuration } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { assembleContext, type ContextSettings } from './domain/context';
import type { Ports } from './domain/ports';
import { listSearch } from './domain/search';
import { LatencyEstimator } from './domain/stages';

/** Dependencies of the orchestrator. */
export interface OrchestratorDeps {
  ports: Ports;
  settings: ContextSettings;
  log: Logger;
  shutdownSignal?: AbortSignal;
  defaultDeadlineMs?: number;
}

/** Stage latency priors (ms) before the estimator has seen a run. */
export const STAGE_PRIORS: Record<string, number> = {
  query_expansion: 500,
  rewrite: 1500,
  query_rewrite: 500,
  rerank: 200,
  graph_assist: 20,
};

/** Build the orchestrator's mounted service. */
export function createServer(deps: OrchestratorDeps): MountedService {
  const estimator = new LatencyEstimator(STAGE_PRIORS);
  const observe = (pipeline: string) => (r: { stage: string; outcome: string; ms: number }) =>
    stageDuration.labels(pipeline, r.stage, r.outcome).observe(r.ms / 1000);
  const implementation = implement<orchestrator.OrchestratorServiceServer>(
    orchestrator.OrchestratorServiceService,
    {
      search: (req, ctx) => listSearch(req, deps.ports, ctx.budget),
      assembleContext: async (req, ctx) => {
        const out = await assembleContext(req, deps.ports, ctx.budget, deps.settings, estimator, observe('context'));
        return { entries: out.entries, rendered: out.rendered, digest: out.digest, statsJson: JSON.stringify(out.stats), stages: out.runner.toProto() };
      },
      readContent: async (req, ctx) => {
        if (!['read', 'abstract', 'overview'].includes(req.tier)) {
          throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_TIER', `unknown tier '${req.tier}'`);
        }
        const r = await deps.ports.tierReader.readContent({ identity: req.identity, uri: req.uri, tier: req.tier }, ctx.budget);
        return { text: r.text };
      },
    },
    { domain: 'orchestrator', log: deps.log, shutdownSignal: deps.shutdownSignal, observe: observeRpc, defaultDeadlineMs: deps.defaultDeadlineMs },
  );
  return { name: 'ctxmesh.orchestrator.v1.OrchestratorService', definition: orchestrator.OrchestratorServiceService, implementation };
}
