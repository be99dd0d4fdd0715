/**
 * The `evidence` packing's planners: which bodies to read ({@link planEvidenceReads}) and how
 * to spend the budget ({@link planEvidence}). They keep the contract's tiers, fragments,
 * estimator, tag neutralisation, body de-dup and citations, and change how the budget is
 * spent, so that a block carries as much evidence as its budget allows:
 *
 * 1. **Noise and evidence floors.** Nothing is served unless the best hit of the request
 *    (cooled and excluded hits count for "best") reaches the server's {@link NOISE_FLOOR}
 *    (0.35 on the stores' calibrated scale): a question about nothing in the store gets an
 *    empty block. When it does, the candidates at or above the {@link EVIDENCE_FLOOR} (0.12)
 *    and a quarter of the best are served, however much room is left: a block may end early.
 *    A client's `score_threshold` above the noise floor applies to every hit.
 * 2. **Breadth at the cheapest text.** Candidates are placed in rank order at their cheapest
 *    text tier (a `detail` pin is tried first, then the cheaper tiers), never as a bare URI and
 *    never truncated; one that does not fit yields to later, shorter ones. While the block holds
 *    more than one entry, no entry may take more than half of it ({@link evidenceEntryCap}).
 * 3. **Quotas are priors.** In a bucketed request each category present among the candidates
 *    first spends its share of the budget (its quota's share of the quotas of present
 *    categories) on its own best candidates; what is left — including the share of a category
 *    that could not use it — goes to the best remaining candidates of any category. A category
 *    without candidates holds nothing.
 * 4. **Depth after breadth.** Leftover budget deepens the entries one step at a time, best
 *    first (pass after pass), to a more expensive text tier with new text.
 * 5. **Bare URIs last.** Only a candidate none of whose text tiers could ever share the block
 *    (each costs more than half of it, or it has no text) gets a `uri` entry, and only with what
 *    is left after breadth and depth.
 *
 * Tier texts are those of the contract (§4.1): `abstract` (stored), `overview` and `full` (from
 * the body, or for `overview` the index's stored overview when the body was not read); a
 * candidate may use any tier of its fallback order plus the tiers up to its ceiling (§4.2).
 */
import type { CandidateFate, FateReason } from './packing';
import { GROUP_CLOSE, compactHead, directoryOf, groupOpen, joinPieces, layoutBlock } from './compact';
import { type PlanItem, type PlanOptions, type PlanResult, type PlanStats, type ReadPlan, type ReadRequest, coerceMaxTokens, contentUriOf } from './plan';
import { type Candidate, FragmentPricer, type Slot, slotFor } from './pricing';
import { pyStrip } from './python';
import { type ContextEntry, neutralizeEnvelope } from './render';
import { type DetailSpec, type Tier, isMemoryCategory, normalizeDetail, pinFor, tierRank } from './tiers';
import { countTokens, resolveTokenizer } from './tokens';
import { excerptOf, holdsAnyTerm, queryTerms } from './excerpt';

/**
 * The server's noise floor: a block is served only when its best hit reaches it — below it, the
 * question is about nothing in the store, whatever the client asked for. The stores' relevance
 * score is calibrated so that this is the boundary between evidence and noise (`@ctxmesh/stores`
 * ranking/relevance.ts: fitted on MADial-Bench's training split so that questions about nothing
 * in the store get an empty block), and it is the threshold the OpenViking plugins send by
 * default, so a plugin's body and a bare body are served alike.
 */
export const NOISE_FLOOR = 0.35;

/**
 * The evidence floor: once the best hit has passed the {@link NOISE_FLOOR} (the question is
 * about something in the store), the other hits are served down to this score. The best hit of
 * a question decides whether anything is relevant; the hits that support it score lower, and
 * cutting them at the noise floor too kept a third of the gold evidence out of the block.
 * Fitted on MADial-Bench's training split (dialogues whose index is not a multiple of 3, both
 * languages, the whole dialogue as the query): the lowest floor on a 0.01 grid at which, with
 * the noise floor as the gate, off-topic questions are served at most 8 % of the tokens on-topic
 * ones are in 1600-token blocks (0.077 at 0.12 on the training split; `npm run bench -- --only
 * calibration` refits it and prints the held-out figures: gold kept 0.864 en / 0.838 zh at 1600
 * tokens, off-topic tokens 0.097 / 0.049 of on-topic, off-topic searches empty 76 % / 93 %).
 */
