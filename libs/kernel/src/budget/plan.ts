/**
 * Budget of the compat packing (context-contract §5.2–§5.4) and the two-step API the mesh
 * uses: the tier-reader asks {@link planReads} which bodies to fetch and turns them into tier
 * texts; budget-render calls {@link planAndRender}. The evidence packing's planners live in
 * `./evidence`; `./assemble` runs both steps in process for either packing.
 */
import type { TierTexts } from './overview';
import type { CandidateFate, TierCosts } from './packing';
import { type ContextEntry, completeFragment, fragmentHead, neutralizeEnvelope } from './render';
import { type Candidate, FragmentPricer, type Slot, slotFor, tokensOf } from './pricing';
import { type DetailSpec, type Tier, isMemoryCategory, normalizeDetail, tierRank } from './tiers';
import { resolveTokenizer } from './tokens';

export type { Candidate } from './pricing';

/** A candidate with the body-backed tier texts the tier-reader produced for it. */
export interface PlanItem {
  readonly candidate: Candidate;
  /** Overview/full texts; absent or `null` when the body was not read (both unavailable). */
  readonly texts?: Pick<TierTexts, 'overview' | 'full'> | null;
}

/** Plan statistics (§5.3, §6.3), keys in wire order. */
export interface PlanStats {
  max_tokens: number;
  used_tokens: number;
  per_entry_cap: number;
  returned: number;
  dropped: number;
  deduped: number;
  detail: DetailSpec['stats'];
  /** Served tier → count, keys in order of first appearance among the entries. */
  tier_counts: Record<string, number>;
  fill: { floor_tokens: number; overview_upgrades: number; full_upgrades: number; spare_upgrades: number };
}

/** Output of {@link planAndRender} (and of the evidence planner). */
export interface PlanResult {
  entries: ContextEntry[];
  /** Fragments joined by `\n`; `""` without entries. */
  rendered: string;
  stats: PlanStats;
  /**
   * One fate per input item, in input order (only when asked for with `fates: true`): the
   * tier served or why not, and the cost of each tier.
   */
  fates?: CandidateFate[];
  /** Evidence packing only: what its relevance floor did. */
  evidence?: EvidencePlanExtras;
}

/** The evidence packing's outcome beside the plan. */
export interface EvidencePlanExtras {
  /** Candidates below the relevance floor (not served). */
  belowFloor: number;
  /** The floor used (`-Infinity` without candidates). */
  relevanceFloor: number;
  /** Entries served as query-biased excerpts (absent: none could be, no query was given). */
  excerpts?: number;
}

/** Options of the planners that do not change the answer. */
export interface PlanOptions {
  /** Also return {@link PlanResult.fates}. @default false */
  fates?: boolean;
}

/**
 * The effective budget: `max(1, int(maxTokens))`; a non-numeric or non-finite value gives 1.
 */
export function coerceMaxTokens(maxTokens: number): number {
  const n = Math.trunc(Number(maxTokens));
  return Number.isFinite(n) ? Math.max(1, n) : 1;
}

/**
 * Per-entry cap (§5.2): `max(1, floor(maxTokens / max(1, n)) · 2)`; 1600 and 3 → 1066,
 * 100 and 7 → 28, 64 and 200 → 1, n = 0 → 2·maxTokens.
 * @param maxTokens effective budget (already coerced)
 * @param n number of candidates before any are dropped
 */
export function perEntryCap(maxTokens: number, n: number): number {
  return Math.max(1, Math.floor(maxTokens / Math.max(1, n)) * 2);
}

/** One body the tier-reader must fetch. */
export interface ReadRequest {
  /** Index of the candidate in the planned list. */
  readonly index: number;
  /** The candidate's node URI. */
  readonly uri: string;
  /** What to read: the node itself, or `{uri}/.overview.md` for a directory. */
  readonly contentUri: string;
}

/** Output of {@link planReads}. */
export interface ReadPlan {
  /** Per-entry cap the decision used (§5.2). */
  readonly perEntryCap: number;
  /** Bodies to read, in candidate order (several may share a `contentUri`). */
  readonly reads: ReadRequest[];
  /** `needsBody[i]` is true iff candidate `i` is in `reads`. */
  readonly needsBody: boolean[];
}

