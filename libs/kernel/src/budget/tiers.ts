/**
 * Tiers (context-contract §4.1–§4.3): the ladder, the per-category defaults, `detail`
 * normalisation and the per-candidate start tier, ceiling and fallback order.
 */
import { CATEGORIES, type Category } from '../uri';

/** The tier ladder, lowest first: every entry carries at least its URI. */
export const TIERS = ['uri', 'abstract', 'overview', 'full'] as const;

/** One rung of {@link TIERS}. */
export type Tier = (typeof TIERS)[number];

/** Tiers a request may pin with `detail` (`uri` cannot be pinned). */
export const PINNABLE_TIERS = ['abstract', 'overview', 'full'] as const;

/** One of {@link PINNABLE_TIERS}. */
export type PinTier = (typeof PINNABLE_TIERS)[number];

const RANK: Record<Tier, number> = { uri: 0, abstract: 1, overview: 2, full: 3 };

/** Position of a tier on the ladder (`uri` = 0 … `full` = 3). */
export function tierRank(tier: Tier): number {
  return RANK[tier];
}

/** Default tiers of one category when nothing is pinned (§4.2). */
export interface CategoryTierDefaults {
  /** Tier tried first. */
  readonly start: Tier;
  /** Highest tier the upgrade passes may deepen to. */
  readonly ceiling: Tier;
  /** Stand-in when the start tier is `abstract` and the abstract is empty. */
  readonly substitute: Tier;
}

const MEMORY_DEFAULTS: CategoryTierDefaults = Object.freeze({ start: 'abstract', ceiling: 'abstract', substitute: 'overview' });
const SHARED_DEFAULTS: CategoryTierDefaults = Object.freeze({ start: 'abstract', ceiling: 'abstract', substitute: 'uri' });

/** The §4.2 table, keyed by reported category. */
export const CATEGORY_TIER_DEFAULTS: Readonly<Record<Category, CategoryTierDefaults>> = Object.freeze({
  events: Object.freeze({ start: 'overview', ceiling: 'full', substitute: 'overview' }),
  entities: MEMORY_DEFAULTS,
  preferences: MEMORY_DEFAULTS,
  experiences: MEMORY_DEFAULTS,
  memories: MEMORY_DEFAULTS,
  resources: SHARED_DEFAULTS,
  skills: SHARED_DEFAULTS,
});

/**
 * Defaults for a category; a category outside the seven (which the gatherer never emits)
 * gets the `memories` catch-all row.
 */
export function categoryDefaults(category: string): CategoryTierDefaults {
  return (CATEGORY_TIER_DEFAULTS as Record<string, CategoryTierDefaults>)[category] ?? MEMORY_DEFAULTS;
}

/**
 * True for the memory categories, whose stored abstract is the whole visible body and whose
 * abstract substitute is `overview` (events, entities, preferences, experiences, memories).
 */
export function isMemoryCategory(category: string): boolean {
  return categoryDefaults(category).substitute === 'overview';
}

/** The outcome of §4.3 `detail` normalisation. */
export interface DetailSpec {
  /** Pin for every category (scalar form), or `null`. */
  readonly scalar: PinTier | null;
  /** Per-category pins (object form, only valid entries kept, request order), or `null`. */
  readonly byCategory: ReadonlyMap<Category, PinTier> | null;
  /** The value reported as `stats.detail`: the kept map, else the scalar pin, else `null`. */
  readonly stats: PinTier | Record<string, PinTier> | null;
}

const NO_DETAIL: DetailSpec = Object.freeze({ scalar: null, byCategory: null, stats: null });

function isPinTier(v: unknown): v is PinTier {
  return typeof v === 'string' && (PINNABLE_TIERS as readonly string[]).includes(v);
}

/**
 * Normalise a request's `detail` (§4.3). Absent, `null`, `"auto"` and any unknown scalar
 * (including `"uri"`, `"FULL"` and numbers) mean no pin. An object keeps, in its own order,
 * only keys that are one of the seven categories (case-sensitive) with a value in
 * `abstract|overview|full`; if none is kept it means no pin.
 */
