import type { Schemas } from '@qdrant/js-client-rest';
import { hash32, lexicalTerms } from '@ctxmesh/embedder';

/** Weight of a minor (CJK unigram) term relative to a main term, as in the embedded index. @default 0.3 */
export const MINOR_WEIGHT = 0.3;

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
 * Sparse query vector of the lexical leg: each distinct query term once, with its class
 * weight (Qdrant multiplies in the IDF of the collection, like the embedded BM25 leg's IDF).
 * @returns null when the text has no lexical term
 */
export function sparseQuery(text: string, minorWeight = MINOR_WEIGHT): Schemas['SparseVector'] | null {
  const w = queryTermWeights(text, minorWeight);
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