export const EVIDENCE_FLOOR = 0.12;

/**
 * Relevance floor as a share of the best hit's ranked score: a candidate scoring less than a
 * quarter of the best is "far less relevant" and is not served just because room is left.
 */
export const EVIDENCE_RELEVANCE_RATIO = 0.25;

/** Most candidates the evidence packing considers (gathering never widens past it). */
export const EVIDENCE_MAX_CANDIDATES = 200;

/**
 * The floor for a request whose best ranked score is `best`: when the best reaches the
 * {@link NOISE_FLOOR}, the {@link EVIDENCE_FLOOR} or {@link EVIDENCE_RELEVANCE_RATIO} × best,
 * whichever is higher; otherwise the noise floor itself (which no hit of the request reaches,
 * so nothing is served). `-Infinity` without any hit. A hit is served only at or above it.
 */
export function relevanceFloor(best: number): number {
  if (!Number.isFinite(best)) return -Infinity;
  if (!(best >= NOISE_FLOOR)) return NOISE_FLOOR;
  return Math.max(EVIDENCE_FLOOR, best * EVIDENCE_RELEVANCE_RATIO);
}

/**
 * Which floor leaves a candidate of ranked score `score` out (see {@link relevanceFloor}):
 * `noise_floor` when the best hit is under the {@link NOISE_FLOOR} or the candidate under the
 * {@link EVIDENCE_FLOOR}, `relevance_floor` under the share of the best, else null.
 */
export function floorFate(score: number, best: number): 'noise_floor' | 'relevance_floor' | null {
  if (!Number.isFinite(best)) return null;
  if (!(best >= NOISE_FLOOR) || !(score >= EVIDENCE_FLOOR)) return 'noise_floor';
  return score < best * EVIDENCE_RELEVANCE_RATIO ? 'relevance_floor' : null;
}

/**
 * The score threshold the evidence packing's searches run with, given the client's
 * `score_threshold`: a threshold at or under the {@link NOISE_FLOOR} (the plugins send 0.35) is
 * the server's own gate already, so hits are searched down to the {@link EVIDENCE_FLOOR}; a
 * stricter one applies to every hit, as the client asked.
 */
export function evidenceSearchThreshold(clientThreshold: number | null | undefined): number {
  return typeof clientThreshold === 'number' && Number.isFinite(clientThreshold) && clientThreshold > NOISE_FLOOR ? clientThreshold : EVIDENCE_FLOOR;
}

/**
 * The evidence per-entry cap: half the block (at least 1 token). It binds while the block has
 * more than one entry; a block of one entry may spend the whole budget on it.
 */
export function evidenceEntryCap(maxTokens: number): number {
  return Math.max(1, Math.floor(coerceMaxTokens(maxTokens) / 2));
}

/** What the evidence planners need beyond the compat arguments. */
export interface EvidenceOptions extends PlanOptions {
  /**
   * Quotas as priors: category → weight (the request's resolved quotas); `null`/absent for a
   * flat request. Only categories present among the candidates share the budget.
   */
  priors?: Readonly<Record<string, number>> | null;
  /**
   * The best ranked score among every hit of the request, cooled and excluded ones included
   * (gathering knows it); absent → the best among the candidates.
   */
  bestScore?: number | null;
  /** The request's query (its planned queries, one per line): long texts may be served as query-biased excerpts. Absent: none. */
  query?: string | null;
}

/** The ranked score of a candidate (`score` when no penalty was recorded). */
export function rankedOf(c: Pick<Candidate, 'score' | 'ranked_score'>): number {
  const r = c.ranked_score;
  return typeof r === 'number' && Number.isFinite(r) ? r : Number.isFinite(c.score) ? c.score : 0;
}

function bestOf(candidates: readonly Candidate[], given: number | null | undefined): number {
  let best = typeof given === 'number' && Number.isFinite(given) ? given : -Infinity;
  for (const c of candidates) best = Math.max(best, rankedOf(c));
  return best;
}

