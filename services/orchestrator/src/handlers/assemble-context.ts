/**
 * Orchestrator.AssembleContext: context mode (context-contract §1.6 context, §3–§8). The wire
 * request becomes the pipeline's input (`contextInput`: packing resolved, "" and 0 read once),
 * the pipeline runs, and its result goes back as the response message.
 */
import type { orchestrator } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { assembleContext, contextInput, type ContextResult } from '../domain/context';
import type { HandlerEnv } from './env';

/** The response message of a finished assembly. */
export function contextResponse(out: ContextResult): orchestrator.AssembleContextResponse {
  return {
    entries: out.entries,
    rendered: out.rendered,
    digest: out.digest,
    stats: out.stats,
    stages: out.runner.toProto(),
    fates: out.fates,
    explain: out.explain,
  };
}

/** Build the AssembleContext handler. */
export function assembleContextHandler(env: HandlerEnv): Handler<orchestrator.AssembleContextRequest, orchestrator.AssembleContextResponse> {
  return async (req, ctx) => {
    const input = contextInput(req, env.settings.defaultPacking);
    const out = await assembleContext(input, ctx.budget, { ports: env.ports, settings: env.settings, estimator: env.estimator, observe: env.observe('context') });
    return contextResponse(out);
  };
}
