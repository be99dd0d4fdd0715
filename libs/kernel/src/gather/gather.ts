/**
 * Context-mode gathering (context-contract §3, §2.3, §2.4): flat or bucketed retrieval,
 * peer scans, URI de-dup, exclusions with compensating rows, candidate building, the stable
 * origin-aware sort and truncation. Retrieval is injected; nothing here does I/O itself.
 */
import type { CandidateFate, FateReason } from '../budget/packing';
import { EMPTY_QUERY_MESSAGE, InvalidArgumentError, isRequestRejection } from '../errors';
import { activeBuckets } from '../request/quotas';
import type { Penalties, PeerScope, QuotaKey, Quotas } from '../request/types';
import {
  categoryFromUri,
  isProfile,
  originOf,
  originRank,
  peersRoot,
  stripSidecar,
  type Category,
  type Origin,
} from '../uri';
import {
  bucketContextType,
  categoryTargets,
  isMemoryBucket,
  withContextType,
  type CallerRole,
  type FilterLike,
  type GatherFilter,
} from './targets';

/** One retrieval hit as the search service returns it. */
export interface GatherHit {
  /** Indexed URI (may be a directory sidecar). */
  uri: string;
  /** Raw relevance; anything that is not a finite number counts as 0. */
  score: number;
  /** Stored abstract. */
  abstract?: string | null;
  /** Stored overview (used when the abstract is empty). */
  overview?: string | null;
  /** Declared category, used by flat mode for memory-list hits without a `/memories/` segment. */
  category?: string | null;
}

/** The three lists of one retrieval call. */
export interface SearchLists {
  memories: GatherHit[];
  resources: GatherHit[];
  skills: GatherHit[];
}

/** One retrieval call. */
export interface SearchCall<F> {
  /** Planned query. */
  query: string;
  /** Target URI; `""` = the service's default scope for the identity. */
  targetUri: string;
  /** Rows wanted (already includes the compensating rows). */
  limit: number;
  /** Filter to apply, or null. */
  filter: F | null;
  /** Passed verbatim (applies to raw scores). */
  scoreThreshold: number | null;
  /** Passed verbatim (already alias-resolved), null when absent. */
  imageUrl: string | null;
  /** True for peer scans: the actor peer is cleared so every peer of the user is visible. */
  openContext: boolean;
}

/**
 * Performs exactly one retrieval call. Throw {@link InvalidArgumentError} (or `InvalidUriError`)
 * to reject the request; any other error degrades to "no hits" plus a retrieval error.
 */
export type SearchFn<F> = (call: SearchCall<F>) => Promise<SearchLists>;

/** Inputs of {@link gatherCandidates}. */
export interface GatherParams<F extends FilterLike = FilterLike> {
  /** Planned queries (see `planQueries`: never empty). */
  queries: readonly string[];
  /** Calling user. */
  userId: string;
  /** Calling role (root changes the resources targets). */
  role: CallerRole;
  /** Actor peer, or null. */
  actorPeerId: string | null;
  /** Resolved quotas; null = flat mode. */
  quotas: Quotas | null;
  /** Flat-mode row count (`node_limit` or `limit`); `≤ 0` keeps nothing. */
  limit: number;
  /** Any value other than `"actor"` behaves as `"all"`. */
  peerScope: PeerScope | string;
  /** Effective filter of §1.8, or null. */
  filter: F | null;
  /** Passed verbatim to every call. */
  scoreThreshold: number | null;
  /** Passed verbatim to every call. */
  imageUrl: string | null;
  /** `exclude_uris` ∪ cooled ledger URIs, normalised; matched against raw and node URIs. */
  excluded: Iterable<string>;
  /** Resolved other-peer penalties. */
  penalties: Penalties;
  /** The part of `excluded` that the session ledger cooled (fates say `cooled` for them). */
  cooled?: Iterable<string>;
  /** Ledger turn each cooled URI was served at, when known (for fates). */
  cooledTurns?: ReadonlyMap<string, number> | null;
  /** Also return {@link GatherResult.fates}. @default false */
  explain?: boolean;
}

