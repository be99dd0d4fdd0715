import type { Schemas } from '@qdrant/js-client-rest';
import type { SearchHit, SearchQuery } from '../ports/vector-index';
import { type CorpusStats, QueryScorer, QueryTerms } from '../ranking/query';
import { type Candidate, type DenseCandidate, type RankedHit, calibrate, documentPool, fuse, legDepth, takeDocuments } from '../ranking/rank';
import { DocTerms } from '../ranking/terms';
import { DEFAULT_TUNING, type HybridTuning } from '../tuning';
import { searchFilter } from './filter';
import { sparseQuery } from './lexical';
import { SUMMARY_KEYS, toSummary } from './payload';
import { DENSE_VECTOR, LEXICAL_VECTOR, P } from './schema';

/**
 * How one {@link SearchQuery} is asked of Qdrant. Qdrant only *generates candidates*; the order,
 * the scores and the threshold are the shared ranking's (`ranking/`), as in the embedded index:
 *
 * - `hybrid` (dense vector and lexical terms): two requests, each `legDepth` deep and carrying
 *   the whole filter — the dense leg (nearest by cosine: ids, cosines, URIs), and the lexical
 *   leg's candidates (a sparse prefetch over the IDF-weighted lexical vectors) re-scored by the
 *   dense query, so each comes with its cosine, its URI and its term counts (`lex_counts`);
 * - `dense`: the dense leg alone;
 * - `lexical` (no usable vector): the lexical leg's candidates alone (URIs and term counts);
 * - `none` (no leg, or `limit` < 1): no request, no hit.
 *
 * The ranking also needs the account's statistics ({@link CorpusStats}, fetched beside the batch
 * by `stats.ts`), then — once the order is known — each hit's summary and term counts, read by
 * id in one `POST /points` for the whole batch ({@link hitsBody}).
 */
