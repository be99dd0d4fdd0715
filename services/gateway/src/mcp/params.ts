/**
 * The MCP `search` tool's own parameter normaliser (context-contract §1.5). The MCP path calls
 * the same kernel as HTTP but does not validate keys the way the HTTP models do: unknown quota
 * keys, unknown `detail_by_category` keys and unknown tier values are dropped silently, and
 * only three context-mode combinations are errors. Types were already checked by the tool's
 * input schema (`./tools`); what is left here is the §1.5 mapping onto the parameter objects
 * the HTTP routes hand to the orchestrator.
 */
import { CATEGORIES, EMPTY_QUERY_MESSAGE, normalizeQuotas, resolvePenalties, type ContextDetail, type DetailTier } from '@ctxmesh/kernel';
import {
  assertTargetsAccessible,
  compileFilter,
  invalidArgument,
  normalizeExcludeUris,
  parseLevels,
  resolveTargetUris,
  type ContextParams,
  type RequestContext,
  type SearchListParams,
} from '../domain';

/** Score threshold of list mode when `min_score` is absent or null (§1.5, §9.2). */
export const MCP_LIST_MIN_SCORE = 0.35;

/** Context-mode error: a non-empty `target_uri` (§1.5, same words as HTTP §1.3). */
export const TARGET_URI_MESSAGE = "target_uri is not supported in mode='context'";
/** Context-mode error: a `detail` other than `"auto"` together with a non-empty `detail_by_category`. */
export const DETAIL_COMBINATION_MESSAGE = "detail cannot be combined with detail_by_category in mode='context'";
/** Context-mode error: `other_peer_penalty` together with a non-empty `other_peer_penalties`. */
export const PENALTY_COMBINATION_MESSAGE = "other_peer_penalty cannot be combined with other_peer_penalties in mode='context'";

/** Range HTTP enforces on `max_tokens`; MCP clamps into it instead of rejecting. */
const MAX_TOKENS_RANGE = [64, 32000] as const;
/** Range HTTP enforces on `dedup_turns`. */
const DEDUP_TURNS_RANGE = [0, 100] as const;
/** Range HTTP enforces on `rewrite_max_bullets`. */
const BULLETS_RANGE = [1, 20] as const;
const PIN_TIERS: readonly string[] = ['abstract', 'overview', 'full'];

/**
 * Arguments of the MCP `search` tool after schema validation (all optional but `query`).
 * Defaults (§1.5): `target_uri ""`, `limit 10`, `min_score` none (list mode: 0.35),
 * `mode "list"`, `query_expansion "auto"`, `max_tokens 1600`, `detail "auto"`,
 * `dedup_turns 0`, `peer_scope "all"`, `rewrite "off"`, `rewrite_max_bullets 6`.
 */
export interface McpSearchArgs {
  query: string;
  target_uri?: string | string[];
  session_id?: string | null;
  limit?: number;
  min_score?: number | null;
  level?: number | string | number[] | null;
  context_type?: string | string[] | null;
  mode?: 'list' | 'context';
  query_expansion?: 'off' | 'auto';
  max_tokens?: number;
  quotas?: Record<string, number> | null;
  purpose?: 'chat' | 'coding' | null;
  detail?: string | null;
  detail_by_category?: Record<string, string> | null;
  dedup_turns?: number;
  exclude_uris?: string[] | null;
  peer_scope?: string;
  other_peer_penalty?: number | null;
  other_peer_penalties?: Record<string, number> | null;
  /** `"auto"` (or `true`) = always attempt a digest; `"off"` (or `false`) = none. */
  rewrite?: 'off' | 'auto' | boolean;
  rewrite_max_bullets?: number;
  /** ctxmesh addition: `compat` or `evidence`; absent = the server's default. */
  packing?: 'compat' | 'evidence';
}

/** A validated MCP search: which orchestrator call it becomes, with its parameters. */
export type McpSearch = { mode: 'list'; params: SearchListParams } | { mode: 'context'; params: ContextParams };

function clampInt(v: number | undefined, def: number, [lo, hi]: readonly [number, number]): number {
  if (v === undefined || !Number.isFinite(v)) return def;
  return Math.min(hi, Math.max(lo, Math.trunc(v)));
}

function hasKeys(o: Record<string, unknown> | null | undefined): o is Record<string, unknown> {
  return !!o && Object.keys(o).length > 0;
}

function truthyTarget(t: string | string[] | undefined): boolean {
  if (t === undefined) return false;
  return typeof t === 'string' ? t !== '' : t.length > 0;
}

/**
 * The `detail` sent to the assembler (§1.5): `detail_by_category` when non-empty — keeping
 * only known categories with a pinnable tier, so an all-unknown map means "no pin" as the
 * assembler's silent drop would (§4.3) — else null for `"auto"` (and any unknown scalar),
 * else the scalar tier.
 */