/** A context candidate (§3.5). */
export interface GatheredCandidate {
  /** Node URI (sidecar stripped to its directory). */
  uri: string;
  /** Category (§2.3). */
  category: Category;
  /** Raw score; what the response reports. */
  score: number;
  /** Score minus the other-peer penalty; ranking only. */
  rankedScore: number;
  /** Hit abstract, else its overview, else `""`. */
  abstract: string;
  /** Origin relative to the caller. */
  origin: Origin;
  /** True when the hit was a directory sidecar. */
  isDirectory: boolean;
  /** True when bodies must be read with the open context (other peers' hits). */
  openContext: boolean;
  /** The hit's stored overview (evidence packing only; compat never reads it). */
  overview?: string;
}

/** Result of {@link gatherCandidates}. */
export interface GatherResult {
  /** Final candidates, sorted. */
  candidates: GatheredCandidate[];
  /** `stats.searched`: `{all: n}` (flat) or one key per active bucket, in active-bucket order. */
  searched: Record<string, number>;
  /** `stats.excluded`: hit occurrences dropped by `excluded`. */
  excluded: number;
  /** `stats.origins` over the final candidates (always the three keys). */
  origins: Record<Origin, number>;
  /** `"<ErrorClass>: <message>"` (≤ 200 chars each) of failed calls, first 5, in call order. */
  retrievalErrors: string[];
  /** With `explain`: one fate per node that was hit but is not a candidate. */
  fates?: CandidateFate[];
}

/** Retrieval error strings are cut to this many characters. */
export const RETRIEVAL_ERROR_MAX_CHARS = 200;
/** At most this many retrieval error strings are kept. */
export const RETRIEVAL_ERRORS_KEPT = 5;

/** One of the three result lists. */
export type ListName = keyof SearchLists;

/** A hit after URI de-dup, with the list that first produced its URI. */
export interface Gathered {
  hit: GatherHit;
  score: number;
  list: ListName;
}

/**
 * Rows to ask for when `w` are wanted and `excludedCount` URIs may be filtered out:
 * `w + min(excludedCount, 2·w)`, never below 0.
 */
export function overfetch(w: number, excludedCount: number): number {
  return Math.max(0, w + Math.min(excludedCount, 2 * w));
}

/** A raw score as a finite number (non-numeric → 0). */
function scoreOf(hit: GatherHit): number {
  const s = hit.score as unknown;
  return typeof s === 'number' && Number.isFinite(s) ? s : 0;
}

/** `"<ErrorClass>: <message>"`, cut to 200 code points. */
export function describeRetrievalError(e: unknown): string {
  let text: string;
  if (e instanceof Error) text = `${e.name || e.constructor.name}: ${e.message}`;
  else text = `Error: ${String(e)}`;
  const cps = Array.from(text);
  return cps.length > RETRIEVAL_ERROR_MAX_CHARS ? cps.slice(0, RETRIEVAL_ERROR_MAX_CHARS).join('') : text;
}

/** De-dup by exact URI: first position kept, replaced by a later strictly higher score. */
export function dedupByUri(items: Gathered[]): Gathered[] {
  const index = new Map<string, number>();
  const out: Gathered[] = [];
  for (const it of items) {
    const at = index.get(it.hit.uri);
    if (at === undefined) {
      index.set(it.hit.uri, out.length);
      out.push(it);
    } else if (it.score > out[at].score) {
      // The list of first appearance decides the flat-mode category (§2.3), so keep it.
      out[at] = { ...it, list: out[at].list };
    }
  }
  return out;
}

/** Descending by (ranked score, origin rank); `Array.prototype.sort` is stable. */
export function sortCandidates(candidates: GatheredCandidate[]): GatheredCandidate[] {
  return candidates.sort((a, b) => b.rankedScore - a.rankedScore || originRank(b.origin) - originRank(a.origin));
}

