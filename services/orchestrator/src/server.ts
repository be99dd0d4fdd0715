/**
 * createServer(deps): the orchestrator's gRPC service, no env and no listening here.
 */
import { orchestrator } from '@ctxmesh/proto';
import { Code, CtxError, implement, type MountedService } from '@ctxmesh/rpc';
import { observeRpc, stageDuration } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { assembleContext, type ContextSettings } from './domain/context';
import type { Ports } from './domain/ports';
import { defaultRetrieveSettings, retrieve, type RetrieveSettings } from './domain/retrieve';
import { listSearch } from './domain/search';
import { LatencyEstimator, stagePriors } from './domain/stages';
import { mayReadTrace, TRACE_ID_PATTERN, traceFromStored, type TraceSink } from './domain/trace';

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

/**
 * Build the orchestrator's mounted service. One latency estimator serves every request: an
 * optional stage's expected cost starts at its configured timeout and then follows its runs.
 */
export function createServer(deps: OrchestratorDeps): MountedService {
  const rs = deps.retrieve ?? defaultRetrieveSettings();
  const estimator = new LatencyEstimator(
    stagePriors({
      expansionTimeoutMs: deps.settings.expansionTimeoutMs,
      rewriteTimeoutMs: deps.settings.rewriteTimeoutMs,
      queryRewriteTimeoutMs: rs.queryRewriteTimeoutMs,
      rerankTimeoutMs: rs.rerankTimeoutMs,
      graphAssistTimeoutMs: rs.graphAssistTimeoutMs,
    }),
  );
  const observe = (pipeline: string) => (r: { stage: string; outcome: string; ms: number }) =>
    stageDuration.labels(pipeline, r.stage, r.outcome).observe(r.ms / 1000);
  const traces = deps.traces ?? null;
  const implementation = implement<orchestrator.OrchestratorServiceServer>(
    orchestrator.OrchestratorServiceService,
    {
      search: (req, ctx) => listSearch(req, deps.ports, ctx.budget),
      assembleContext: async (req, ctx) => {
        const out = await assembleContext(req, deps.ports, ctx.budget, deps.settings, estimator, observe('context'));
        return {
          entries: out.entries,
          rendered: out.rendered,
          digest: out.digest,
          stats: out.stats,
          stages: out.runner.toProto(),
          fates: out.fates,
          explain: out.explain,
        };
      },
      retrieve: async (req, ctx) => {
        const out = await retrieve(req, deps.ports, ctx.budget, rs, estimator, {
          observe: observe('retrieve'),
          traces,
          warn: (obj, msg) => ctx.log.warn(obj, msg),
        });
        return out.response;
      },
      getTrace: async (req) => {
        const account = req.identity?.accountId ?? '';
        if (!account) throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity with account_id is required');
        if (!TRACE_ID_PATTERN.test(req.traceId)) throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_TRACE_ID', `invalid trace id ${JSON.stringify(req.traceId)}`);
        // Another account's trace — or, for an ordinary user, another user's — is as absent as
        // one never written.
        const found = traces ? await traces.get(req.traceId, account) : null;
        const row = found && mayReadTrace(found, { userId: req.identity?.userId ?? '', role: req.identity?.role ?? 0 }) ? found : null;
        if (!row) throw new CtxError(Code.NOT_FOUND, 'TRACE_NOT_FOUND', `trace '${req.traceId}' not found`, { metadata: { trace_id: req.traceId } });
        return { trace: traceFromStored(row) };
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
