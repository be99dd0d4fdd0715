/**
 * List-mode search (/find and /search mode "list"): one gather Find; the hit shape of
 * context-contract §1.6 list (exactly context_type, uri, level, score, abstract, tags).
 */
import type { gather, orchestrator } from '@ctxmesh/proto';
import type { Budget } from '@ctxmesh/rpc';
import type { Ports } from './ports';

function toListHit(h: gather.Hit): orchestrator.ListHit {
  return { contextType: h.contextType, uri: h.uri, level: h.level, score: h.score, abstract: h.abstract || h.overview, tags: h.tags };
}

/** Run a list-mode search. */
export async function listSearch(req: orchestrator.SearchRequest, ports: Ports, budget: Budget): Promise<orchestrator.SearchResponse> {
  const res = await ports.gather.find(
    {
      identity: req.identity,
      queries: [req.query],
      imageUrl: req.imageUrl,
      targetUris: req.targetUris,
      filter: req.filter,
      limit: req.limit,
      scoreThreshold: req.scoreThreshold,
      levels: req.levels,
      asOfMs: req.asOfMs,
    },
    budget,
  );
  return {
    memories: res.memories.map(toListHit),
    resources: res.resources.map(toListHit),
    skills: res.skills.map(toListHit),
    queryPlan: [],
    queryPlanReasoning: '',
    hasQueryPlan: false,
  };
}