/**
 * Text tiers a candidate may be served at, in its preference order: its fallback order
 * without `uri` (§5.3 step 1), then the tiers above its start up to its ceiling (§4.2).
 */
export function evidenceTiers(slot: Pick<Slot, 'policy'>): Tier[] {
  const out = slot.policy.fallback.filter((t) => t !== 'uri');
  for (const t of ['abstract', 'overview', 'full'] as const) {
    if (!out.includes(t) && tierRank(t) > tierRank(slot.policy.start) && tierRank(t) <= tierRank(slot.policy.ceiling)) out.push(t);
  }
  return out;
}

/**
 * The cheapest text fragment of a candidate known before its body is read (its abstract or its
 * stored overview), else its bare URI, as the evidence block writes it alone: what the read
 * planner and gathering's fill check count it at.
 */
export function cheapestKnownTokens(c: { uri: string; category: string; abstract?: string | null; overview?: string | null }, pricer: FragmentPricer, max: number): number {
  let best = Infinity;
  for (const [tier, text] of [
    ['abstract', pyStrip(c.abstract ?? '')],
    ['overview', c.overview ?? ''],
  ] as const) {
    if (text !== '') best = Math.min(best, pricer.price(compactHead(c.uri, c.uri, c.category, tier), text, max));
  }
  return best <= max ? best : pricer.price(compactHead(c.uri, c.uri, c.category, 'uri'), '', Infinity);
}

/**
 * Decide which bodies the evidence packing reads: for candidates above the relevance floor
 * (first occurrence of a node only), in rank order, while the cheapest known text fragments of
 * the candidates before them still leave room in the budget, a body is read when one of the
 * candidate's tiers needs it — `full` (except for a memory category with an abstract, whose
 * abstract is its whole body, §4.2), or `overview` when the index stored none.
 * @param candidates in rank order
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function planEvidenceReads(
  candidates: readonly Candidate[],
  maxTokens: number,
  detail: unknown,
  tokenizer: string = 'estimate',
  opts: EvidenceOptions = {},
): ReadPlan {
  return planEvidenceReadsWith(new FragmentPricer(resolveTokenizer(tokenizer), 'strict'), candidates, maxTokens, detail, opts);
}

/** {@link planEvidenceReads} with a caller's pricer. */
export function planEvidenceReadsWith(pricer: FragmentPricer, candidates: readonly Candidate[], maxTokens: number, detail: unknown, opts: EvidenceOptions = {}): ReadPlan {
  const spec = normalizeDetail(detail);
  const max = coerceMaxTokens(maxTokens);
  const best = bestOf(candidates, opts.bestScore);
  const reads: ReadRequest[] = [];
  const seen = new Set<string>();
  let spent = 0;
  const needsBody = candidates.map((candidate, index) => {
    if (floorFate(rankedOf(candidate), best) !== null || seen.has(candidate.uri)) return false;
    seen.add(candidate.uri);
    const stored = candidate.stored_overview ?? '';
    const slot = slotFor(candidate, spec, null, stored);
    const tiers = evidenceTiers(slot);
    const wantsFull = tiers.includes('full') && !(isMemoryCategory(candidate.category) && slot.texts.abstract !== '');
    const wantsOverview = tiers.includes('overview') && stored === '';
    const need = (wantsFull || wantsOverview) && spent <= max;
    if (need) reads.push({ index, uri: candidate.uri, contentUri: contentUriOf(candidate) });
    // What this candidate costs at least, as far as is known before reading.
    spent += cheapestKnownTokens({ uri: candidate.uri, category: candidate.category, abstract: slot.texts.abstract, overview: stored }, pricer, max) + 1;
    return need;
  });
  return { perEntryCap: evidenceEntryCap(max), reads, needsBody };
}