export interface SearchPlan {
  /** Mode, see above. */
  mode: 'hybrid' | 'dense' | 'lexical' | 'none';
  /** Requests this query adds to the batch, in order: the dense leg first, when it has one. */
  requests: Schemas['QueryRequest'][];
  /** Rows ranked (for a search counting documents, its pool: `documentPool`). */
  limit: number;
  /** Documents wanted when the search counts documents (`SearchQuery.documents`), else null. */
  documents: number | null;
  /** The account searched (whose statistics the lexical scores need). */
  account: string;
  /** The query's lexical terms (hybrid and lexical modes), else null. */
  terms: QueryTerms | null;
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

/** Payload a dense-leg candidate carries: its URI (the ranking's tie-break and identity). */
const DENSE_PAYLOAD: Schemas['WithPayloadInterface'] = { include: [P.uri] };
/** Payload a lexical-leg candidate carries: its URI and term counts (its BM25 and TF-IDF). */
const LEXICAL_PAYLOAD: Schemas['WithPayloadInterface'] = { include: [P.uri, P.lexCounts] };

/**
 * Plan one search (pure: the request bodies are typed against `@qdrant/js-client-rest`'s
 * OpenAPI schema). Targets are trimmed and blank ones dropped, as in the embedded index.
 * @throws UnsupportedFilterError for a filter Qdrant cannot evaluate
 */
export function planSearch(query: SearchQuery, tuning: HybridTuning = DEFAULT_TUNING): SearchPlan {
  const documents = query.documents ? Math.floor(query.limit) : null;
  const limit = documents !== null ? documentPool(documents) : Math.floor(query.limit);
  const withOverview = !!query.withOverview;
  const threshold = query.scoreThreshold ?? null;
  const account = query.visibility.account;
  const q: SearchQuery = {
    ...query,
    targets: (query.targets ?? []).filter((t) => typeof t === 'string' && t.trim() !== '').map((t) => t.trim()),
  };
  // Building the filter first surfaces an unsupported filter even for a query with no leg.
  const filter = searchFilter(q);
  const unitVector = unit(query.vector);
  const text = query.text && query.text.trim() !== '' ? query.text : '';
  const sparse = text !== '' ? sparseQuery(text, tuning.minorWeight) : null;
  const none: SearchPlan = { mode: 'none', requests: [], limit, documents, account, terms: null, withOverview, threshold };
  if (!(limit > 0) || (!unitVector && !sparse)) return none;
  const terms = sparse ? new QueryTerms(text, tuning) : null;
  const legK = legDepth(limit, tuning);
  const dense = unitVector ? Array.from(unitVector) : null;
  const base = { limit, documents, account, terms, withOverview, threshold };
  const denseLeg: Schemas['QueryRequest'] | null = dense ? { query: dense, using: DENSE_VECTOR, filter, limit: legK, with_payload: DENSE_PAYLOAD, with_vector: false } : null;
  if (dense && sparse) {
    return {
      mode: 'hybrid',
      ...base,
      requests: [
        denseLeg!,
        // The lexical candidates re-scored by the dense query: Qdrant applies the main query to the prefetch's results.
        {
          prefetch: [{ query: sparse, using: LEXICAL_VECTOR, filter, limit: legK }],
          query: dense,
          using: DENSE_VECTOR,
          limit: legK,
          with_payload: LEXICAL_PAYLOAD,
          with_vector: false,
        },
      ],
    };
  }
  if (dense) return { mode: 'dense', ...base, requests: [denseLeg!] };
  return {
    mode: 'lexical',
    ...base,
    requests: [{ query: sparse!, using: LEXICAL_VECTOR, filter, limit: legK, with_payload: LEXICAL_PAYLOAD, with_vector: false }],
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

/** A point's key in the ranking: its id as a string (ids are UUIDs or integers). */
export function keyOf(id: Id): string {
  return String(id);
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/**
 * The term counts stored in a point's payload (`lex_counts`), memoised per point id in `memo`
 * (a point id names one content version); null when missing or unreadable (a point written
 * before the field existed has no terms until it is written again).
 */
export function termsOfPayload(key: string, payload: Record<string, unknown> | null | undefined, minorWeight: number, memo: Map<string, DocTerms | null>): DocTerms | null {
  if (memo.has(key)) return memo.get(key)!;
  const raw = payload?.[P.lexCounts];
  let d: DocTerms | null = null;
  if (typeof raw === 'string') {
    try {
      d = DocTerms.decode(raw, minorWeight);
    } catch {
      d = null;
    }
  }
  memo.set(key, d);
  return d;
}

/** One plan's candidates as the ranking takes them. */
export interface PlanCandidates {
  dense: Array<DenseCandidate<string>>;
  lexical: Array<Candidate<string>>;
  /** Cosine of every candidate (hybrid and dense modes). */
  cosines: Map<string, number>;
  /** Term counts of the lexical candidates. */
  terms: Map<string, DocTerms>;
  /** Point ids by key. */
  ids: Map<string, Id>;
}

/** The candidates of one plan from its slice of the batch answer. */
export function candidatesOf(plan: SearchPlan, answer: readonly Schemas['QueryResponse'][], minorWeight: number, memo: Map<string, DocTerms | null> = new Map()): PlanCandidates {
  const out: PlanCandidates = { dense: [], lexical: [], cosines: new Map(), terms: new Map(), ids: new Map() };
  if (plan.mode === 'none') return out;
  const denseAnswer = plan.mode === 'lexical' ? null : answer[0];
  const lexicalAnswer = plan.mode === 'hybrid' ? answer[1] : plan.mode === 'lexical' ? answer[0] : null;
  for (const p of denseAnswer?.points ?? []) {
    const key = keyOf(p.id);
    out.ids.set(key, p.id);
    out.cosines.set(key, p.score);
    out.dense.push({ key, uri: str(p.payload?.[P.uri]), cosine: p.score });
  }
  for (const p of lexicalAnswer?.points ?? []) {
    const key = keyOf(p.id);
    out.ids.set(key, p.id);
    // Re-scored by the dense query in hybrid mode: the score is the cosine.
    if (plan.mode === 'hybrid') out.cosines.set(key, p.score);
    out.lexical.push({ key, uri: str(p.payload?.[P.uri]) });
    const d = termsOfPayload(key, p.payload, minorWeight, memo);
    if (d) out.terms.set(key, d);
  }
  return out;
}

/** The plan's query weighed against its account's statistics (null without lexical terms). */
export function scorerOf(plan: SearchPlan, stats: CorpusStats | undefined, tuning: HybridTuning): QueryScorer | null {
  return plan.terms && !plan.terms.empty && stats ? new QueryScorer(plan.terms, stats, tuning) : null;
}

/** The order of one plan: the shared ranking's {@link fuse} of its candidates. */
export function fusedOf(plan: SearchPlan, cands: PlanCandidates, scorer: QueryScorer | null, tuning: HybridTuning): Array<Candidate<string>> {
  if (plan.mode === 'none') return [];
  return fuse({ limit: plan.limit, dense: cands.dense, lexical: cands.lexical, scorer, terms: () => cands.terms }, tuning);
}

/**
 * `POST /collections/{name}/points` body reading the ranked hits of a batch by id: their
 * summaries (with the overview when `withOverview`) and term counts, no vectors.
 */
export function hitsBody(ids: readonly Id[], withOverview: boolean): Schemas['PointRequest'] {
  return { ids: [...ids], with_payload: { include: [...SUMMARY_KEYS, ...(withOverview ? [P.overview] : []), P.lexCounts] }, with_vector: false };
}

/**
 * The hits of one plan: its fused order (hits no longer stored are dropped) scored by the
 * shared ranking's {@link calibrate} — the cosines of the candidates, or without a dense leg the
 * lexical set cosine, the coverage floor from the term counts read with the summaries — then
 * thresholded.
 * @param points the payloads read by {@link hitsBody}, by key
 */
export function hitsOf(
  plan: SearchPlan,
  fused: ReadonlyArray<Candidate<string>>,
  cands: PlanCandidates,
  scorer: QueryScorer | null,
  points: ReadonlyMap<string, Record<string, unknown>>,
  tuning: HybridTuning,
  memo: Map<string, DocTerms | null> = new Map(),
): SearchHit[] {
  const present = fused.filter((h) => points.has(h.key));
  const ranked: Array<RankedHit<string>> = calibrate(
    present,
    {
      scorer,
      cosine: plan.mode === 'lexical' ? null : (k) => cands.cosines.get(k) ?? 0,
      terms: (keys) => {
        const out = new Map<string, DocTerms>();
        for (const k of keys) {
          const d = termsOfPayload(k, points.get(k), tuning.minorWeight, memo);
          if (d) out.set(k, d);
        }
        return out;
      },
      threshold: plan.threshold,
    },
    tuning,
  );
  const hits = ranked.map((h) => ({ node: toSummary(points.get(h.key), plan.withOverview), score: h.score, features: h.features }));
  return plan.documents !== null ? takeDocuments(hits, plan.documents, (h) => h.node.docUri || h.node.uri) : hits;
}
