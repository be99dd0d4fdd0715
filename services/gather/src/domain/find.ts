/**
 * List-mode search (context-contract §1.2, §1.6 list): every query against the targets (or
 * the identity's default scope) in one store batch, hits merged by URI keeping the best
 * score, cut to `limit`, bucketed into memories/resources/skills by context type.
 */
import { type FilterNode, checkTargetAccess, searchVisibility, type CallerScope } from '@ctxmesh/stores';
import { bucketByContextType, mergeByUri, type HitLists } from './hits';
import { emptyQueryRejection, imageOnlyRejection } from './rejections';
import type { NodeSearcher } from './searcher';

/** A validated list-mode request. */
export interface FindInput {
  /** The caller. */
  scope: CallerScope;
  /** Queries, original first; blank ones are ignored. */
  queries: string[];
  /** Image query, or null. */
  imageUrl: string | null;
  /** Target URIs (alias-resolved); empty = default scope. */
  targets: string[];
  /** Effective filter, or null. */
  filter: FilterNode | null;
  /** Nodes wanted in total (≤ 0 → none). */
  limit: number;
  /** Minimum calibrated score, or null. */
  scoreThreshold: number | null;
  /** Levels to keep; empty keeps all. */
  levels: number[];
  /** Valid-time instant in ms, or null. */
  asOf: number | null;
}

/**
 * Run a list-mode search.
 *
 * With an image and no text the request is rejected (text-only embedders); with both, the
 * text is searched.
 * @throws InvalidArgumentError (EMPTY_QUERY, IMAGE_QUERY_UNSUPPORTED) for a rejected query
 * @throws AccessDeniedError for a target under another user's root (non-privileged caller)
 */
export async function find(input: FindInput, searcher: NodeSearcher, signal?: AbortSignal): Promise<HitLists> {
  const queries = [...new Set(input.queries.filter((q) => q.trim() !== ''))];
  if (queries.length === 0) {
    throw input.imageUrl ? imageOnlyRejection(searcher.embedderId, searcher.supportsImages) : emptyQueryRejection();
  }
  const targets = input.targets.map((t) => t.trim()).filter((t) => t !== '');
  checkTargetAccess(input.scope, targets);
  if (input.limit <= 0) return { memories: [], resources: [], skills: [] };
  const visibility = searchVisibility(input.scope, { targets });
  const perQuery = await searcher.searchMany(
    queries.map((text) => ({
      text,
      visibility,
      targets,
      filter: input.filter,
      limit: input.limit,
      scoreThreshold: input.scoreThreshold,
      levels: input.levels,
      asOf: input.asOf,
    })),
    signal,
  );
  return bucketByContextType(mergeByUri(perQuery, input.limit));
}