/** Category of a flat-mode hit (§2.3 step 2). */
export function flatCategory(g: Gathered): Category {
  if (g.list === 'resources') return 'resources';
  if (g.list === 'skills') return 'skills';
  return categoryFromUri(g.hit.uri, g.hit.category ?? null);
}

/** A hit that never became a candidate because of the exclusions (or a profile file). */
export interface ExcludedHit {
  /** Node URI. */
  uri: string;
  /** Category the hit would have had. */
  category: Category;
  score: number;
  rankedScore: number;
  /** `cooled` when the node is in the ledger's cooled set, else `excluded` (exclude_uris, profile). */
  reason: 'cooled' | 'excluded';
}

/**
 * The per-request machinery both gatherers share: launching calls with per-slot error
 * capture, taking hits out of result lists, and building candidates (§3.5) with the
 * exclusions, profile skip, categories, origins and penalties.
 * @internal exported for `./evidence`
 */
export function gatherSetup<F extends FilterLike>(params: GatherParams<F>, search: SearchFn<GatherFilter<F>>) {
  const excludedSet = new Set(params.excluded);
  const cooledSet = new Set(params.cooled ?? []);
  const scanPeers = params.peerScope !== 'actor';
  const peers = peersRoot(params.userId);
  const actor = params.actorPeerId || null;
  const origin = (nodeUri: string) => originOf(nodeUri, params.userId, actor);

  // Calls are launched together; errors are recorded per call slot so that the reported order
  // does not depend on completion order.
  const errorSlots: Array<string | undefined> = [];
  const run = (call: SearchCall<GatherFilter<F>>): Promise<SearchLists | null> => {
    const slot = errorSlots.length;
    errorSlots.push(undefined);
    return (async () => {
      if (call.query.trim() === '' && !call.imageUrl) throw new InvalidArgumentError(EMPTY_QUERY_MESSAGE);
      try {
        return await search(call);
      } catch (e) {
        if (isRequestRejection(e)) throw e;
        errorSlots[slot] = describeRetrievalError(e);
        return null;
      }
    })();
  };
  const base = { scoreThreshold: params.scoreThreshold, imageUrl: params.imageUrl };

  let excludedCount = 0;
  const build = (items: Gathered[], categoryOf: (g: Gathered) => Category, onExcluded?: (x: ExcludedHit) => void, withOverview = false): GatheredCandidate[] => {
    const out: GatheredCandidate[] = [];
    for (const g of items) {
      const raw = g.hit.uri;
      if (!raw) continue;
      const { nodeUri, isDirectory } = stripSidecar(raw);
      const profile = isProfile(nodeUri);
      const excluded = !profile && (excludedSet.has(raw) || excludedSet.has(nodeUri));
      if (profile || excluded) {
        if (excluded) excludedCount += 1;
        if (onExcluded) {
          const category = categoryOf(g);
          const penalty = origin(nodeUri) === 'other_peer' ? params.penalties[category] ?? 0 : 0;
          const cooled = cooledSet.has(raw) || cooledSet.has(nodeUri);
          onExcluded({ uri: nodeUri, category, score: g.score, rankedScore: g.score - penalty, reason: cooled ? 'cooled' : 'excluded' });
        }
        continue;
      }
      const category = categoryOf(g);
      const o = origin(nodeUri);
      const penalty = o === 'other_peer' ? params.penalties[category] ?? 0 : 0;
      out.push({
        uri: nodeUri,
        category,
        score: g.score,
        rankedScore: g.score - penalty,
        abstract: g.hit.abstract || g.hit.overview || '',
        origin: o,
        isDirectory,
        openContext: o === 'other_peer',
        ...(withOverview ? { overview: g.hit.overview || '' } : {}),
      });
    }
    return out;
  };
  const take = (lists: SearchLists | null, names: ListName[], keep: (h: GatherHit) => boolean = () => true): Gathered[] => {
    if (!lists) return [];
    const out: Gathered[] = [];
    for (const list of names) {
      for (const hit of lists[list] ?? []) if (keep(hit)) out.push({ hit, score: scoreOf(hit), list });
    }
    return out;
  };
  const otherPeerMemory = (h: GatherHit) => !!h.uri && origin(stripSidecar(h.uri).nodeUri) === 'other_peer';
  const retrievalErrors = () => errorSlots.filter((e): e is string => e !== undefined).slice(0, RETRIEVAL_ERRORS_KEPT);
  return { excludedSet, cooledSet, scanPeers, peers, actor, run, base, build, take, otherPeerMemory, retrievalErrors, excluded: () => excludedCount };
}