/** Where a candidate's body lives: `{uri}/.overview.md` for a directory, else the node. */
export function contentUriOf(candidate: Pick<Candidate, 'uri' | 'is_directory'>): string {
  return candidate.is_directory === true ? `${candidate.uri}/.overview.md` : candidate.uri;
}

/**
 * Decide which candidates need their body (§5.4): those whose ceiling (given the pin) is at
 * least `overview` — events by default, directories, anything pinned at overview/full, memory
 * candidates without an abstract — and memory-category candidates whose abstract fragment
 * alone exceeds the per-entry cap (they may need the overview substitute). Resources and
 * skills with missing or oversized abstracts are never read.
 * @param candidates in rank order
 * @param maxTokens requested budget (coerced to `max(1, int)`)
 * @param detail the request's `detail`, normalised per §4.3
 * @param tokenizer default `"estimate"`
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function planReads(
  candidates: readonly Candidate[],
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
): ReadPlan {
  return planReadsWith(new FragmentPricer(resolveTokenizer(tokenizer)), candidates, maxTokens, detail);
}

/** {@link planReads} with a caller's pricer (so one request prices each fragment once). */
export function planReadsWith(pricer: FragmentPricer, candidates: readonly Candidate[], maxTokens: number, detail: unknown): ReadPlan {
  const spec = normalizeDetail(detail);
  const cap = perEntryCap(coerceMaxTokens(maxTokens), candidates.length);
  const reads: ReadRequest[] = [];
  const needsBody = candidates.map((candidate, index) => {
    const slot = slotFor(candidate, spec, null);
    const need =
      tierRank(slot.policy.ceiling) >= tierRank('overview') ||
      (isMemoryCategory(candidate.category) && slot.texts.abstract !== '' && tokensOf(slot, 'abstract', pricer, cap) > cap);
    if (need) reads.push({ index, uri: candidate.uri, contentUri: contentUriOf(candidate) });
    return need;
  });
  return { perEntryCap: cap, reads, needsBody };
}

const UPGRADE_PASSES = [
  { target: 'overview', capped: true, stat: 'overview_upgrades' },
  { target: 'full', capped: true, stat: 'full_upgrades' },
  { target: 'full', capped: false, stat: 'spare_upgrades' },
] as const;

/**
 * Plan the budget and render (§5.2–§5.3, §6): breadth-first placement in rank order with the
 * fallback orders, per-entry cap (all tiers but `uri`), one separator token per entry after
 * the first, drop-and-continue, body dedup, then the three upgrade passes. Every count is
 * taken on the whole rendered fragment in the selected tokenizer, so `used_tokens` equals the
 * tokenizer's count of each returned fragment plus one per separator, and never exceeds the
 * effective budget.
 * @param items candidates in rank order with their tier texts
 * @param maxTokens requested budget (coerced to `max(1, int)`)
 * @param detail the request's `detail`, normalised per §4.3
 * @param tokenizer default `"estimate"`
 * @param opts `fates: true` adds {@link PlanResult.fates} (served / budget / deduped, with tier costs)
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function planAndRender(
  items: readonly PlanItem[],
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
  opts: PlanOptions = {},
): PlanResult {
  return planAndRenderWith(new FragmentPricer(resolveTokenizer(tokenizer)), items, maxTokens, detail, opts);
}

/**
 * Fragment cost of every tier of a slot ({@link TierCosts}): counted up to the whole block,
 * `Infinity` beyond it, `null` for a tier without text.
 */
export function tierCostsOf(slot: Slot, pricer: FragmentPricer, max: number): TierCosts {
  const cost = (t: Tier) => (t !== 'uri' && slot.texts[t] === '' ? null : tokensOf(slot, t, pricer, max));
  return { uri: cost('uri') as number, abstract: cost('abstract'), overview: cost('overview'), full: cost('full') };
}