export function mcpDetail(detail: string | null | undefined, byCategory: Record<string, string> | null | undefined): ContextDetail {
  if (hasKeys(byCategory)) {
    const kept: Partial<Record<(typeof CATEGORIES)[number], DetailTier>> = {};
    for (const [k, v] of Object.entries(byCategory)) {
      if ((CATEGORIES as readonly string[]).includes(k) && PIN_TIERS.includes(v)) kept[k as (typeof CATEGORIES)[number]] = v as DetailTier;
    }
    return Object.keys(kept).length > 0 ? kept : null;
  }
  return detail && PIN_TIERS.includes(detail) ? (detail as DetailTier) : null;
}

/**
 * Map MCP search arguments onto list-mode or context-mode parameters (§1.5).
 *
 * List mode: `target_uri` validated and `~`-expanded, `score_threshold` = `min_score` or
 * {@link MCP_LIST_MIN_SCORE}, filter = `context_type` only, `level` kept; context-only
 * arguments are ignored. A blank query is rejected as over HTTP.
 *
 * Context mode: the three errors of §1.5 (in that order), then `score_threshold` =
 * `min_score` (no default), filter = `context_type` only (no tags/time, no image),
 * quotas through the kernel's `normalizeQuotas` (unknown keys dropped), `detail` per
 * {@link mcpDetail}, penalties from whichever of the two penalty arguments was sent,
 * `exclude_uris` URI-validated and `~`-expanded like HTTP, `rewrite:"auto"` → `"on"` (always
 * attempt, not the configuration-dependent HTTP `"auto"`). Out-of-range integers are
 * clamped into the HTTP ranges (`max_tokens` 64..32000, `dedup_turns` 0..100,
 * `rewrite_max_bullets` 1..20) rather than rejected.
 * @throws DomainError INVALID_ARGUMENT (the §1.5 errors, a bad `context_type`/`level`, a
 *   blank list-mode query), INVALID_URI (`target_uri`, `exclude_uris`), PERMISSION_DENIED
 *   (a list-mode target in another user's space)
 */
export function mcpSearchParams(args: McpSearchArgs, ctx: RequestContext): McpSearch {
  const filter = compileFilter({ filter: null, contextType: args.context_type ?? null, tags: null, since: null, until: null, timeField: null }, ctx.nowMs);
  const limit = args.limit === undefined ? 10 : Math.trunc(args.limit);
  if ((args.mode ?? 'list') === 'list') {
    const targetUris = resolveTargetUris(args.target_uri ?? '', ctx.identity.userId);
    assertTargetsAccessible(targetUris, ctx.identity);
    const levels = parseLevels(args.level ?? null);
    if (args.query.trim() === '') throw invalidArgument(EMPTY_QUERY_MESSAGE);
    return {
      mode: 'list',
      params: {
        query: args.query,
        imageUrl: null,
        targetUris,
        filter,
        limit,
        scoreThreshold: args.min_score ?? MCP_LIST_MIN_SCORE,
        includeProvenance: false,
        levels,
        telemetry: false,
        sessionId: args.session_id || null,
      },
    };
  }

  if (truthyTarget(args.target_uri)) throw invalidArgument(TARGET_URI_MESSAGE);
  const detailScalar = args.detail ?? 'auto';
  if (detailScalar !== 'auto' && hasKeys(args.detail_by_category)) throw invalidArgument(DETAIL_COMBINATION_MESSAGE);
  const penaltyScalar = args.other_peer_penalty ?? null;
  if (penaltyScalar !== null && hasKeys(args.other_peer_penalties)) throw invalidArgument(PENALTY_COMBINATION_MESSAGE);

  const purpose = args.purpose ?? null;
  const quotas = normalizeQuotas(args.quotas ?? null, purpose);
  const ignored: string[] = [];
  if (args.level !== undefined && args.level !== null) ignored.push('level');
  if (quotas !== null && args.limit !== undefined) ignored.push('limit');
  const rewrite = args.rewrite === true || args.rewrite === 'auto' ? 'on' : 'off';
  return {
    mode: 'context',
    params: {
      query: args.query,
      imageUrl: null,
      filter,
      limit,
      scoreThreshold: args.min_score ?? null,
      sessionId: args.session_id || null,
      queryExpansion: args.query_expansion ?? 'auto',
      maxTokens: clampInt(args.max_tokens, 1600, MAX_TOKENS_RANGE),
      quotas,
      purpose,
      detail: mcpDetail(detailScalar, args.detail_by_category),
      dedupTurns: clampInt(args.dedup_turns, 0, DEDUP_TURNS_RANGE),
      excludeUris: normalizeExcludeUris(args.exclude_uris ?? [], ctx.identity.userId),
      peerScope: args.peer_scope === 'actor' ? 'actor' : 'all',
      otherPeerPenalties: resolvePenalties(penaltyScalar ?? args.other_peer_penalties ?? null),
      rewrite,
      rewriteMaxBullets: clampInt(args.rewrite_max_bullets, 6, BULLETS_RANGE),
      tokenizer: 'estimate',
      ignored,
      timeBudgetMs: null,
      render: true,
      packing: args.packing ?? null,
      telemetry: false,
    },
  };
}
