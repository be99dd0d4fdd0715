/**
 * Orchestrator.Retrieve: one-round-trip retrieve (retrieve-contract). The wire request becomes
 * the pipeline's input (`retrieveInput`: identity and query checked, defaults and bounds, the
 * stage choices over the configured defaults); the pipeline answers the response message.
 */
import type { orchestrator } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { retrieve, retrieveInput } from '../domain/retrieve';
import type { HandlerEnv } from './env';

/** Build the Retrieve handler. */
export function retrieveHandler(env: HandlerEnv): Handler<orchestrator.RetrieveRequest, orchestrator.RetrieveResponse> {
  return async (req, ctx) => {
    const input = retrieveInput(req, env.retrieve.defaults);
    const out = await retrieve(input, ctx.budget, {
      ports: env.ports,
      settings: env.retrieve,
      estimator: env.estimator,
      observe: env.observe('retrieve'),
      traces: env.traces,
      warn: (obj, msg) => ctx.log.warn(obj, msg),
    });
    return out.response;
  };
}