/** Counts of the three origins over candidates (always the three keys). */
export function countOrigins(candidates: readonly Pick<GatheredCandidate, 'origin'>[]): Record<Origin, number> {
  const origins: Record<Origin, number> = { actor_peer: 0, self: 0, other_peer: 0 };
  for (const c of candidates) origins[c.origin] += 1;
  return origins;
}

/** The list a bucket's hits come from. */
export function bucketList(bucket: QuotaKey): ListName {
  return bucket === 'resources' ? 'resources' : bucket === 'skills' ? 'skills' : 'memories';
}

/**
 * Gather context candidates with one injected retrieval function (the compat packing).
 *
 * All retrieval calls run concurrently. A call with a blank query and no image raises
 * {@link InvalidArgumentError} ({@link EMPTY_QUERY_MESSAGE}); so does any call whose search
 * throws a request rejection. Other failures make that call contribute nothing and are
 * reported in `retrievalErrors`. `quotas: {}` (or all zero) makes no call at all. With
 * `explain`, {@link GatherResult.fates} names every hit that did not become a candidate:
 * `excluded`/`cooled`, or `quota` when the flat `limit` or a bucket's quota cut it.
 */
export async function gatherCandidates<F extends FilterLike>(
  params: GatherParams<F>,
  search: SearchFn<GatherFilter<F>>,
): Promise<GatherResult> {
  const g = gatherSetup(params, search);
  const { run, base, build, take, otherPeerMemory, peers } = g;
  const fates = params.explain ? new FateBook() : null;
  const onExcluded = fates ? (x: ExcludedHit) => fates.add(x, x.reason) : undefined;

  let candidates: GatheredCandidate[];
  const searched: Record<string, number> = {};

  if (params.quotas === null) {
    const limit = params.limit;
    const n = g.excludedSet.size;
    const mainCalls = params.queries.map((query) =>
      run({ ...base, query, targetUri: '', limit: overfetch(limit, n), filter: params.filter, openContext: false }),
    );
    const peerCalls = g.scanPeers
      ? params.queries.map((query) =>
          run({ ...base, query, targetUri: peers, limit: overfetch(Math.max(4 * limit, limit), n), filter: params.filter, openContext: true }),
        )
      : [];
    const [main, scans] = await Promise.all([Promise.all(mainCalls), Promise.all(peerCalls)]);
    const gathered = dedupByUri([
      ...main.flatMap((r) => take(r, ['memories', 'resources', 'skills'])),
      ...scans.flatMap((r) => take(r, ['memories'], otherPeerMemory)),
    ]);
    searched.all = gathered.length;
    const sorted = sortCandidates(build(gathered, flatCategory, onExcluded));
    candidates = sorted.slice(0, Math.max(0, limit));
    for (const c of sorted.slice(candidates.length)) fates?.add(c, 'quota');
  } else {
    const n = g.excludedSet.size;
    const perBucket = await Promise.all(
      activeBuckets(params.quotas).map(async ([bucket, q]) => {
        const filter = withContextType(params.filter, bucketContextType(bucket));
        const targets = categoryTargets(bucket, params.userId, g.actor, params.role);
        const scoped = params.queries.flatMap((query) =>
          targets.map((targetUri) => run({ ...base, query, targetUri, limit: overfetch(q, n), filter, openContext: false })),
        );
        const scans =
          g.scanPeers && isMemoryBucket(bucket)
            ? params.queries.map((query) =>
                run({ ...base, query, targetUri: peers, limit: overfetch(Math.max(4 * q, q), n), filter, openContext: true }),
              )
            : [];
        const [scopedRes, scanRes] = await Promise.all([Promise.all(scoped), Promise.all(scans)]);
        return { bucket, q, scopedRes, scanRes };
      }),
    );
    const merged: GatheredCandidate[] = [];
    for (const { bucket, q, scopedRes, scanRes } of perBucket) {
      const list = bucketList(bucket);
      const segment = `/memories/${bucket}/`;
      const gathered = dedupByUri([
        ...scopedRes.flatMap((r) => take(r, [list])),
        ...scanRes.flatMap((r) => take(r, ['memories'], (h) => !!h.uri && h.uri.includes(segment) && otherPeerMemory(h))),
      ]);
      searched[bucket] = gathered.length;
      const cat = bucket as QuotaKey as Category;
      const sorted = sortCandidates(build(gathered, () => cat, onExcluded));
      merged.push(...sorted.slice(0, q));
      for (const c of sorted.slice(q)) fates?.add(c, 'quota');
    }
    candidates = sortCandidates(dedupByNode(merged));
  }

  const result: GatherResult = { candidates, searched, excluded: g.excluded(), origins: countOrigins(candidates), retrievalErrors: g.retrievalErrors() };
  if (fates) result.fates = fates.list(candidates, params.cooledTurns);
  return result;
}