/** {@link planAndRender} with a caller's pricer (so one request prices each fragment once). */
export function planAndRenderWith(pricer: FragmentPricer, items: readonly PlanItem[], maxTokens: number, detail: unknown, opts: PlanOptions = {}): PlanResult {
  const spec = normalizeDetail(detail);
  const max = coerceMaxTokens(maxTokens);
  const cap = perEntryCap(max, items.length);

  interface Placed {
    slot: Slot;
    tier: Tier;
    tokens: number;
  }
  const placed: Placed[] = [];
  const seen = new Set<string>();
  let used = 0;
  let dropped = 0;
  let deduped = 0;
  // Fates are decided here (budget, deduped) or after the upgrades (served, with the final tier).
  const outcome: Array<Placed | 'budget' | 'deduped'> = [];
  const slots: Slot[] = [];

  for (const item of items) {
    const slot = slotFor(item.candidate, spec, item.texts);
    slots.push(slot);
    const sep = placed.length > 0 ? 1 : 0;
    let chosen: Tier | null = null;
    let chosenTokens = 0;
    const room = max - used - sep;
    for (const tier of slot.policy.fallback) {
      if (tier !== 'uri' && slot.texts[tier] === '') continue;
      // The cap bounds every tier but `uri`; the remaining budget bounds all of them.
      const limit = tier === 'uri' ? room : Math.min(cap, room);
      const n = tokensOf(slot, tier, pricer, limit);
      if (n > limit) continue;
      chosen = tier;
      chosenTokens = n;
      break;
    }
    if (chosen === null) {
      dropped++;
      outcome.push('budget');
      continue;
    }
    const key = slot.texts[chosen] || slot.candidate.uri;
    if (seen.has(key)) {
      deduped++;
      outcome.push('deduped');
      continue;
    }
    seen.add(key);
    const p: Placed = { slot, tier: chosen, tokens: chosenTokens };
    placed.push(p);
    outcome.push(p);
    used += chosenTokens + sep;
  }

  const fill = { floor_tokens: used, overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 };
  for (const pass of UPGRADE_PASSES) {
    const target = pass.target;
    for (const p of placed) {
      if (tierRank(p.tier) >= tierRank(target) || tierRank(target) > tierRank(p.slot.policy.ceiling)) continue;
      if (p.slot.texts[target] === '') continue;
      const room = max - used + p.tokens;
      const limit = pass.capped ? Math.min(cap, room) : room;
      const n = tokensOf(p.slot, target, pricer, limit);
      if (n > limit) continue;
      used += n - p.tokens;
      p.tier = target;
      p.tokens = n;
      fill[pass.stat]++;
    }
  }

  const entries: ContextEntry[] = [];
  const fragments: string[] = [];
  const tierCounts: Record<string, number> = {};
  for (const p of placed) {
    const c = p.slot.candidate;
    const text = p.slot.texts[p.tier];
    entries.push({ uri: c.uri, category: c.category, score: c.score, detail: p.tier, text: neutralizeEnvelope(text), origin: c.origin });
    fragments.push(completeFragment(fragmentHead(c.uri, c.category, c.score, p.tier), text));
    tierCounts[p.tier] = (tierCounts[p.tier] ?? 0) + 1;
  }

  const result: PlanResult = {
    entries,
    rendered: fragments.join('\n'),
    stats: {
      max_tokens: max,
      used_tokens: used,
      per_entry_cap: cap,
      returned: entries.length,
      dropped,
      deduped,
      detail: spec.stats,
      tier_counts: tierCounts,
      fill,
    },
  };
  if (opts.fates) {
    result.fates = slots.map((slot, i) => {
      const o = outcome[i];
      const c = slot.candidate;
      return {
        uri: c.uri,
        category: c.category,
        score: c.score,
        rankedScore: c.ranked_score ?? c.score,
        fate: typeof o === 'string' ? o : 'served',
        tier: typeof o === 'string' ? null : o.tier,
        costs: tierCostsOf(slot, pricer, max),
        cooledTurn: null,
      };
    });
  }
  return result;
}
