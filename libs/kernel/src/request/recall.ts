/**
 * `/recall` (context-contract §9): the deprecated v1 preset, folded into the same normalised
 * context request that `/search` mode context produces.
 */
import { resolvePenalties } from './penalties';
import { normalizeDetailParam, rewriteModeOf } from './params';
import { pyRound } from '../budget/python';
import { normalizeQuotas, RECALL_DEFAULT_QUOTAS } from './quotas';
import type { Packing } from '../budget/packing';
import type { TokenizerName } from '../budget/tokens';
import type { ContextDetail, ContextRequest, DetailTier, PeerScope, Purpose, QueryExpansion } from './types';

/** Recall defaults that differ from `/search` (§9.2). */
export const RECALL_DEFAULTS = Object.freeze({
  maxTokens: 1600,
  scoreThreshold: 0.1,
  purpose: 'coding' as Purpose,
  dedupTurnsWithSession: 5,
  limit: 10,
  /** Floor of a `max_chars`-derived budget. */
  minFoldedTokens: 64,
});

/** The v1 alias names, in the fixed order `aliases_used` reports them. */
export const RECALL_ALIASES = ['max_chars', 'min_score', 'render'] as const;

/** `stats.deprecated` of a `/recall` response (§9.4). */
export interface DeprecatedStats {
  endpoint: '/api/v1/search/recall';
  successor: '/api/v1/search/search';
  successor_body: { mode: 'context' };
  /** Aliases present in the body (presence, not value), in {@link RECALL_ALIASES} order. */
  aliases_used: Array<(typeof RECALL_ALIASES)[number]>;
}

/**
 * A validated `/recall` body. A member is `undefined` when the key was absent from the JSON
 * body and `null` when it was sent as null; the folding depends on that difference.
 */
export interface RecallInput {
  query: string;
  quotas?: Record<string, number> | null;
  max_chars?: number;
  min_score?: number;
  peer_scope?: PeerScope;
  other_peer_penalty?: unknown;
  render?: boolean | 'full' | 'compact';
  session_id?: string | null;
  query_expansion?: QueryExpansion | null;
  max_tokens?: number | null;
  purpose?: Purpose | null;
  detail?: 'auto' | DetailTier | Record<string, DetailTier> | null;
  score_threshold?: number | null;
  dedup_turns?: number | null;
  /** Already normalised by the gateway (trimmed, validated, `~`-expanded). */
  exclude_uris?: string[];
  rewrite?: boolean | 'auto';
  rewrite_max_bullets?: number;
  tokenizer?: TokenizerName;
  time_budget_ms?: number | null;
  packing?: Packing | null;
}

/** Result of {@link foldRecall}. */
export interface FoldedRecall {
  /** The context request a `/search` context call would have produced. */
  request: ContextRequest<never>;
  /** `stats.deprecated`. */
  deprecated: DeprecatedStats;
}

/**
 * `max_tokens` from `max_chars` (§9.1): `max(64, round(max_chars / 4))` with Python's
 * half-to-even rounding and no upper cap (6502 → 1626, 6506 → 1626, 200000 → 50000).
 */
export function maxTokensFromChars(maxChars: number): number {
  return Math.max(RECALL_DEFAULTS.minFoldedTokens, pyRound(maxChars / 4));
}

/** `stats.deprecated` for a body whose present keys are `provided`. */
export function deprecatedStats(provided: { has(key: string): boolean }): DeprecatedStats {
  return {
    endpoint: '/api/v1/search/recall',
    successor: '/api/v1/search/search',
    successor_body: { mode: 'context' },
    aliases_used: RECALL_ALIASES.filter((a) => provided.has(a)),
  };
}

/**
 * Fold a validated `/recall` body into a context request (the §9.1 table).
 */
export function foldRecall(input: RecallInput): FoldedRecall {
  const present = (k: keyof RecallInput) => input[k] !== undefined;

  const maxTokens =
    input.max_tokens !== undefined && input.max_tokens !== null
      ? input.max_tokens
      : input.max_chars !== undefined
        ? maxTokensFromChars(input.max_chars)
        : RECALL_DEFAULTS.maxTokens;

  const scoreThreshold =
    input.score_threshold !== undefined && input.score_threshold !== null
      ? input.score_threshold
      : input.min_score !== undefined
        ? input.min_score
        : RECALL_DEFAULTS.scoreThreshold;

  let detail: ContextDetail;
  if (input.detail !== undefined && input.detail !== null) detail = normalizeDetailParam(input.detail);
  else detail = input.render === 'compact' ? 'abstract' : null;

  const purpose: Purpose = input.purpose ?? RECALL_DEFAULTS.purpose;

  // Absent → v1 defaults; an object overlays them (defaults' key order first, then new keys);
  // explicit null → the purpose preset.
  let rawQuotas: Record<string, unknown> | null;
  if (input.quotas === undefined) rawQuotas = { ...RECALL_DEFAULT_QUOTAS };
  else if (input.quotas === null) rawQuotas = null;
  else rawQuotas = { ...RECALL_DEFAULT_QUOTAS, ...input.quotas };

  const sessionId = input.session_id ?? null;
  const dedupTurns =
    input.dedup_turns !== undefined && input.dedup_turns !== null
      ? input.dedup_turns
      : sessionId
        ? RECALL_DEFAULTS.dedupTurnsWithSession
        : 0;

  const request: ContextRequest<never> = {
    query: input.query,
    imageUrl: null,
    filter: null,
    limit: RECALL_DEFAULTS.limit,
    scoreThreshold,
    sessionId,
    queryExpansion: input.query_expansion ?? 'auto',
    maxTokens,
    quotas: normalizeQuotas(rawQuotas, purpose),
    purpose,
    detail,
    dedupTurns,
    excludeUris: present('exclude_uris') ? [...(input.exclude_uris as string[])] : [],
    peerScope: input.peer_scope ?? 'all',
    otherPeerPenalties: resolvePenalties(input.other_peer_penalty),
    rewrite: rewriteModeOf(input.rewrite ?? false),
    rewriteMaxBullets: input.rewrite_max_bullets ?? 6,
    tokenizer: input.tokenizer ?? 'estimate',
    ignored: [],
    timeBudgetMs: input.time_budget_ms ?? null,
    render: input.render !== false,
    packing: input.packing ?? null,
  };
  const provided = new Set(Object.keys(input).filter((k) => input[k as keyof RecallInput] !== undefined));
  return { request, deprecated: deprecatedStats(provided) };
}
