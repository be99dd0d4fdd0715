/**
 * Budget (context-contract §5.2–§5.4) and the two-step API the mesh uses: the tier-reader
 * asks {@link planReads} which bodies to fetch and turns them into tier texts; budget-render
 * calls {@link planAndRender}. {@link assembleContext} runs both steps in process.
 */
import { pyStrip } from './python';
import { type OverviewOptions, type TierTexts, FrontMatterError, prepareTierTexts } from './overview';
import { type ContextEntry, completeFragment, fragmentHead, neutralizeTags } from './render';
import { type DetailSpec, type Tier, type TierPolicy, isMemoryCategory, normalizeDetail, pinFor, tierPolicy, tierRank } from './tiers';
import { type TokenizerName, countTokensWithin, estimateQuarters, resolveTokenizer } from './tokens';

/** A ranked candidate as gathered (§3.5); field names follow the reference kernel. */
export interface Candidate {
  /** Node URI (a directory hit carries the directory, not its sidecar). */
  readonly uri: string;
  /** Reported category (§2.2). */
  readonly category: string;
  /** Raw retrieval score. */
  readonly score: number;
  /** Stored abstract; `null`/absent reads as `""`. */
  readonly abstract?: string | null;
  /** True when the hit was a directory sidecar. */
  readonly is_directory?: boolean;
  /** `actor_peer`, `self` or `other_peer`. */
  readonly origin: string;
}

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

/** Output of {@link planAndRender}. */
export interface PlanResult {
  entries: ContextEntry[];
  /** Fragments joined by `\n`; `""` without entries. */
  rendered: string;
  stats: PlanStats;
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

const OPEN_TAIL_Q = estimateQuarters('>\n');
const CLOSE_TAIL_Q = estimateQuarters('\n</memory>');
const SELF_CLOSE_Q = estimateQuarters(' />');

/**
 * Prices rendered fragments in one tokenizer, remembering what it has counted: the estimate
 * of a text is additive, so a body shared by several candidates is scanned once; an exact
 * tokenizer sees each distinct fragment at most once per limit it could not settle, and
 * stops encoding as soon as a fragment is over the limit being checked.
 */
class FragmentPricer {
  private readonly textQuarters = new Map<string, number>();
  /** Exact counts of fragments. */
  private readonly exact = new Map<string, number>();
  /** Largest limit each unsettled fragment is known to exceed. */
  private readonly over = new Map<string, number>();
  constructor(readonly tokenizer: TokenizerName) {}

  /**
   * Tokens of the fragment `head` + text (the self-closing form when `text` is `""`), or
   * `Infinity` when it is more than `limit`.
   */
  price(head: string, text: string, limit: number): number {
    if (this.tokenizer === 'estimate') {
      const h = estimateQuarters(head);
      let q: number;
      if (text === '') {
        q = h + SELF_CLOSE_Q;
      } else {
        let t = this.textQuarters.get(text);
        if (t === undefined) {
          t = estimateQuarters(neutralizeTags(text));
          this.textQuarters.set(text, t);
        }
        q = h + OPEN_TAIL_Q + t + CLOSE_TAIL_Q;
      }
      const n = Math.ceil(q / 4);
      return n <= limit ? n : Infinity;
    }
    const fragment = completeFragment(head, text);
    const known = this.exact.get(fragment);
    if (known !== undefined) return known <= limit ? known : Infinity;
    const exceeded = this.over.get(fragment);
    if (exceeded !== undefined && limit <= exceeded) return Infinity;
    const n = countTokensWithin(fragment, limit, this.tokenizer);
    if (n === Infinity) this.over.set(fragment, Math.max(limit, exceeded ?? -Infinity));
    else this.exact.set(fragment, n);
    return n;
  }
}

/** One candidate's tier decisions and texts during planning. */
interface Slot {
  readonly candidate: Candidate;
  readonly policy: TierPolicy;
  readonly texts: Record<Tier, string>;
}

function slotFor(candidate: Candidate, spec: DetailSpec, texts: PlanItem['texts']): Slot {
  const isDirectory = candidate.is_directory === true;
  const abstract = pyStrip(candidate.abstract ?? '');
  const pin = isDirectory ? null : pinFor(spec, candidate.category);
  return {
    candidate,
    policy: tierPolicy(candidate.category, isDirectory, abstract !== '', pin),
    texts: {
      uri: '',
      abstract,
      overview: texts?.overview ?? '',
      full: isDirectory ? '' : (texts?.full ?? ''),
    },
  };
}

/** Fragment tokens of a slot at a tier, or `Infinity` when over `limit`. */
function tokensOf(slot: Slot, tier: Tier, pricer: FragmentPricer, limit: number): number {
  const c = slot.candidate;
  return pricer.price(fragmentHead(c.uri, c.category, c.score, tier), slot.texts[tier], limit);
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

function planReadsWith(pricer: FragmentPricer, candidates: readonly Candidate[], maxTokens: number, detail: unknown): ReadPlan {
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
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function planAndRender(
  items: readonly PlanItem[],
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
): PlanResult {
  return planAndRenderWith(new FragmentPricer(resolveTokenizer(tokenizer)), items, maxTokens, detail);
}

function planAndRenderWith(pricer: FragmentPricer, items: readonly PlanItem[], maxTokens: number, detail: unknown): PlanResult {
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

  for (const item of items) {
    const slot = slotFor(item.candidate, spec, item.texts);
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
      continue;
    }
    const key = slot.texts[chosen] || slot.candidate.uri;
    if (seen.has(key)) {
      deduped++;
      continue;
    }
    seen.add(key);
    placed.push({ slot, tier: chosen, tokens: chosenTokens });
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
    entries.push({ uri: c.uri, category: c.category, score: c.score, detail: p.tier, text, origin: c.origin });
    fragments.push(completeFragment(fragmentHead(c.uri, c.category, c.score, p.tier), text));
    tierCounts[p.tier] = (tierCounts[p.tier] ?? 0) + 1;
  }

  return {
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
}

/** Output of {@link assembleContext}. */
export interface AssembleResult extends PlanResult {
  /** Directories whose sidecar front matter was refused (served without an overview). */
  overviewErrors: Array<{ uri: string; error: FrontMatterError }>;
}

/**
 * Both steps in one process: decide the reads, read each content URI once through `readBody`,
 * compute tier texts and plan/render.
 * @param readBody returns the raw content of a content URI, or `null` when the read fails
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function assembleContext(
  candidates: readonly Candidate[],
  readBody: (contentUri: string, candidate: Candidate) => string | null | undefined,
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
  opts: OverviewOptions = {},
): AssembleResult {
  // One pricer for both steps: abstracts priced for the read decision are not priced again.
  const pricer = new FragmentPricer(resolveTokenizer(tokenizer));
  const plan = planReadsWith(pricer, candidates, maxTokens, detail);
  const bodies = new Map<string, string | null | undefined>();
  const texts: Array<TierTexts | null> = candidates.map(() => null);
  const overviewErrors: AssembleResult['overviewErrors'] = [];
  for (const r of plan.reads) {
    const candidate = candidates[r.index];
    if (!bodies.has(r.contentUri)) bodies.set(r.contentUri, readBody(r.contentUri, candidate));
    const t = prepareTierTexts(candidate, bodies.get(r.contentUri), opts);
    if (t.overviewError) overviewErrors.push({ uri: candidate.uri, error: t.overviewError });
    texts[r.index] = t;
  }
  const result = planAndRenderWith(
    pricer,
    candidates.map((candidate, i) => ({ candidate, texts: texts[i] })),
    maxTokens,
    detail,
  );
  return { ...result, overviewErrors };
}