export function normalizeDetail(detail: unknown): DetailSpec {
  if (detail === null || detail === undefined) return NO_DETAIL;
  if (isPinTier(detail)) return { scalar: detail, byCategory: null, stats: detail };
  if (typeof detail !== 'object' || Array.isArray(detail)) return NO_DETAIL;
  const map = new Map<Category, PinTier>();
  for (const [key, value] of Object.entries(detail as Record<string, unknown>)) {
    if ((CATEGORIES as readonly string[]).includes(key) && isPinTier(value)) map.set(key as Category, value);
  }
  if (map.size === 0) return NO_DETAIL;
  return { scalar: null, byCategory: map, stats: Object.fromEntries(map) };
}

/**
 * A `detail` pin as `ctxmesh.common.v1.Detail` carries it (structurally the generated type, so
 * the kernel needs no generated code): one tier for all, or per-category pins in order.
 */
export interface WireDetail {
  pin: { $case: 'all'; value: string } | { $case: 'byCategory'; value: { pins: Array<{ category: string; tier: string }> } } | undefined;
}

/**
 * A request's `detail` (or a plan's `stats.detail`) in its wire shape: a string pins every
 * category, an object pins the categories it lists (in its own order), null/undefined pins
 * nothing (no message). Values are carried as given; {@link normalizeDetail} judges them.
 */
export function detailToWire(detail: string | Readonly<Record<string, string | undefined>> | null | undefined): WireDetail | undefined {
  if (detail === null || detail === undefined) return undefined;
  if (typeof detail === 'string') return { pin: { $case: 'all', value: detail } };
  const pins: Array<{ category: string; tier: string }> = [];
  for (const [category, tier] of Object.entries(detail)) if (tier !== undefined) pins.push({ category, tier });
  return { pin: { $case: 'byCategory', value: { pins } } };
}

/**
 * A wire `detail` back in the shape {@link normalizeDetail} and `stats.detail` use: the tier
 * string, the `{category: tier}` object in pin order, or null for none.
 */
export function detailFromWire(w: WireDetail | undefined): string | Record<string, string> | null {
  const pin = w?.pin;
  if (pin === undefined) return null;
  if (pin.$case === 'all') return pin.value;
  return Object.fromEntries(pin.value.pins.map((p) => [p.category, p.tier]));
}

/** The pin that applies to one category, or `null` for the defaults. */
export function pinFor(spec: DetailSpec, category: string): PinTier | null {
  if (spec.byCategory) return spec.byCategory.get(category as Category) ?? null;
  return spec.scalar;
}

/** Tier decisions for one candidate (§4.2, §5.3 step 1). */
export interface TierPolicy {
  /** Tier tried first. */
  readonly start: Tier;
  /** Highest tier an upgrade may reach. */
  readonly ceiling: Tier;
  /** Tiers tried in order during placement; always ends with `uri`. */
  readonly fallback: readonly Tier[];
}

const FALLBACKS: Record<string, readonly Tier[]> = {
  full: Object.freeze(['full', 'overview', 'abstract', 'uri'] as Tier[]),
  overview: Object.freeze(['overview', 'abstract', 'uri'] as Tier[]),
  abstract: Object.freeze(['abstract', 'uri'] as Tier[]),
  abstractSub: Object.freeze(['abstract', 'overview', 'uri'] as Tier[]),
  uri: Object.freeze(['uri'] as Tier[]),
};

/**
 * Start tier, ceiling and fallback order of a candidate.
 *
 * Start: a directory → `overview` (pins ignored); else the pin or the category default; if
 * that is `abstract` and the abstract is empty → the category's substitute. Ceiling: pinned
 * or directory → the start; else the category ceiling when higher than the start, else the
 * start. Fallback: from the start down to `uri`, except that a memory category starting at
 * `abstract` tries `overview` second.
 * @param hasAbstract whether the trimmed stored abstract is non-empty
 */
export function tierPolicy(category: string, isDirectory: boolean, hasAbstract: boolean, pin: PinTier | null): TierPolicy {
  const defaults = categoryDefaults(category);
  let start: Tier = isDirectory ? 'overview' : (pin ?? defaults.start);
  if (start === 'abstract' && !hasAbstract) start = defaults.substitute;
  let ceiling: Tier;
  if (isDirectory || pin !== null) ceiling = start;
  else ceiling = RANK[defaults.ceiling] > RANK[start] ? defaults.ceiling : start;
  const fallback = start === 'abstract' && defaults.substitute === 'overview' ? FALLBACKS.abstractSub : FALLBACKS[start];
  return { start, ceiling, fallback };
}
