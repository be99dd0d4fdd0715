/**
 * What context assembly runs on: the orchestrator's settings, and the request as the pipeline
 * reads it ({@link ContextInput}) — the gateway's validated `AssembleContextRequest` with the
 * wire's "" and 0 resolved once (packing, time budget, quotas, the enumerations).
 */
import { DEFAULT_PACKING, resolvePacking, UnknownPackingError, type Packing } from '@ctxmesh/kernel';
import type { common, orchestrator } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';

/** Pipeline settings from the orchestrator's config. */
export interface ContextSettings {
  /** Intent analysis (query expansion) enabled (`CTXMESH_ENABLE_INTENT`). */
  enableIntent: boolean;
  /** A chat model is configured in the rewrite service. */
  modelConfigured: boolean;
  /** Expansion fuse in ms (default 5000). */
  expansionTimeoutMs: number;
  /** Digest rewrite fuse in ms (default 30000). */
  rewriteTimeoutMs: number;
  /** Reserve kept for mandatory legs when admitting optional stages, ms. */
  renderReserveMs: number;
  /** Messages read from the session for expansion. */
  expansionMessages: number;
  /**
   * Re-order the gathered candidates with the cross-encoder (`CTXMESH_RERANK_URL` configured
   * and `SEARCH_RERANKING_ENABLED`). Off by default: it changes the order the plugins get.
   * @default false
   */
  rerank?: boolean;
  /** Rerank stage timeout, ms (`SEARCH_RERANKING_TIMEOUT_MS`). @default 8000 */
  rerankTimeoutMs?: number;
  /**
   * Packing of a request that names none (`CTXMESH_CONTEXT_PACKING`). `compat` keeps the
   * contract's bytes for every client that does not ask for another.
   * @default "compat"
   */
  defaultPacking?: Packing;
}

/** A context request as the pipeline reads it (context-contract §1.3, resolved by the gateway). */
export interface ContextInput {
  /** Caller identity. */
  identity: common.Identity | undefined;
  query: string;
  /** Image query ("" = none). */
  imageUrl: string;
  /** Effective filter (absent = none). */
  filter: common.FilterNode | undefined;
  /** Flat-mode limit. */
  limit: number;
  scoreThreshold: number | undefined;
  /** Session id ("" = none). */
  sessionId: string;
  queryExpansion: 'off' | 'auto';
  /** Token budget. */
  maxTokens: number;
  /** Resolved quotas in order; null in flat mode. */
  quotas: common.NamedCount[] | null;
  /** Purpose ("" = none). */
  purpose: string;
  /** Detail pin (absent = none). */
  detail: common.Detail | undefined;
  dedupTurns: number;
  excludeUris: string[];
  peerScope: 'actor' | 'all';
  /** Other-peer penalties, all seven categories in order. */
  otherPeerPenalties: common.NamedValue[];
  /** `on` always attempts a digest, `auto` only with a model (the rewrite service decides). */
  rewrite: 'off' | 'on' | 'auto';
  rewriteMaxBullets: number;
  /** Tokenizer as sent ("" or `estimate` = the estimate). */
  tokenizer: string;
  /** Valid-time instant, ms (absent = now). */
  asOfMs: number | undefined;
  /** Whole-request time budget, ms (null = none). */
  timeBudgetMs: number | null;
  /** Use the code outliner for code files. */
  codeOutline: boolean;
  /** The packing that runs (the server's default when the request named none). */
  packing: Packing;
  /** Also report every candidate's fate and the explanation. */
  explain: boolean;
}

/**
 * The pipeline's input of a wire request.
 * @param defaultPacking the packing of a request that names none
 * @throws CtxError INVALID_ARGUMENT `UNKNOWN_PACKING` for a packing the kernel does not know
 */
export function contextInput(req: orchestrator.AssembleContextRequest, defaultPacking: Packing = DEFAULT_PACKING): ContextInput {
  let packing: Packing;
  try {
    packing = req.packing ? resolvePacking(req.packing) : defaultPacking;
  } catch (err) {
    if (err instanceof UnknownPackingError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_PACKING', err.message, { cause: err });
    throw err;
  }
  return {
    identity: req.identity,
    query: req.query,
    imageUrl: req.imageUrl,
    filter: req.filter,
    limit: req.limit,
    scoreThreshold: req.scoreThreshold,
    sessionId: req.sessionId,
    queryExpansion: req.queryExpansion === 'off' ? 'off' : 'auto',
    maxTokens: req.maxTokens,
    quotas: req.bucketed ? req.quotas : null,
    purpose: req.purpose,
    detail: req.detail,
    dedupTurns: req.dedupTurns,
    excludeUris: req.excludeUris,
    peerScope: req.peerScope === 'actor' ? 'actor' : 'all',
    otherPeerPenalties: req.otherPeerPenalties,
    rewrite: req.rewrite === 'on' || req.rewrite === 'auto' ? req.rewrite : 'off',
    rewriteMaxBullets: req.rewriteMaxBullets,
    tokenizer: req.tokenizer,
    asOfMs: req.asOfMs,
    timeBudgetMs: req.timeBudgetMs > 0 ? req.timeBudgetMs : null,
    codeOutline: req.codeOutline,
    packing,
    explain: req.explain,
  };
}
