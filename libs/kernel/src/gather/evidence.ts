/**
 * Gathering for the `evidence` packing: the same searches as compat (§3.2 flat, §3.3 bucketed,
 * peer scans, exclusions with compensating rows, the stable origin-aware sort), but the pool is
 * sized by the budget instead of a fixed count, and it is cut by the noise and evidence floors.
 *
 * 1. Round one asks every search for {@link initialEvidenceWidth} rows (the budget over a
 *    typical entry), whatever the bucket's quota: a quota is a prior for the planner, not a
 *    limit on what is found (a bucket with no hit simply holds nothing).
 * 2. Candidates are built and de-duplicated by node; unless the best ranked score of every hit
 *    (cooled and excluded ones included) reaches the noise floor, every candidate leaves the
 *    pool; otherwise those below the evidence floor, or below the share of the best, do
 *    ({@link floorFate}). The searches run with {@link evidenceSearchThreshold}: down to the
 *    evidence floor, or the client's stricter threshold.
 * 3. If the cheapest known text tiers of the pool (stored abstract or overview fragments, in
 *    the request's tokenizer) do not more than fill the budget, the searches that came back
 *    full and whose last hit is still above the floor run once more, wider (one extra round,
 *    at most {@link EVIDENCE_MAX_CANDIDATES} rows each).
 * 4. The pool keeps at most {@link EVIDENCE_MAX_CANDIDATES} candidates: first what compat would
 *    have kept (each bucket's top `quota`, or the flat `limit`), then the best of the rest.
 */
import { EVIDENCE_MAX_CANDIDATES, cheapestKnownTokens, evidenceSearchThreshold, floorFate, relevanceFloor } from '../budget/evidence';
import { FragmentPricer } from '../budget/pricing';
import { resolveTokenizer } from '../budget/tokens';
import { activeBuckets } from '../request/quotas';
import type { QuotaKey } from '../request/types';
import type { Category } from '../uri';
import {
  FateBook,
  bucketList,
  countOrigins,
  dedupByNode,
  dedupByUri,
  flatCategory,
  gatherSetup,
  overfetch,
  sortCandidates,
  type ExcludedHit,
  type Gathered,
  type GatherParams,
  type GatherResult,
  type GatheredCandidate,
  type SearchCall,
  type SearchFn,
  type SearchLists,
} from './gather';
import { bucketContextType, categoryTargets, isMemoryBucket, withContextType, type FilterLike, type GatherFilter } from './targets';

/**
 * Tokens per row of the first round: a typical entry (a short memory or an abstract with its
 * compact envelope is about 40 tokens), so that the first round holds what the budget can serve
 * above the evidence floor and a second round is the exception. At 60 tokens a row, three
 * English MADial requests in four at 1600 tokens came back full above the floor and ran a second,
 * wider round (27 then 54 rows); at 40 every one ran once (40 rows).
 */
export const FIRST_ROUND_TOKENS_PER_ROW = 40;
/** The first round never asks for fewer rows than compat's default `limit`. */
export const MIN_EVIDENCE_WIDTH = 10;
/**
 * Nor for more than this: above it the evidence floor, not the budget, ends a block of short
 * memories (a MADial block holds 30–40 entries above it), and a search that comes back full
 * still gets its second round.
 */
export const MAX_FIRST_ROUND_WIDTH = 50;

/**
 * Rows each search asks for in the first round: the budget over {@link FIRST_ROUND_TOKENS_PER_ROW},
 * between {@link MIN_EVIDENCE_WIDTH} and {@link MAX_FIRST_ROUND_WIDTH} (400 → 10, 1600 → 40,
 * 4000 → 50).
 */
export function initialEvidenceWidth(maxTokens: number): number {
  const max = Math.max(1, Math.trunc(Number(maxTokens)) || 1);
  return Math.min(MAX_FIRST_ROUND_WIDTH, Math.max(MIN_EVIDENCE_WIDTH, Math.ceil(max / FIRST_ROUND_TOKENS_PER_ROW)));
}

/** Peer scans ask for four times the width (the actor's own peer hits are dropped from them), bounded. */
function peerWidth(w: number): number {
  return Math.min(4 * w, 2 * EVIDENCE_MAX_CANDIDATES);
}

/** Inputs of {@link gatherEvidence}: compat's, plus the budget the pool is sized by. */
export interface EvidenceGatherParams<F extends FilterLike = FilterLike> extends GatherParams<F> {
  /** The request's budget (coerced to `max(1, int)`). */
  maxTokens: number;
  /** Tokenizer the pool's cheapest texts are priced in. @default "estimate" */
  tokenizer?: string;
}