/**
 * Plan and render with the evidence packing (see the module comment for the rules). Every
 * count is taken on the whole rendered fragment in the selected tokenizer, so `used_tokens`
 * equals the tokenizer's count of each returned fragment plus one per separator and never
 * exceeds the effective budget. Bodies are neutralised strictly (a `<memory` that ends a body
 * is defused too). Stats keep the contract's keys: `per_entry_cap` is the half-block cap,
 * `dropped` counts candidates above the floor that found no room, `fill.floor_tokens` is the
 * spend after breadth, and the upgrade counts are depth steps to `overview`, to `full`, and to
 * any other tier (`spare_upgrades`).
 * @param items candidates in rank order with their tier texts (`texts` absent = body not read:
 *   the stored overview, if any, stands in for `overview`)
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function planEvidence(items: readonly PlanItem[], maxTokens: number, detail: unknown, tokenizer: string = 'estimate', opts: EvidenceOptions = {}): PlanResult {
  return planEvidenceWith(new FragmentPricer(resolveTokenizer(tokenizer), 'strict'), items, maxTokens, detail, opts);
}

/** A text option of a candidate: one of its tiers, or the query-biased excerpt of its longest one. */
type Option = Tier | 'excerpt';

interface Placement {
  tier: Option;
  tokens: number;
}

/** A directory's entries in the block, and what they cost written apart or as one group. */
interface Group {
  /** The directory (null: never grouped). */
  readonly dir: string | null;
  /** Tokens of the group's opening and closing lines. */
  readonly lines: number;
  members: number;
  /** Σ (tokens of the entry with its full URI + 1 separator). */
  apart: number;
  /** Σ tokens of the entries with their relative URIs. */
  relative: number;
}

/** What a group's entries cost written as one group, in "tokens + 1 per item" (Infinity where it cannot be one). */
function asOneGroup(g: Group): number {
  return g.dir === null || g.members < 2 ? Infinity : g.lines + g.relative + g.members + 2;
}

/** What a group adds to the block in "tokens + 1 per item" (the cheaper way to write it). */
function groupCharge(g: Group): number {
  return g.members === 0 ? 0 : Math.min(g.apart, asOneGroup(g));
}

/** True when a group is written as one (it is cheaper than its entries apart). */
function isGrouped(g: Group): boolean {
  return asOneGroup(g) < g.apart;
}

