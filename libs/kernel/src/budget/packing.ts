/**
 * Packings and candidate fates: the vocabulary shared by gathering and planning.
 *
 * A *packing* decides how candidates become a context block. `compat` is the contract's
 * kernel (context-contract §3–§6, byte-identical to the reference); `evidence` is ctxmesh's
 * packing that spends the budget on evidence (see `evidence.ts` and `../gather/evidence.ts`).
 *
 * A *fate* says what happened to one candidate the kernel considered, so that every hit of a
 * request can be explained: which tier it was served at, what each tier would have cost, and
 * why it was left out. The kernel computes fates only when asked (`explain`), so the default
 * paths pay nothing for them.
 */
import { UnknownPackingError } from '../errors';
import type { Tier } from './tiers';

/** The packings a context request may name. */
export const PACKINGS = ['compat', 'evidence'] as const;

/** One of {@link PACKINGS}. */
export type Packing = (typeof PACKINGS)[number];

/** The contract's packing, and the server default unless its operator sets another. */
export const DEFAULT_PACKING: Packing = 'compat';

/** True for a known packing name (case-sensitive). */
export function isPacking(value: unknown): value is Packing {
  return typeof value === 'string' && (PACKINGS as readonly string[]).includes(value);
}


/**
 * A packing as a wire field names it: `""` is the contract's (`compat`), a known name is itself.
 * @throws UnknownPackingError for any other name
 */
export function resolvePacking(name: string | null | undefined): Packing {
  if (name === '' || name === null || name === undefined) return DEFAULT_PACKING;
  if (isPacking(name)) return name;
  throw new UnknownPackingError(name, PACKINGS);
}

/**
 * Why a candidate was (not) served:
 * - `served`: it is an entry of the block (see {@link CandidateFate.tier});
 * - `below_threshold`: its raw score is under the request's `score_threshold`. Reserved: the
 *   stores apply the threshold inside the search (§3.1, and the reference never re-filters), so
 *   gathering never sees such a hit; an `explain` that wants them must search without it;
 * - `cooled`: the session's dedup ledger holds it back (§7);
 * - `excluded`: named in `exclude_uris`, or a `profile.md` (§2.3);
 * - `deduped`: the same node was already a candidate (URI de-dup, §3.2/§3.3), or its text was
 *   already served by another entry (body de-dup, §5.3);
 * - `budget`: no tier fit what was left of the budget;
 * - `quota`: cut by a row count — a bucket's quota or the flat `limit` (compat), the pool bound
 *   (evidence);
 * - `noise_floor`: scored below the server's noise floor, 0.35 (evidence only);
 * - `relevance_floor`: far less relevant than the best hit (evidence only).
 */
export const FATE_REASONS = ['served', 'below_threshold', 'cooled', 'excluded', 'deduped', 'budget', 'quota', 'noise_floor', 'relevance_floor'] as const;

/** One of {@link FATE_REASONS}. */
export type FateReason = (typeof FATE_REASONS)[number];

/**
 * Token cost of one candidate's rendered fragment at each tier, in the request's tokenizer
 * (envelope included, separator not): `null` when the tier has no text for this candidate;
 * `Infinity` when the fragment is larger than the whole block (it could never be served, so it
 * is not counted to the end). `uri` is never `null`.
 */
export interface TierCosts {
  uri: number;
  abstract: number | null;
  overview: number | null;
  full: number | null;
}

/**
 * What happened to one candidate (or one hit that never became a candidate).
 *
 * Gathering reports the hits it left out (`below_threshold`, `cooled`, `excluded`, `deduped`,
 * `quota`, `relevance_floor`) with `costs: null`, since bodies are not read there; planning
 * reports every candidate it was given, with the costs of its tiers.
 */
export interface CandidateFate {
  /** Node URI (a directory, not its sidecar). */
  uri: string;
  /** Category (§2.3), as the candidate has it. */
  category: string;
  /** Raw retrieval score. */
  score: number;
  /** Score after the other-peer penalty (what ranking and the relevance floor compare). */
  rankedScore: number;
  /** The outcome. */
  fate: FateReason;
  /** The tier served (`fate === "served"`), else `null`. */
  tier: Tier | null;
  /** Fragment cost per tier, or `null` when this stage did not price the candidate. */
  costs: TierCosts | null;
  /** For `cooled`: the ledger turn it was served at, when known; else `null`. */
  cooledTurn: number | null;
}

/** A fate as `ctxmesh.common.v1.CandidateFate` carries it (structurally the generated type). */
export interface WireFate {
  uri: string;
  category: string;
  score: number;
  rankedScore: number;
  fate: string;
  /** `""` when not served. */
  tier: string;
  /** One row per tier, `tokens` absent for a tier without text; empty when not priced. */
  costs: Array<{ tier: string; tokens?: number | undefined }>;
  cooledTurn?: number | undefined;
}

const COST_TIERS = ['uri', 'abstract', 'overview', 'full'] as const;

/** A kernel fate in its wire shape (see {@link WireFate}). */
export function fateToWire(f: CandidateFate): WireFate {
  const w: WireFate = {
    uri: f.uri,
    category: f.category,
    score: f.score,
    rankedScore: f.rankedScore,
    fate: f.fate,
    tier: f.tier ?? '',
    costs: f.costs ? COST_TIERS.map((tier) => (f.costs![tier] === null ? { tier } : { tier, tokens: f.costs![tier] as number })) : [],
  };
  if (f.cooledTurn !== null) w.cooledTurn = f.cooledTurn;
  return w;
}

/** A wire fate back in the kernel's shape (unknown reasons and tiers are kept as sent). */
export function fateFromWire(w: WireFate): CandidateFate {
  let costs: TierCosts | null = null;
  if (w.costs.length > 0) {
    const at = (t: string) => w.costs.find((c) => c.tier === t)?.tokens;
    costs = { uri: at('uri') ?? Infinity, abstract: at('abstract') ?? null, overview: at('overview') ?? null, full: at('full') ?? null };
  }
  return {
    uri: w.uri,
    category: w.category,
    score: w.score,
    rankedScore: w.rankedScore,
    fate: w.fate as FateReason,
    tier: w.tier === '' ? null : (w.tier as Tier),
    costs,
    cooledTurn: w.cooledTurn ?? null,
  };
}
