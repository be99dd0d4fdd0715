/**
 * Graph assist (retrieve-contract "Stages"): expand retrieve's candidates along the links
 * between nodes — the `viking://` URIs the indexer found in each document's body — and score
 * the linked passages against the queries.
 */
import { type FilterNode, searchVisibility, type CallerScope } from '@ctxmesh/stores';
import { mergePoints, passageCandidates, passageTargets, queriesOf, readPassages, workspaceScope, type PassageEnv, type PassageHit } from './passages';

/** Most linked nodes followed per request. */
export const MAX_FOLLOWED_LINKS = 64;

/** A validated graph-assist request. */
export interface LinksInput {
  /** The caller (workspace as for retrieve). */
  scope: CallerScope;
  /** Passage or document URIs to expand from. */
  seedUris: string[];
  /** Queries scoring the linked passages (original first). */
  queries: string[];
  /** Linked passages wanted (≤ 0 → none). */
  limit: number;
  /** Valid-time instant, ms since the epoch. */
  asOf: number;
}

/** Document URI of a passage URI (`U#p3` → `U`). */
export function documentOf(uri: string): string {
  const i = uri.indexOf('#');
  return i < 0 ? uri : uri.slice(0, i);
}

/**
 * The URIs linked from `seeds`' documents, in seed order then link order, without the seeds'
 * own documents, at most {@link MAX_FOLLOWED_LINKS}.
 */
export function linkedUris(seedDocs: readonly string[], linksOf: ReadonlyArray<readonly string[] | null>): string[] {
  const own = new Set(seedDocs);
  const out: string[] = [];
  const seen = new Set<string>();
  for (const links of linksOf) {
    for (const l of links ?? []) {
      if (own.has(l) || seen.has(l)) continue;
      seen.add(l);
      out.push(l);
      if (out.length === MAX_FOLLOWED_LINKS) return out;
    }
  }
  return out;
}

/** The filter selecting the points of linked nodes: a linked document's points, or anything under a linked directory. */
export function linkFilter(links: readonly string[]): FilterNode {
  return {
    op: 'or',
    conds: [{ op: 'must', field: 'doc_uri', conds: [...links] }, ...links.map((l): FilterNode => ({ op: 'prefix', field: 'uri', prefix: `${l}/` }))],
  };
}

/**
 * Expand along links: read the seeds' documents (tenant and workspace visibility applies), follow
 * their links, search the linked nodes' passages with every query (resource roots, levels 2,
 * valid at `asOf`), and return the best `limit` passages with their texts, best first. Seeds'
 * own documents are never returned; no links → no search at all.
 * @throws InvalidArgumentError EMPTY_QUERY
 */
export async function expandLinks(input: LinksInput, env: PassageEnv, signal?: AbortSignal): Promise<PassageHit[]> {
  const queries = queriesOf(input.queries);
  const limit = Math.max(0, Math.floor(input.limit));
  const seedDocs = [...new Set(input.seedUris.map((u) => documentOf(u.trim())).filter((u) => u !== ''))];
  if (limit === 0 || seedDocs.length === 0) return [];
  const scope = workspaceScope(input.scope);
  const targets = passageTargets(scope.user);
  const vis = searchVisibility(scope, { targets });
  const docs = await env.index.get(seedDocs, vis, 'summary');
  const links = linkedUris(
    seedDocs,
    docs.map((d) => d?.links ?? null),
  );
  if (links.length === 0) return [];
  const filter = linkFilter(links);
  const rows = Math.max(4 * limit, 20);
  const points = await env.searcher.searchPoints(
    queries.map((text) => ({ text, visibility: vis, targets, filter, limit: rows, scoreThreshold: null, levels: [2], asOf: input.asOf })),
    signal,
  );
  const own = new Set(seedDocs);
  const candidates = (await passageCandidates(mergePoints(points), env.index, vis)).filter((c) => !own.has(c.docUri)).slice(0, limit);
  return readPassages(candidates, env.index, vis);
}
