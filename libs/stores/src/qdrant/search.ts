import type { Schemas } from '@qdrant/js-client-rest';
import { monotoneScores } from '../ranking/fusion';
import { DEFAULT_TUNING } from '../tuning';
import type { SearchHit, SearchQuery } from '../ports/vector-index';
import { searchFilter } from './filter';
import { lexicalCosine, queryTermWeights, sparseQuery } from './lexical';
import { summarySelector, toSummary } from './payload';
import { DENSE_VECTOR, LEXICAL_VECTOR, P } from './schema';

/** Hybrid-search knobs, defaulting to the embedded index's values so both adapters rank alike. */
export interface QdrantHybridTuning {
  /** RRF rank constant of the embedded formula `w / (k + rank)`, rank from 1. */
  rrfK: number;
  /** RRF weight of the dense leg. */
  denseWeight: number;
  /** RRF weight of the lexical leg. */
  lexicalWeight: number;
  /** Candidates taken from each leg: `max(legMin, limit × legFactor)`. */
  legMin: number;
  /** See `legMin`. */
  legFactor: number;
  /** Weight of minor (CJK unigram) query terms. */
  minorWeight: number;
}

/** Default {@link QdrantHybridTuning}: the embedded index's `DEFAULT_TUNING`, read at load. */
export const DEFAULT_QDRANT_TUNING: Readonly<QdrantHybridTuning> = Object.freeze({
  rrfK: DEFAULT_TUNING.rrfK,
  denseWeight: DEFAULT_TUNING.denseWeight,
  lexicalWeight: DEFAULT_TUNING.lexicalWeight,
  legMin: DEFAULT_TUNING.legMin,
  legFactor: DEFAULT_TUNING.legFactor,
  minorWeight: DEFAULT_TUNING.minorWeight,
});

/**
 * Qdrant's RRF query for a tuning. Qdrant scores `1 / (k + rank/w − 1)` (rank from 1), the
 * embedded index `w / (k + rank)`: with k' = k + 1 the two agree exactly when both weights are
 * 1; with other weights Qdrant scales the rank instead of the contribution, so the favoured leg
 * still wins ties of rank but the two fused orders can differ further down. Weights are only
 * sent when they are not all 1 (weighted RRF needs Qdrant ≥ 1.17; `k` needs ≥ 1.16).
 */
export function rrfQuery(tuning: QdrantHybridTuning): Schemas['RrfQuery'] {
  const weighted = tuning.denseWeight !== 1 || tuning.lexicalWeight !== 1;
  return { rrf: weighted ? { k: tuning.rrfK + 1, weights: [tuning.denseWeight, tuning.lexicalWeight] } : { k: tuning.rrfK + 1 } };
}

/**
 * How one {@link SearchQuery} is asked of Qdrant and how its answer is scored.
 *
 * - `hybrid` (dense vector and lexical terms): request 0 is the ranked query — two prefetches
 *   (dense leg and sparse lexical leg, each `legK` deep and each carrying the whole filter) fused
 *   by {@link rrfQuery} — with the summary payload; request 1 is the dense leg alone, ids and cosines only.
 *   A fused hit's raw relevance is its dense cosine: from request 1, or — for a hit that only the
 *   lexical leg found — computed from its stored vector (one follow-up `POST /points`).
 * - `dense`: one nearest query; the raw relevance is the cosine Qdrant returns.
 * - `lexical` (no usable vector): one sparse query; the raw relevance is the weighted set cosine
 *   of query and point terms, from the term ids stored in the payload.
 * - `none` (no leg, or `limit` < 1): no request, no hit.
 *
 * The returned score is `monotoneScores(raw)` along the ranked order (the embedded index's
 * calibration: cosine-like, in 0..1, non-increasing, so sorting by it keeps the fused order);
 * `scoreThreshold` then keeps the leading hits scoring at least the threshold.
 */