/** Output of {@link gatherEvidence}. */
export interface EvidenceGatherResult extends GatherResult {
  /** Best ranked score among every hit (excluded and cooled included), or null without hits. */
  bestScore: number | null;
  /** The relevance floor the pool was cut at, or null without hits. */
  relevanceFloor: number | null;
  /** Search rounds made (1 or 2). */
  rounds: number;
  /** Distinct nodes below the floor (left out of the pool). */
  belowFloor: number;
  /** Rows each search asked for in each round (the widths), in round order. */
  widths: number[];
  /** Searches launched in each round, in round order. */
  calls: number[];
}

/** One launched search and what it returned. */
interface Issued<F> {
  call: SearchCall<GatherFilter<F>>;
  /** Bucket of a bucketed call, null in flat mode. */
  bucket: QuotaKey | null;
  /** Peer scan (only other peers' memories are taken from it). */
  scan: boolean;
  lists: SearchLists | null;
}

/**
 * Gather an evidence pool (see the module comment). Errors behave as in compat: a blank query
 * without image or a request rejection raises; another failed call contributes nothing and is
 * reported in `retrievalErrors`. `searched` and `excluded` describe the last round's results.
 * With `explain`, {@link GatherResult.fates} names each node hit but left out of the pool
 * (`excluded`, `cooled`, `relevance_floor`, `quota`).
 */