/** {@link planEvidence} with a caller's pricer (it must neutralise `strict`). */
export function planEvidenceWith(pricer: FragmentPricer, items: readonly PlanItem[], maxTokens: number, detail: unknown, opts: EvidenceOptions = {}): PlanResult {
  const spec = normalizeDetail(detail);
  const max = coerceMaxTokens(maxTokens);
  const half = evidenceEntryCap(max);
  const candidates = items.map((i) => i.candidate);
  const best = bestOf(candidates, opts.bestScore);
  const floor = relevanceFloor(best);
  const slots = items.map((item) => slotFor(item.candidate, spec, item.texts, item.texts ? '' : (item.candidate.stored_overview ?? '')));
  const n = slots.length;

  // Each candidate's usable text tiers and their costs (counted up to the whole block): with
  // its full URI (what it costs alone) and with the name relative to its directory (in a group).
  const dirs = slots.map((s) => directoryOf(s.candidate.uri));
  const cost = new Map<string, number>();
  // Query-biased excerpts of long texts (excerpt.ts): of the longest usable tier, when the
  // query's terms are in it and the tier is longer than the excerpt would be.
  const terms = opts.query ? queryTerms(opts.query) : [];
  const target = excerptTarget(max);
  const excerpt: Array<{ text: string; source: Tier } | null> = slots.map(() => null);
  const textOf = (i: number, t: Option): string => (t === 'excerpt' ? (excerpt[i]?.text ?? '') : slots[i].texts[t]);
  const priced = (i: number, t: Option, relative: boolean): number => {
    const key = `${i}\u0000${t}\u0000${relative ? 1 : 0}`;
    let c = cost.get(key);
    if (c === undefined) {
      const uri = slots[i].candidate.uri;
      const written = relative && dirs[i] !== null ? uri.slice(dirs[i]!.length) : uri;
      const head = t === 'excerpt' ? compactHead(written, uri, slots[i].candidate.category, excerpt[i]!.source, true) : compactHead(written, uri, slots[i].candidate.category, t);
      c = pricer.price(head, textOf(i, t), max);
      cost.set(key, c);
    }
    return c;
  };
  const costOf = (i: number, t: Option) => priced(i, t, false);
  const relOf = (i: number, t: Option) => priced(i, t, true);
  const fate: Array<FateReason | null> = new Array(n).fill(null);
  const seenUri = new Set<string>();
  slots.forEach((slot, i) => {
    const cut = floorFate(rankedOf(slot.candidate), best);
    if (cut) fate[i] = cut;
    else if (seenUri.has(slot.candidate.uri)) fate[i] = 'deduped';
    seenUri.add(slot.candidate.uri);
  });
  const eligible = (i: number) => fate[i] === null;
  // Only a candidate that may be served has text options (nothing prices the others).
  const tiersOf: Option[][] = slots.map((slot, i) => {
    if (!eligible(i)) return [];
    const avail: Option[] = evidenceTiers(slot).filter((t) => slot.texts[t] !== '');
    if (isPinned(spec, slot)) return avail;
    // Unpinned: cheapest first; equal costs keep the preference order (stable sort).
    avail.sort((a, b) => costOf(i, a) - costOf(i, b));
    if (terms.length === 0 || avail.length === 0) return avail;
    // The longest usable text is cut (a memory's abstract is its whole body, its overview the
    // first paragraph: the deepest tier is not always the longest).
    const longest = (avail as Tier[]).map((t) => [t, countTokens(slot.texts[t], pricer.tokenizer)] as const).sort((a, b) => b[1] - a[1] || tierRank(b[0]) - tierRank(a[0]))[0]!;
    if (longest[1] <= target) return avail;
    const ex = excerptOf(slot.texts[longest[0]], terms, target, pricer.tokenizer);
    if (!ex) return avail;
    excerpt[i] = { text: ex.text, source: longest[0] };
    // Cheapest first among the options that hold a query term; a tier that holds none (a
    // summary that does not mention what was asked) comes after the excerpt.
    const options: Option[] = [...avail, 'excerpt'];
    const relevant = new Map(options.map((t) => [t, holdsAnyTerm(textOf(i, t), terms)]));
    return options.sort((a, b) => Number(relevant.get(b)) - Number(relevant.get(a)) || costOf(i, a) - costOf(i, b));
  });

  // A block of k items costs Σ tokens + (k − 1); spending tokens + 1 per item against max + 1
  // keeps the separators exact whatever order entries are placed in. An item is an entry, or a
  // directory's entries written as one group where that is cheaper.
  const groups = new Map<string, Group>();
  const groupKey = (i: number) => dirs[i] ?? `\u0000${i}`;
  const groupOf = (i: number): Group => {
    const key = groupKey(i);
    let g = groups.get(key);
    if (!g) {
      const d = dirs[i];
      g = { dir: d, lines: d === null ? 0 : pricer.plain(groupOpen(d)) + pricer.plain(GROUP_CLOSE), members: 0, apart: 0, relative: 0 };
      groups.set(key, g);
    }
    return g;
  };
  /** Entry `i`'s group once the entry goes from tier `from` (null: absent) to `to`. */
  const changed = (i: number, from: Option | null, to: Option): Group => {
    const g = groupOf(i);
    const out = { ...g };
    if (from !== null) {
      out.members--;
      out.apart -= costOf(i, from) + 1;
      out.relative -= relOf(i, from);
    }
    out.members++;
    out.apart += costOf(i, to) + 1;
    out.relative += relOf(i, to);
    return out;
  };
  /** What the block grows by when entry `i` goes from tier `from` (null: absent) to `to`. */
  const delta = (i: number, from: Option | null, to: Option): number => groupCharge(changed(i, from, to)) - groupCharge(groupOf(i));
  let spent = 0;
  const room = () => max + 1 - spent;
  const placed = new Map<number, Placement>();
  // Texts served, as the reader sees them (body de-dup on the served text, envelope defused).
  const usedTexts = new Map<string, number>();
  const served = (i: number, t: Option) => neutralizeEnvelope(textOf(i, t));
  const place = (i: number, tier: Option) => {
    const from = placed.get(i)?.tier ?? null;
    const next = changed(i, from, tier);
    spent += groupCharge(next) - groupCharge(groupOf(i));
    groups.set(groupKey(i), next);
    if (from !== null) usedTexts.delete(served(i, from));
    placed.set(i, { tier, tokens: costOf(i, tier) });
    if (tier !== 'uri') usedTexts.set(served(i, tier), i);
  };
  /** First usable tier of `i` whose entry costs at most `cap` and adds at most `limit` tokens. */
  const breadthTier = (i: number, limit: number, cap: number): Option | null => {
    for (const t of tiersOf[i]) {
      const c = costOf(i, t);
      if (c <= cap && c !== Infinity && delta(i, null, t) <= limit && !usedTexts.has(served(i, t))) return t;
    }
    return null;
  };

  // Breadth, priors first: each present category spends its share on its own best candidates.
  const priors = opts.priors ?? null;
  if (priors) {
    const present = new Set(slots.filter((_, i) => eligible(i)).map((s) => s.candidate.category));
    const weighted = Object.entries(priors).filter(([c, w]) => present.has(c) && Number.isFinite(w) && w > 0);
    const total = weighted.reduce((a, [, w]) => a + w, 0);
    for (const [category, w] of weighted) {
      const share = Math.floor(((max + 1) * w) / total);
      let shareSpent = 0;
      for (let i = 0; i < n; i++) {
        if (!eligible(i) || placed.has(i) || slots[i].candidate.category !== category) continue;
        const t = breadthTier(i, Math.min(share - shareSpent, room()), half);
        if (t === null) continue;
        const before = spent;
        place(i, t);
        shareSpent += spent - before;
      }
    }
  }
  // Breadth, then everyone: what is left goes to the best remaining candidates.
  // A lone entry that took more than half the block stays alone.
  const aloneOverHalf = () => placed.size === 1 && [...placed.values()][0].tokens > half;
  const breadth = (): boolean => {
    if (aloneOverHalf()) return false;
    let any = false;
    for (let i = 0; i < n; i++) {
      if (!eligible(i) || placed.has(i)) continue;
      const t = breadthTier(i, room(), half);
      if (t !== null) {
        place(i, t);
        any = true;
      }
    }
    return any;
  };
  breadth();
  // Nothing fits beside anything else: the best candidate whose text fits alone is the block.
  if (placed.size === 0) {
    for (let i = 0; i < n; i++) {
      if (!eligible(i)) continue;
      const t = breadthTier(i, max + 1, max);
      if (t !== null) {
        place(i, t);
        break;
      }
    }
  }
  const fill = { floor_tokens: Math.max(0, spent - 1), overview_upgrades: 0, full_upgrades: 0, spare_upgrades: 0 };

  // Depth: one step at a time, best first, pass after pass.
  const order = () => [...placed.keys()].sort((a, b) => a - b);
  const depthCap = () => (placed.size === 1 ? max : half);
  const depth = () => {
    for (let changed = true; changed; ) {
      changed = false;
      for (const i of order()) {
        const p = placed.get(i)!;
        const current = served(i, p.tier);
        const next = tiersOf[i]
          .filter((t) => {
            const text = served(i, t);
            const owner = usedTexts.get(text);
            return costOf(i, t) > p.tokens && text !== current && (owner === undefined || owner === i);
          })
          .sort((a, b) => costOf(i, a) - costOf(i, b))[0];
        if (next === undefined) continue;
        const c = costOf(i, next);
        if (c > depthCap() || delta(i, p.tier, next) > room()) continue;
        place(i, next);
        if (next === 'overview') fill.overview_upgrades++;
        else if (next === 'full') fill.full_upgrades++;
        else fill.spare_upgrades++;
        changed = true;
      }
    }
  };
  // A deepened entry frees the text it had; a candidate that only had that text may now fit,
  // so breadth and depth alternate until neither moves (each round places at least one more).
  do depth();
  while (breadth());

  // Bare URIs last, for candidates whose every text tier is too long to share the block. A bare
  // URI is an entry like any other: beside others it takes at most half the block (a long URI
  // with its type attribute could take 14 of a 26-token block), alone it may take more.
  for (let i = 0; i < n && !aloneOverHalf(); i++) {
    if (!eligible(i) || placed.has(i)) continue;
    if (tiersOf[i].some((t) => costOf(i, t) <= half)) continue;
    if (costOf(i, 'uri') > half && placed.size > 0) continue;
    if (delta(i, null, 'uri') <= room()) place(i, 'uri');
  }

  // Fates of what was left: every text tier already served elsewhere → deduped, else budget.
  for (let i = 0; i < n; i++) {
    if (fate[i] !== null) continue;
    if (placed.has(i)) fate[i] = 'served';
    else {
      const texts = tiersOf[i].map((t) => served(i, t));
      fate[i] = texts.length > 0 && texts.every((t) => usedTexts.has(t)) ? 'deduped' : 'budget';
    }
  }

  // An excerpt is served as the tier it was taken from, marked as an excerpt in the block.
  const tierOf = (i: number, t: Option): Tier => (t === 'excerpt' ? excerpt[i]!.source : t);
  const entries: ContextEntry[] = [];
  const tierCounts: Record<string, number> = {};
  let excerpts = 0;
  for (const i of order()) {
    const p = placed.get(i)!;
    const c = slots[i].candidate;
    const tier = tierOf(i, p.tier);
    entries.push({ uri: c.uri, category: c.category, score: c.score, detail: tier, text: neutralizeEnvelope(textOf(i, p.tier)), origin: c.origin });
    tierCounts[tier] = (tierCounts[tier] ?? 0) + 1;
    if (p.tier === 'excerpt') excerpts++;
  }
  const grouped = new Set<string>();
  for (const g of groups.values()) if (isGrouped(g)) grouped.add(g.dir!);
  const blockEntries = order().map((i) => {
    const t = placed.get(i)!.tier;
    return { uri: slots[i].candidate.uri, category: slots[i].candidate.category, detail: tierOf(i, t), text: textOf(i, t), excerpt: t === 'excerpt' };
  });
  const stats: PlanStats = {
    max_tokens: max,
    used_tokens: Math.max(0, spent - 1),
    per_entry_cap: half,
    returned: entries.length,
    dropped: fate.filter((f) => f === 'budget').length,
    deduped: fate.filter((f) => f === 'deduped').length,
    detail: spec.stats,
    tier_counts: tierCounts,
    fill,
  };
  const result: PlanResult = {
    entries,
    rendered: joinPieces(layoutBlock(blockEntries, grouped)),
    stats,
    evidence: { belowFloor: fate.filter((f) => f === 'relevance_floor' || f === 'noise_floor').length, relevanceFloor: floor, ...(terms.length > 0 ? { excerpts } : {}) },
  };
  if (opts.fates) {
    result.fates = slots.map(
      (slot, i): CandidateFate => ({
        uri: slot.candidate.uri,
        category: slot.candidate.category,
        score: slot.candidate.score,
        rankedScore: rankedOf(slot.candidate),
        fate: fate[i]!,
        tier: placed.has(i) ? tierOf(i, placed.get(i)!.tier) : null,
        costs: compactCostsOf(slot, pricer, max),
        cooledTurn: null,
      }),
    );
  }
  return result;
}

