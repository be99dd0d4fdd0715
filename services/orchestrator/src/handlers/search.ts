/** Orchestrator.Search: list mode (context-contract §1.2, §1.6 list) — one gather Find. */
import type { orchestrator } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { listSearch } from '../domain/search';
import type { HandlerEnv } from './env';

/** Build the Search handler. */
export function searchHandler(env: HandlerEnv): Handler<orchestrator.SearchRequest, orchestrator.SearchResponse> {
  return (req, ctx) => listSearch(req, env.ports, ctx.budget);
}
