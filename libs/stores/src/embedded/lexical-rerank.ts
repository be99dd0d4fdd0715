import { lexicalTerms } from '@ctxmesh/embedder';

/**
 * Lowest inverse document frequency a term gets. Robertson's IDF is zero or negative for a
 * term in half the documents or more; such a term carries no evidence, but a tiny positive
 * weight keeps a text made only of common terms from having a zero norm.
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
 * `lexicalTerms` (the same terms the FTS5 index holds): every occurrence of a `main` term
 * (stemmed word, CJK bigram) adds 1, every occurrence of a `minor` term (CJK unigram) adds
 * `minorWeight`, and the total of a `main` term the text capitalises somewhere (a name, title or
 * acronym) is multiplied by `capitalizedWeight`. Raw, not sublinear, term frequency: the texts
 * scored this way are single passages, where a repeated term is a real signal.
 * @param minorWeight weight of one CJK unigram occurrence relative to a main term
 * @param capitalizedWeight multiplier of a capitalised main term; @default 1 (documents); queries pass the tuning's
 * @returns term → weight (> 0); empty for a text without terms
 */
export function termBag(text: string, minorWeight: number, capitalizedWeight = 1): Map<string, number> {
  const { main, minor, capitalized } = lexicalTerms(text);
  const bag = new Map<string, number>();
  for (const t of main) bag.set(t, (bag.get(t) ?? 0) + 1);
  if (capitalizedWeight !== 1) {
    for (const t of capitalized) {
      const w = bag.get(t);
      if (w !== undefined) bag.set(t, w * capitalizedWeight);
    }
  }
  if (minorWeight > 0) for (const t of minor) bag.set(t, (bag.get(t) ?? 0) + minorWeight);
  return bag;
}

/**
 * TF-IDF cosine between one query and many documents (the classic vector-space model): each
 * side is its {@link termBag} with every weight multiplied by the term's IDF, and the score is
 * the cosine of the two vectors, in [0, 1].
 *
 * It complements FTS5's BM25 on the short passages a memory store holds: BM25 normalises a
 * document by its length, term by term and saturating, and ignores how often the query repeats
 * a term; the cosine normalises by the IDF-weighted norm of the whole document (a passage whose
 * rare terms are not in the query is penalised more than one padded with common words) and
 * weighs the terms a long query keeps coming back to. The index uses it to re-order the head of
 * the BM25 list.
 */
export class TfIdfCosine {
  private readonly q = new Map<string, number>();
  private readonly qNorm: number;

  /**
   * @param query the query's {@link termBag}
   * @param idf IDF of a term (called once per distinct term of the query and of each document)
   */
  constructor(
    query: Map<string, number>,
    private readonly idf: (term: string) => number,
  ) {
    let n2 = 0;
    for (const [t, w] of query) {
      const x = w * idf(t);
      this.q.set(t, x);
      n2 += x * x;
    }
    this.qNorm = Math.sqrt(n2);
  }

  /** Cosine of the query with a document's {@link termBag}; 0 when either has no terms. */
  score(doc: Map<string, number>): number {
    if (this.qNorm === 0) return 0;
    let dot = 0;
    let n2 = 0;
    for (const [t, w] of doc) {
      const x = w * this.idf(t);
      n2 += x * x;
      const y = this.q.get(t);
      if (y !== undefined) dot += x * y;
    }
    return n2 > 0 ? dot / (this.qNorm * Math.sqrt(n2)) : 0;
  }
}
