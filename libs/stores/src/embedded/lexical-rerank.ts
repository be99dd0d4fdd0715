import { lexicalTerms } from '@ctxmesh/embedder';

/**
 * Lowest inverse document frequency a term gets. Robertson's IDF is zero or negative for a
 * term in half the documents or more; such a term carries no evidence, but a tiny positive
 * weight keeps a query made only of common terms from having a zero norm.
 */
export const IDF_FLOOR = 0.01;

/**
 * Robertson–Spärck Jones inverse document frequency, the one BM25 uses:
 * `ln((n − df + 0.5) / (df + 0.5))`, floored at {@link IDF_FLOOR}.
 * @param df documents containing the term (≥ 0)
 * @param n documents in the collection (≥ 1)
 */
export function robertsonIdf(df: number, n: number): number {
  const idf = Math.log((n - df + 0.5) / (df + 0.5));
  return Number.isFinite(idf) && idf > IDF_FLOOR ? idf : IDF_FLOOR;
}

/**
 * Weighted term frequencies of a text, over the lexical terms of `@ctxmesh/embedder`'s
 * `lexicalTerms` (the same terms the FTS5 index holds): a `main` term (stemmed word, CJK bigram)
 * seen `n` times weighs `1 + ln n`, times `capitalizedWeight` when the text capitalises it
 * somewhere (a name, title or acronym); a `minor` term (CJK unigram) weighs
 * `minorWeight · (1 + ln n)`. Sublinear, as in the SMART `ltc`/`lnc` weightings (and like
 * BM25's saturation): matching two different query terms should beat repeating one — a title
 * word that a passage repeats in its heading, abstract and body is not three times the evidence.
 * @param minorWeight weight of a CJK unigram relative to a main term
 * @param capitalizedWeight multiplier of a capitalised main term; @default 1 (documents); queries pass the tuning's
 * @returns term → weight (> 0); empty for a text without terms
 */
export function termBag(text: string, minorWeight: number, capitalizedWeight = 1): Map<string, number> {
  const { main, minor, capitalized } = lexicalTerms(text);
  const mainCounts = new Map<string, number>();
  for (const t of main) mainCounts.set(t, (mainCounts.get(t) ?? 0) + 1);
  const caps = capitalizedWeight !== 1 ? new Set(capitalized) : null;
  const bag = new Map<string, number>();
  for (const [t, n] of mainCounts) bag.set(t, (1 + Math.log(n)) * (caps?.has(t) ? capitalizedWeight : 1));
  if (minorWeight > 0) {
    const minorCounts = new Map<string, number>();
    for (const t of minor) minorCounts.set(t, (minorCounts.get(t) ?? 0) + 1);
    // A one-character CJK run is a main term that may also be another run's unigram: both count.
    for (const [t, n] of minorCounts) bag.set(t, (bag.get(t) ?? 0) + minorWeight * (1 + Math.log(n)));
  }
  return bag;
}

/**
 * TF-IDF relevance of documents to one query, in the vector-space model: the query is its
 * {@link termBag} with each weight multiplied by the term's IDF and scaled to unit length; a
 * document's score is `Σ_t q_t · d_t · idf(t)` over the terms both hold, divided by the length
 * of the document's own term-frequency vector (`d_t` is its {@link termBag} weight). So each
 * match counts its IDF twice, as in a TF-IDF cosine, while normalising the document needs no
 * IDF of the document's other terms (a `vi_terms` lookup per term, which is what made the full
 * cosine too slow for every search) — on MADial-Bench the two rank within noise of each other.
 * A document that holds every query term in the query's proportions and nothing else scores
 * its IDF-weighted cosine; the scale is an ordering, not a probability (it can exceed 1).
 *
 * It complements FTS5's BM25 on the short passages a memory store holds: BM25 normalises a
 * document by its length, term by term and saturating, and ignores how often the query repeats
 * a term; this normalises by the whole term vector (a passage that is mostly about other
 * things is penalised more) and weighs the terms a long query keeps coming back to. The index
 * uses it to re-order the head of the BM25 list.
 */
export class TfIdfScorer {
  /** Query term → unit-normalised IDF-weighted weight, and the term's IDF. */
  private readonly q = new Map<string, { w: number; idf: number }>();

  /**
   * @param query the query's {@link termBag}
   * @param idf IDF of a query term (called once per distinct query term)
   */
  constructor(query: Map<string, number>, idf: (term: string) => number) {
    let n2 = 0;
    const raw: Array<[string, number, number]> = [];
    for (const [t, w] of query) {
      const i = idf(t);
      raw.push([t, w * i, i]);
      n2 += w * i * w * i;
    }
    const norm = Math.sqrt(n2);
    if (norm > 0) for (const [t, x, i] of raw) this.q.set(t, { w: x / norm, idf: i });
  }

  /** Relevance of a document given its {@link termBag}; 0 when it shares no term with the query. */
  score(doc: Map<string, number>): number {
    if (this.q.size === 0) return 0;
    let dot = 0;
    let n2 = 0;
    for (const [t, w] of doc) {
      n2 += w * w;
      const y = this.q.get(t);
      if (y !== undefined) dot += y.w * w * y.idf;
    }
    return n2 > 0 ? dot / Math.sqrt(n2) : 0;
  }
}
