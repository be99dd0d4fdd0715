/**
 * Context-mode gathering (context-contract §3): the kernel's `gatherCandidates` with a search
 * function over the node searcher. The retrieval calls of one request are micro-batched into
 * one store batch.
 */
import {
  gatherCandidates,
  gatherEvidence,
  type EvidenceGatherResult,
  type GatherFilter,
  type GatherHit,
  type GatherResult,
  type Penalties,
  type Quotas,
  type SearchCall,
  type SearchLists,
} from '@ctxmesh/kernel';
import { type FilterNode, searchVisibility, type CallerScope } from '@ctxmesh/stores';
import { MicroBatcher } from './batcher';
import { bucketByContextType, type NodeHit } from './hits';
import { emptyQueryRejection, imageOnlyRejection, rejection, RejectReason } from './rejections';
import type { NodeSearch, NodeSearcher } from './searcher';

/** A validated context-gathering request. */
export interface ContextGatherInput {
  /** The caller. */
  scope: CallerScope;
  /** Planned queries, original first (`[""]` when empty). */
  queries: string[];
  /** Image query, or null. */
  imageUrl: string | null;
  /** Effective filter (§1.8), or null. */
  filter: FilterNode | null;
  /** Flat-mode row count. */
  limit: number;
  /** Raw-score threshold, or null. */
  scoreThreshold: number | null;
  /** Resolved quotas (bucketed mode), or null (flat mode). */
  quotas: Quotas | null;
  /** `"actor"` or `"all"` (anything else behaves as `"all"`). */
  peerScope: string;
  /** Resolved other-peer penalties. */
  penalties: Penalties;
  /** exclude_uris ∪ cooled ledger URIs. */
  excluded: string[];
  /** Valid-time instant in ms, or null. */
  asOf: number | null;
  /** `compat` (§3 as written) or `evidence` (a pool sized by the budget). @default "compat" */
  packing?: 'compat' | 'evidence';
  /** Evidence: the request's token budget. @default 1600 */
  maxTokens?: number;
  /** Evidence: the tokenizer the pool's texts are priced in. @default "estimate" */
  tokenizer?: string;
  /** The part of `excluded` the session ledger cooled (fates say `cooled`). */
  cooled?: string[];
  /** Also return the fates of the hits left out. @default false */
  explain?: boolean;
}

/** What gathering produced, plus the store batches it took. */
export interface ContextGatherResult extends GatherResult {
  /** Sizes of the store batches run (one entry per `index.search` call). */
  batchSizes: number[];
  /** Set for the evidence packing: what its pool sizing and relevance floor decided. */
  evidence?: Omit<EvidenceGatherResult, keyof GatherResult>;
}

/** An error the store raises for a filter it cannot evaluate (matched by name: adapters share it). */
export function isUnsupportedFilter(e: unknown): e is Error {
  return e instanceof Error && e.name === 'UnsupportedFilterError';
}

function toGatherHit(h: NodeHit): GatherHit {
  return { uri: h.uri, score: h.score, abstract: h.abstract, overview: h.overview, category: h.category };
}

/** The three lists the kernel expects, from node hits. */
export function toSearchLists(hits: readonly NodeHit[]): SearchLists {
  const b = bucketByContextType(hits);
  return { memories: b.memories.map(toGatherHit), resources: b.resources.map(toGatherHit), skills: b.skills.map(toGatherHit) };
}

/**
 * Gather context candidates.
 *
 * `image_url` is forwarded to every call; the embedders are text-only, so a call with an
 * image and a blank query is rejected (INVALID_ARGUMENT, never a silent empty search), and a
 * call with both searches its text.
 * @param signal aborts embedding (the request's deadline)
 * @throws InvalidArgumentError (tagged with a reason, see `reasonOf`) for a rejected request
 */
export async function gatherContext(input: ContextGatherInput, searcher: NodeSearcher, signal?: AbortSignal): Promise<ContextGatherResult> {
  const batcher = new MicroBatcher<NodeSearch, NodeHit[]>((items) => searcher.searchMany(items, signal));
  const search = async (call: SearchCall<GatherFilter<FilterNode>>): Promise<SearchLists> => {
    if (call.query.trim() === '') {
      throw call.imageUrl ? imageOnlyRejection(searcher.embedderId, searcher.supportsImages) : emptyQueryRejection();
    }
    const targets = call.targetUri ? [call.targetUri] : [];
    let hits: NodeHit[];
    try {
      hits = await batcher.add({
        text: call.query,
        visibility: searchVisibility(input.scope, { targets, openContext: call.openContext }),
        targets,
        // The bucket condition the kernel ANDs in is itself a FilterNode.
        filter: (call.filter as FilterNode | null) ?? null,
        limit: call.limit,
        scoreThreshold: call.scoreThreshold,
        asOf: input.asOf,
      });
    } catch (e) {
      if (isUnsupportedFilter(e)) throw rejection(RejectReason.BAD_FILTER, e.message, e);
      throw e;
    }
    return toSearchLists(hits);
  };
  const params = {
    queries: input.queries.length > 0 ? input.queries : [''],
    userId: input.scope.user,
    role: input.scope.role,
    actorPeerId: input.scope.actorPeer,
    quotas: input.quotas,
    limit: input.limit,
    peerScope: input.peerScope,
    filter: input.filter,
    scoreThreshold: input.scoreThreshold,
    imageUrl: input.imageUrl,
    excluded: input.excluded,
    penalties: input.penalties,
    cooled: input.cooled,
    explain: input.explain,
  };
  if (input.packing === 'evidence') {
    const { candidates, searched, excluded, origins, retrievalErrors, fates, ...evidence } = await gatherEvidence<FilterNode>(
      { ...params, maxTokens: input.maxTokens ?? 1600, tokenizer: input.tokenizer || 'estimate' },
      search,
    );
    return { candidates, searched, excluded, origins, retrievalErrors, ...(fates ? { fates } : {}), evidence, batchSizes: [...batcher.batchSizes] };
  }
  const result = await gatherCandidates<FilterNode>(params, search);
  return { ...result, batchSizes: [...batcher.batchSizes] };
}