export interface SearchPlan {
  /** Mode, see above. */
  mode: 'hybrid' | 'dense' | 'lexical' | 'none';
  /** Requests this query adds to the batch, in order (request 0 is the ranked one). */
  requests: Schemas['QueryRequest'][];
  /** Rows wanted. */
  limit: number;
  /** Unit-length query vector (hybrid and dense modes), for cosines computed here. */
  unitVector: Float32Array | null;
  /** Query term weights (lexical mode). */
  terms: Map<number, number> | null;
  /** Weight of minor terms in the lexical-only score. */
  minorWeight: number;
  /** Whether hits carry their overview. */
  withOverview: boolean;
  /** Minimum calibrated score, or null. */
  threshold: number | null;
}

function unit(v: Float32Array | null): Float32Array | null {
  if (!v) return null;
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (!(n > 0) || !Number.isFinite(n)) return null;
  const inv = 1 / Math.sqrt(n);
  return v.map((x) => x * inv);
}

/** Leg depth for a limit: `max(legMin, limit × legFactor)`. */
export function legDepth(limit: number, tuning: QdrantHybridTuning = DEFAULT_QDRANT_TUNING): number {
  return Math.max(tuning.legMin, limit * tuning.legFactor);
}

/**
 * Plan one search (pure: the request bodies are typed against `@qdrant/js-client-rest`'s
 * OpenAPI schema). Targets are trimmed and blank ones dropped, as in the embedded index.
 * @throws UnsupportedFilterError for a filter Qdrant cannot evaluate
 */
export function planSearch(query: SearchQuery, tuning: QdrantHybridTuning = DEFAULT_QDRANT_TUNING): SearchPlan {
  const limit = Math.floor(query.limit);
  const withOverview = !!query.withOverview;
  const threshold = query.scoreThreshold ?? null;
  const q: SearchQuery = {
    ...query,
    targets: (query.targets ?? []).filter((t) => typeof t === 'string' && t.trim() !== '').map((t) => t.trim()),
  };
  // Building the filter first surfaces an unsupported filter even for a query with no leg.
  const filter = searchFilter(q);
  const unitVector = unit(query.vector);
  const sparse = query.text && query.text.trim() !== '' ? sparseQuery(query.text, tuning.minorWeight) : null;
  const minorWeight = tuning.minorWeight;
  const none: SearchPlan = { mode: 'none', requests: [], limit, unitVector: null, terms: null, minorWeight, withOverview, threshold };
  if (!(limit > 0) || (!unitVector && !sparse)) return none;

  const payload = summarySelector(withOverview);
  const legK = legDepth(limit, tuning);
  const dense = unitVector ? Array.from(unitVector) : null;

  if (dense && sparse) {
    return {
      mode: 'hybrid',
      limit,
      unitVector,
      terms: null,
      minorWeight,
      withOverview,
      threshold,
      requests: [
        {
          prefetch: [
            { query: dense, using: DENSE_VECTOR, filter, limit: legK },
            { query: sparse, using: LEXICAL_VECTOR, filter, limit: legK },
          ],
          query: rrfQuery(tuning),
          limit,
          with_payload: payload,
          with_vector: false,
        },
        { query: dense, using: DENSE_VECTOR, filter, limit: legK, with_payload: false, with_vector: false },
      ],
    };
  }
  if (dense) {
    return {
      mode: 'dense',
      limit,
      unitVector,
      terms: null,
      minorWeight,
      withOverview,
      threshold,
      requests: [{ query: dense, using: DENSE_VECTOR, filter, limit, with_payload: payload, with_vector: false }],
    };
  }
  const include = [...(payload as Schemas['PayloadSelectorInclude']).include, P.lexMain, P.lexMinor];
  return {
    mode: 'lexical',
    limit,
    unitVector: null,
    terms: queryTermWeights(query.text, tuning.minorWeight),
    minorWeight,
    withOverview,
    threshold,
    requests: [{ query: sparse!, using: LEXICAL_VECTOR, filter, limit, with_payload: { include }, with_vector: false }],
  };
}

