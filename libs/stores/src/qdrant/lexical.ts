import type { Schemas } from '@qdrant/js-client-rest';
import { hash32, lexicalTerms } from '@ctxmesh/embedder';
import { dfKey } from '../ranking/query';
import { DocTerms, encodeTermCounts, termCounts } from '../ranking/terms';
import { DEFAULT_TUNING } from '../tuning';
import { lengthBits } from './stats';

/**
 * Hash seed of minor terms in sparse vectors. Main and minor terms live in separate id spaces,
 * like the embedded index's separate term classes: a query's main term never matches a
 * document's CJK unigram of the same spelling, and the other way round.
 */
export const MINOR_SEED = 0x6d696e6f; // "mino"

/**
 * Sparse vector of a document's lexical text: main terms under `hash32(term)`, minor terms under
 * `hash32(term, MINOR_SEED)`, each weighing `1 + ln tf` (Qdrant multiplies in the IDF at query
 * time; the class weight is applied by the query, as a BM25 column weight would be). It only
 * finds the lexical leg's candidates: their order is the shared ranking's.
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
export function sparseQuery(text: string, minorWeight = DEFAULT_TUNING.minorWeight): Schemas['SparseVector'] | null {
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
 * The lexical payload of a point, written with it (see `stats.ts`): its term counts for the
 * ranking (`lex_counts`), its distinct terms by class (`lex_terms`, the keys document
 * frequencies count) and the set bits of its BM25 length (`lex_len_bits`).
 */
export function lexicalPayload(text: string): { counts: string; terms: string[]; lengthBits: string[] } {
  const counts = termCounts(lexicalTerms(text));
  const terms = [...[...counts.main.keys()].map((t) => dfKey(0, t)), ...[...counts.minor.keys()].map((t) => dfKey(1, t))];
  // The length does not depend on the minor weight.
  return { counts: encodeTermCounts(counts), terms, lengthBits: lengthBits(new DocTerms(counts, 0).length) };
}
