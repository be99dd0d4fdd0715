/** Gather.Find: list-mode search (context-contract §1.2, §1.6 list, §1.7). */
import type { gather } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { find } from '../domain/find';
import type { NodeHit } from '../domain/hits';
import { asOfMs, filterOf, scopeOf, toWireError } from './common';
import type { HandlerEnv } from './env';

/** A node hit on the wire (whole nodes only: passages were collapsed, so `doc_uri` is ""). */
export function toWireHit(h: NodeHit): gather.Hit {
  return {
    contextType: h.contextType,
    uri: h.uri,
    level: h.level,
    score: h.score,
    abstract: h.abstract,
    tags: h.tags,
    category: h.category,
    docUri: '',
    overview: h.overview,
  };
}

/** Build the Find handler. */
export function findHandler(env: HandlerEnv): Handler<gather.FindRequest, gather.FindResponse> {
  return async (req, ctx) => {
    try {
      const lists = await find(
        {
          scope: scopeOf(req.identity),
          queries: req.queries,
          imageUrl: req.imageUrl || null,
          targets: req.targetUris,
          filter: filterOf(req.filter),
          limit: req.limit,
          scoreThreshold: req.scoreThreshold ?? null,
          levels: req.levels,
          asOf: asOfMs(req.asOfMs, env.now),
        },
        env.searcher,
        ctx.budget.signal,
      );
      return { memories: lists.memories.map(toWireHit), resources: lists.resources.map(toWireHit), skills: lists.skills.map(toWireHit) };
    } catch (e) {
      return toWireError(e);
    }
  };
}