/**
 * Fates of the hits gathering left out, one per node: an exclusion wins over any other reason
 * (it is why the node cannot be served at all), otherwise the first reason recorded stays.
 * @internal exported for `./evidence`
 */
export class FateBook {
  private readonly byUri = new Map<string, { x: Pick<GatheredCandidate, 'uri' | 'category' | 'score' | 'rankedScore'>; fate: FateReason }>();

  /** Record a reason for a node (see the class comment for which one is kept). */
  add(x: Pick<GatheredCandidate, 'uri' | 'category' | 'score' | 'rankedScore'>, fate: FateReason): void {
    const known = this.byUri.get(x.uri);
    if (known && (known.fate === 'cooled' || known.fate === 'excluded' || (fate !== 'cooled' && fate !== 'excluded'))) return;
    this.byUri.set(x.uri, { x, fate });
  }

  /** The fates, in first-recorded order, leaving out nodes that are candidates. */
  list(candidates: readonly Pick<GatheredCandidate, 'uri'>[], cooledTurns?: ReadonlyMap<string, number> | null): CandidateFate[] {
    const kept = new Set(candidates.map((c) => c.uri));
    const out: CandidateFate[] = [];
    for (const { x, fate } of this.byUri.values()) {
      if (kept.has(x.uri)) continue;
      out.push({
        uri: x.uri,
        category: x.category,
        score: x.score,
        rankedScore: x.rankedScore,
        fate,
        tier: null,
        costs: null,
        cooledTurn: fate === 'cooled' ? (cooledTurns?.get(x.uri) ?? null) : null,
      });
    }
    return out;
  }
}

/** Bucket merge: de-dup by node URI, first position kept, replaced by a strictly higher raw score. */
export function dedupByNode(items: GatheredCandidate[]): GatheredCandidate[] {
  const index = new Map<string, number>();
  const out: GatheredCandidate[] = [];
  for (const c of items) {
    const at = index.get(c.uri);
    if (at === undefined) {
      index.set(c.uri, out.length);
      out.push(c);
    } else if (c.score > out[at].score) {
      out[at] = c;
    }
  }
  return out;
}
