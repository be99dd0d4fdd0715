/** Gather.ExpandLinks: graph assist (retrieve-contract "Stages"). */
import type { gather } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { expandLinks } from '../domain/links';
import { asOfMs, scopeOf, toWireError } from './common';
import type { HandlerEnv } from './env';
import { toPassageRef } from './gather-passages';

/** Build the ExpandLinks handler. */
export function expandLinksHandler(env: HandlerEnv): Handler<gather.ExpandLinksRequest, gather.ExpandLinksResponse> {
  return async (req, ctx) => {
    try {
      const passages = await expandLinks(
        { scope: scopeOf(req.identity), seedUris: req.seedUris, queries: req.queries, limit: req.limit, asOf: asOfMs(req.asOfMs, env.now) },
        env,
        ctx.budget.signal,
      );
      return { passages: passages.map(toPassageRef) };
    } catch (e) {
      return toWireError(e);
    }
  };
}
