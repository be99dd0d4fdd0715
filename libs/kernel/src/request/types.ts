/**
 * The normalised context-assembly request (context-contract §1.3, §3.1, §9): what the gateway
 * hands the orchestrator after validation, for `/search` mode context and for `/recall` alike.
 * Mirrors `ctxmesh.orchestrator.v1.AssembleContextRequest` minus identity.
 */
import type { Packing } from '../budget/packing';
import type { PinTier } from '../budget/tiers';
import type { TokenizerName } from '../budget/tokens';
import type { Category, QUOTA_KEYS } from '../uri';

/** A quota bucket name (the six quota keys). */
export type QuotaKey = (typeof QUOTA_KEYS)[number];

/**
 * Resolved quotas: bucket → row ceiling (≥ 0). Key order is meaningful (active buckets run and
 * concatenate in it); every key is non-numeric, so a plain object keeps insertion order.
 */
export type Quotas = { [K in QuotaKey]?: number };

/** Other-peer penalty per category, always all seven keys in {@link CATEGORIES} order. */
export type Penalties = Record<Category, number>;

/** `purpose` presets (§3.1). */
export type Purpose = 'chat' | 'coding';

/** Tiers a `detail` value may pin (`abstract`, `overview`, `full`). */
export type DetailTier = PinTier;

/**
 * Normalised `detail`: null (no pin; also what `"auto"` means), one tier for every category,
 * or per-category pins (keys among the six quota keys plus `memories`).
 */
export type ContextDetail = null | DetailTier | Partial<Record<Category, DetailTier>>;

/** `peer_scope` (§2.4). */
export type PeerScope = 'actor' | 'all';

/** `query_expansion` (§8.1). */
export type QueryExpansion = 'off' | 'auto';

/** Rewrite switch: `false` → off, `true` → on (always attempt), `"auto"` → only with a configured model. */
export type RewriteMode = 'off' | 'on' | 'auto';

/**
 * The validated, alias-resolved context request. `F` is the metadata filter type (the gateway
 * uses the stores' `FilterNode`); the kernel only passes it through.
 */
export interface ContextRequest<F = unknown> {
  /** Original query (not trimmed; a blank query fails only when a retrieval call is made). */
  query: string;
  /** Image query, alias-resolved; null when absent. Always null for `/recall`. */
  imageUrl: string | null;
  /** Effective filter of §1.8, or null. Always null for `/recall`. */
  filter: F | null;
  /** Flat-mode row count: `node_limit` if given, else `limit`. @default 10 */
  limit: number;
  /** Raw-score threshold passed verbatim to retrieval, or null. */
  scoreThreshold: number | null;
  /** Session id, or null. */
  sessionId: string | null;
  /** @default "auto" */
  queryExpansion: QueryExpansion;
  /** Token budget; 64..32000 when explicit, uncapped when folded from `max_chars`. @default 1600 */
  maxTokens: number;
  /** Resolved quotas; null means flat mode. `{}` is bucketed with no active bucket. */
  quotas: Quotas | null;
  /** Purpose as requested (`/recall`: `"coding"` by default); echoed in `stats.purpose`. */
  purpose: Purpose | null;
  /** Normalised detail pin. */
  detail: ContextDetail;
  /** Dedup window in turns (0 = off). @default 0 (`/recall`: 5 with a session) */
  dedupTurns: number;
  /** Normalised `exclude_uris` (trimmed, validated, `~`-expanded, at most 200). */
  excludeUris: string[];
  /** @default "all" */
  peerScope: PeerScope;
  /** Resolved other-peer penalties (§2.4). */
  otherPeerPenalties: Penalties;
  /** @default "off" */
  rewrite: RewriteMode;
  /** Bullets asked of the digest rewrite. @default 6 */
  rewriteMaxBullets: number;
  /** @default "estimate" */
  tokenizer: TokenizerName;
  /** Names for `stats.ignored`, in contract order (`level`, `limit`); empty when none. */
  ignored: string[];
  /** Whole-request time budget in ms, or null for none. */
  timeBudgetMs: number | null;
  /** False only for `/recall` with `render:false`: `rendered` is then `""`. @default true */
  render: boolean;
  /**
   * ctxmesh addition: `compat` (the contract's kernel) or `evidence`; `null` when the request
   * does not name one (the server's default applies, `compat` unless its operator sets another).
   * @default null
   */
  packing?: Packing | null;
}