export async function gatherEvidence<F extends FilterLike>(params: EvidenceGatherParams<F>, search: SearchFn<GatherFilter<F>>): Promise<EvidenceGatherResult> {
  const g = gatherSetup(params, search);
  const max = Math.max(1, Math.trunc(Number(params.maxTokens)) || 1);
  const pricer = new FragmentPricer(resolveTokenizer(params.tokenizer ?? 'estimate'), 'strict');
  const n = g.excludedSet.size;
  const flat = params.quotas === null;
  const buckets = flat ? [] : activeBuckets(params.quotas!);

  /** The calls of one round at width `w` (optionally only those `keep` selects, from the last round). */
  const plan = (w: number): Array<Omit<Issued<F>, 'lists'>> => {
    const out: Array<Omit<Issued<F>, 'lists'>> = [];
    const { peers } = g;
    const base = { ...g.base, scoreThreshold: evidenceSearchThreshold(params.scoreThreshold) };
    if (flat) {
      for (const query of params.queries) out.push({ bucket: null, scan: false, call: { ...base, query, targetUri: '', limit: overfetch(w, n), filter: params.filter, openContext: false } });
      if (g.scanPeers) {
        for (const query of params.queries) out.push({ bucket: null, scan: true, call: { ...base, query, targetUri: peers, limit: overfetch(peerWidth(w), n), filter: params.filter, openContext: true } });
      }
      return out;
    }
    for (const [bucket] of buckets) {
      const filter = withContextType(params.filter, bucketContextType(bucket));
      for (const query of params.queries) {
        for (const targetUri of categoryTargets(bucket, params.userId, g.actor, params.role)) {
          out.push({ bucket, scan: false, call: { ...base, query, targetUri, limit: overfetch(w, n), filter, openContext: false } });
        }
      }
      if (g.scanPeers && isMemoryBucket(bucket)) {
        for (const query of params.queries) {
          out.push({ bucket, scan: true, call: { ...base, query, targetUri: peers, limit: overfetch(peerWidth(w), n), filter, openContext: true } });
        }
      }
    }
    return out;
  };
  const launch = async (calls: Array<Omit<Issued<F>, 'lists'>>): Promise<Array<Issued<F>>> => {
    const lists = await Promise.all(calls.map((c) => g.run(c.call)));
    return calls.map((c, i) => ({ ...c, lists: lists[i] }));
  };

  /** Build the pool from every call's results. */
  const assemble = (issued: ReadonlyArray<Issued<F>>) => {
    const excludedHits: ExcludedHit[] = [];
    const onExcluded = (x: ExcludedHit) => excludedHits.push(x);
    const searched: Record<string, number> = {};
    let built: GatheredCandidate[];
    const before = g.excluded();
    if (flat) {
      const gathered = dedupByUri(
        issued.flatMap((x) => (x.scan ? g.take(x.lists, ['memories'], g.otherPeerMemory) : g.take(x.lists, ['memories', 'resources', 'skills']))),
      );
      searched.all = gathered.length;
      built = g.build(gathered, flatCategory, onExcluded, true);
    } else {
      built = [];
      for (const [bucket] of buckets) {
        const segment = `/memories/${bucket}/`;
        const list = bucketList(bucket);
        const mine = issued.filter((x) => x.bucket === bucket);
        const gathered: Gathered[] = dedupByUri([
          ...mine.filter((x) => !x.scan).flatMap((x) => g.take(x.lists, [list])),
          ...mine.filter((x) => x.scan).flatMap((x) => g.take(x.lists, ['memories'], (h) => !!h.uri && h.uri.includes(segment) && g.otherPeerMemory(h))),
        ]);
        searched[bucket] = gathered.length;
        const cat = bucket as Category;
        built.push(...g.build(gathered, () => cat, onExcluded, true));
      }
    }
    const excludedOccurrences = g.excluded() - before;
    const nodes = sortCandidates(dedupByNode(built));
    let best = -Infinity;
    for (const c of nodes) best = Math.max(best, c.rankedScore);
    for (const x of excludedHits) best = Math.max(best, x.rankedScore);
    const floor = relevanceFloor(best);
    const pool: GatheredCandidate[] = [];
    const below: GatheredCandidate[] = [];
    for (const c of nodes) (floorFate(c.rankedScore, best) === null ? pool : below).push(c);
    return { searched, excludedOccurrences, excludedHits, pool, below, best, floor };
  };

  const w1 = initialEvidenceWidth(max);
  const widths = [w1];
  let issued = await launch(plan(w1));
  const calls = [issued.length];
  let view = assemble(issued);

  // Fill check: Σ (cheapest known tokens + 1) over the pool against max + 1 (one separator per entry after the first).
  const spend = (pool: readonly GatheredCandidate[]) => pool.reduce((a, c) => a + cheapestKnownTokens(c, pricer, max) + 1, 0);
  let rounds = 1;
  const spent = spend(view.pool);
  if (spent <= max + 1 && view.pool.length < EVIDENCE_MAX_CANDIDATES) {
    const open = issued.filter((x) => mayHaveMore(x, view.floor));
    if (open.length > 0) {
      // Widen to what the pool's average entry says the budget needs, with headroom.
      const avg = view.pool.length > 0 ? spent / view.pool.length : 1;
      const w2 = Math.min(EVIDENCE_MAX_CANDIDATES, Math.max(2 * w1, Math.ceil(((max + 1) / avg) * 1.5)));
      widths.push(w2);
      const wider = plan(w2);
      const again = await launch(open.map((x) => wider[issued.indexOf(x)]));
      calls.push(again.length);
      issued = issued.map((x) => {
        const k = open.indexOf(x);
        return k >= 0 ? again[k] : x;
      });
      view = assemble(issued);
      rounds = 2;
    }
  }

  // Bound the pool: compat's own selection first, then the best of the rest.
  let candidates = view.pool;
  const cut: GatheredCandidate[] = [];
  if (candidates.length > EVIDENCE_MAX_CANDIDATES) {
    const reserved = new Set<GatheredCandidate>();
    if (flat) candidates.slice(0, Math.max(0, params.limit)).forEach((c) => reserved.add(c));
    else for (const [bucket, q] of buckets) candidates.filter((c) => c.category === bucket).slice(0, q).forEach((c) => reserved.add(c));
    const keep = new Set([...reserved].slice(0, EVIDENCE_MAX_CANDIDATES));
    for (const c of candidates) if (keep.size < EVIDENCE_MAX_CANDIDATES) keep.add(c);
    cut.push(...candidates.filter((c) => !keep.has(c)));
    candidates = candidates.filter((c) => keep.has(c));
  }

  const result: EvidenceGatherResult = {
    candidates,
    searched: view.searched,
    excluded: view.excludedOccurrences,
    origins: countOrigins(candidates),
    retrievalErrors: g.retrievalErrors(),
    bestScore: Number.isFinite(view.best) ? view.best : null,
    relevanceFloor: Number.isFinite(view.floor) ? view.floor : null,
    rounds,
    belowFloor: view.below.length,
    widths,
    calls,
  };
  if (params.explain) {
    const book = new FateBook();
    for (const x of view.excludedHits) book.add(x, x.reason);
    for (const c of view.below) book.add(c, floorFate(c.rankedScore, view.best) ?? 'relevance_floor');
    for (const c of cut) book.add(c, 'quota');
    result.fates = book.list(candidates, params.cooledTurns);
  }
  return result;
}

/** A search that came back full, whose last hit is still at or above the floor, may have more worth having. */
function mayHaveMore<F>(x: Issued<F>, floor: number): boolean {
  if (!x.lists) return false;
  const hits = [...x.lists.memories, ...x.lists.resources, ...x.lists.skills];
  if (hits.length < x.call.limit) return false;
  const last = Math.min(...hits.map((h) => (typeof h.score === 'number' && Number.isFinite(h.score) ? h.score : 0)));
  return last >= floor;
}