/** `POST /collections/{name}/points/query/batch` body for a list of plans (one batch for every search). */
export function batchBody(plans: readonly SearchPlan[]): Schemas['QueryRequestBatch'] {
  return { searches: plans.flatMap((p) => p.requests) };
}

/** The slice of a batch answer that belongs to each plan. */
export function splitBatch<T>(plans: readonly SearchPlan[], answers: readonly T[]): T[][] {
  const out: T[][] = [];
  let at = 0;
  for (const p of plans) {
    out.push(answers.slice(at, at + p.requests.length));
    at += p.requests.length;
  }
  if (at !== answers.length) throw new Error(`query batch answered ${answers.length} searches, expected ${at}`);
  return out;
}

type Id = Schemas['ExtendedPointId'];

/** Hits of a hybrid plan whose dense cosine the batch did not return (they need their vector). */
export function missingCosines(plan: SearchPlan, answer: readonly Schemas['QueryResponse'][]): Id[] {
  if (plan.mode !== 'hybrid') return [];
  const known = new Set(answer[1]?.points.map((p) => String(p.id)) ?? []);
  return (answer[0]?.points ?? []).filter((p) => !known.has(String(p.id))).map((p) => p.id);
}

/** `POST /collections/{name}/points` body fetching dense vectors (and nothing else) by id. */
export function vectorsByIdBody(ids: readonly Id[]): Schemas['PointRequest'] {
  return { ids: [...ids], with_payload: false, with_vector: [DENSE_VECTOR] };
}

/** Cosine between a unit query vector and a stored vector (any norm). */
export function cosineTo(unitQuery: Float32Array, stored: ArrayLike<number>): number {
  let dot = 0;
  let n = 0;
  const len = Math.min(unitQuery.length, stored.length);
  for (let i = 0; i < len; i++) {
    dot += unitQuery[i]! * stored[i]!;
    n += stored[i]! * stored[i]!;
  }
  return n > 0 ? dot / Math.sqrt(n) : 0;
}

function numbers(v: unknown): number[] {
  return Array.isArray(v) ? v.filter((x): x is number => typeof x === 'number') : [];
}

/**
 * Turn one plan's answer into hits: ranked order from request 0, raw relevance per the plan's
 * mode, calibrated by `monotoneScores`, thresholded, one hit per URI (a document caught in the
 * middle of its commit can show two versions of a URI for an instant: the better one is kept).
 * @param cosines dense cosines fetched afterwards for hybrid hits missing from request 1, by id
 */
export function hitsOf(plan: SearchPlan, answer: readonly Schemas['QueryResponse'][], cosines: ReadonlyMap<string, number> = new Map()): SearchHit[] {
  if (plan.mode === 'none') return [];
  const ranked = answer[0]?.points ?? [];
  let raw: number[];
  if (plan.mode === 'dense') {
    raw = ranked.map((p) => p.score);
  } else if (plan.mode === 'hybrid') {
    const legCos = new Map((answer[1]?.points ?? []).map((p) => [String(p.id), p.score] as const));
    raw = ranked.map((p) => legCos.get(String(p.id)) ?? cosines.get(String(p.id)) ?? 0);
  } else {
    raw = ranked.map((p) => lexicalCosine(plan.terms!, numbers(p.payload?.[P.lexMain]), numbers(p.payload?.[P.lexMinor]), plan.minorWeight));
  }
  const scores = monotoneScores(raw);
  const out: SearchHit[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < ranked.length && out.length < plan.limit; i++) {
    if (plan.threshold !== null && !(scores[i]! >= plan.threshold)) break;
    const node = toSummary(ranked[i]!.payload as Record<string, unknown> | null | undefined, plan.withOverview);
    if (seen.has(node.uri)) continue;
    seen.add(node.uri);
    out.push({ node, score: scores[i]! });
  }
  return out;
}
