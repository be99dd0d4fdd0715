import type { Schemas } from '@qdrant/js-client-rest';
import { hash32, lexicalTerms } from '@ctxmesh/embedder';
import { DEFAULT_TUNING } from '../tuning';

/**
 * Weight of a minor (CJK unigram) term relative to a main term: the embedded index's tuning
 * (its BM25 column weight and its lexical-only score weight), so both adapters weigh alike.
 */
export const MINOR_WEIGHT = DEFAULT_TUNING.minorWeight;

/**
 * Hash seed of minor terms in sparse vectors. Main and minor terms live in separate id spaces,
 * like the embedded index's separate term classes: a query's main term never matches a
 * document's CJK unigram of the same spelling, and the other way round.
 */
export const MINOR_SEED = 0x6d696e6f; // "mino"

/**
 * Distinct term ids of a text by class, as the embedded index weighs them for its lexical-only
 * score: every main term (stemmed word, CJK bigram) weighs 1; a minor term (CJK unigram) that is
 * not also a main term weighs {@link MINOR_WEIGHT}. Ids are `hash32` of the term, ascending.
 */
export function termClasses(text: string): { main: number[]; minor: number[] } {
  const { main, minor } = lexicalTerms(text);
  const mainIds = new Set(main.map((t) => hash32(t)));
  const minorIds = new Set<number>();
  for (const t of minor) {
    const id = hash32(t);
    if (!mainIds.has(id)) minorIds.add(id);
  }
  const asc = (a: number, b: number): number => a - b;
  return { main: [...mainIds].sort(asc), minor: [...minorIds].sort(asc) };
}

/** Weighted term set of a query: id → weight (main 1, minor-only {@link MINOR_WEIGHT}). */
export function queryTermWeights(text: string, minorWeight = MINOR_WEIGHT): Map<number, number> {
  const { main, minor } = termClasses(text);
  const out = new Map<number, number>();
  for (const id of main) out.set(id, 1);
  for (const id of minor) out.set(id, minorWeight);
  return out;
}

/**
 * Sparse vector of a document's lexical text: main terms under `hash32(term)`, minor terms under
 * `hash32(term, MINOR_SEED)`, each weighing `1 + ln tf` (Qdrant multiplies in the IDF at query
 * time; the class weight is applied by the query, as a BM25 column weight would be).
 */
export function documentSparseVector(text: string): Schemas['SparseVector'] {
  const { main, minor } = lexicalTerms(text);
  const tf = new Map<number, number>();
  const add = (terms: string[], seed?: number): void => {
    const counts = new Map<string, number>();
    for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [t, c] of counts) {
      const id = seed === undefined ? hash32(t) : hash32(t, seed);
      // Two terms hashing to one id add up, like the shared tokenizer's own sparse vectors.
      tf.set(id, (tf.get(id) ?? 0) + 1 + Math.log(c));
    }
  };
  add(main);
  add(minor, MINOR_SEED);
  const indices = [...tf.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => tf.get(i)!) };
}

/**
 * Sparse query vector of the lexical leg: each distinct main term once with weight 1, each
 * minor-only term once (in the minor id space) with `minorWeight`.
 * @returns null when the text has no lexical term
 */
export function sparseQuery(text: string, minorWeight = MINOR_WEIGHT): Schemas['SparseVector'] | null {
  const { main, minor } = lexicalTerms(text);
  const mainSet = new Set(main);
  const w = new Map<number, number>();
  for (const t of mainSet) w.set(hash32(t), 1);
  for (const t of new Set(minor)) if (!mainSet.has(t)) w.set(hash32(t, MINOR_SEED), minorWeight);
  if (w.size === 0) return null;
  const indices = [...w.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => w.get(i)!) };
}

/**
 * Weighted set cosine between a query's terms and a point's stored term classes — the
 * embedded index's lexical-only relevance (in 0..1).
 */
export function lexicalCosine(query: Map<number, number>, main: readonly number[], minor: readonly number[], minorWeight = MINOR_WEIGHT): number {
  let qn = 0;
  for (const w of query.values()) qn += w * w;
  const dn = main.length + minor.length * minorWeight * minorWeight;
  if (qn === 0 || dn === 0) return 0;
  let dot = 0;
  for (const id of main) dot += query.get(id) ?? 0;
  for (const id of minor) dot += (query.get(id) ?? 0) * minorWeight;
  return dot / Math.sqrt(qn * dn);
}