/** A slot's tier costs as the compact block writes it alone (its full URI), see {@link TierCosts}. */
function compactCostsOf(slot: Slot, pricer: FragmentPricer, max: number): CandidateFate['costs'] {
  const c = slot.candidate;
  const at = (t: Tier) => pricer.price(compactHead(c.uri, c.uri, c.category, t), slot.texts[t], max);
  return {
    uri: pricer.price(compactHead(c.uri, c.uri, c.category, 'uri'), '', max),
    abstract: slot.texts.abstract === '' ? null : at('abstract'),
    overview: slot.texts.overview === '' ? null : at('overview'),
    full: slot.texts.full === '' ? null : at('full'),
  };
}

/**
 * About how many tokens an excerpt keeps: a tenth of the block, between 48 and 240 (400 → 48,
 * 1600 → 160, 4000 → 240), so that a long entry no longer costs several short ones their place.
 */
export function excerptTarget(maxTokens: number): number {
  return Math.min(240, Math.max(48, Math.floor(coerceMaxTokens(maxTokens) / 10)));
}

/** True when a `detail` pin applies to the slot's candidate (directories ignore pins). */
function isPinned(spec: DetailSpec, slot: Slot): boolean {
  return slot.candidate.is_directory !== true && pinFor(spec, slot.candidate.category) !== null;
}

