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
 * `lexicalTerms` (the same terms the lexical index holds): a `main` term (stemmed word, CJK bigram)
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
  return bagOfCounts(termCounts({ main, minor }), minorWeight, capitalizedWeight !== 1 ? new Set(capitalized) : null, capitalizedWeight);
}

/** How often each lexical term occurs in a text, by class (see `lexicalTerms`). */
export interface TermCounts {
  /** Stemmed words and CJK bigrams. */
  main: Map<string, number>;
  /** CJK unigrams. */
  minor: Map<string, number>;
}

/** Count the terms of `lexicalTerms`' output. */
export function termCounts(terms: { main: readonly string[]; minor: readonly string[] }): TermCounts {
  const count = (ts: readonly string[]): Map<string, number> => {
    const m = new Map<string, number>();
    for (const t of ts) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  };
  return { main: count(terms.main), minor: count(terms.minor) };
}

/**
 * The {@link termBag} of a text from its {@link TermCounts} (what the index stores per row, so
 * re-ranking a row costs no re-tokenisation).
 * @param caps main terms to multiply by `capitalizedWeight` (null: none)
 */
export function bagOfCounts(counts: TermCounts, minorWeight: number, caps: ReadonlySet<string> | null = null, capitalizedWeight = 1): Map<string, number> {
  const bag = new Map<string, number>();
  for (const [t, n] of counts.main) bag.set(t, (1 + Math.log(n)) * (caps?.has(t) ? capitalizedWeight : 1));
  if (minorWeight > 0) {
    // A one-character CJK run is a main term that may also be another run's unigram: both count.
    for (const [t, n] of counts.minor) bag.set(t, (bag.get(t) ?? 0) + minorWeight * (1 + Math.log(n)));
  }
  return bag;
}

/**
 * {@link TermCounts} as one string: `term count` pairs separated by spaces, the main terms, a
 * tab, the minor terms. Lexical terms never contain whitespace (the tokenizer splits at it).
 */
export function encodeTermCounts(counts: TermCounts): string {
  const part = (m: Map<string, number>): string => {
    const out: string[] = [];
    for (const [t, n] of m) out.push(t, String(n));
    return out.join(' ');
  };
  return `${part(counts.main)}\t${part(counts.minor)}`;
}

/**
 * The {@link TermCounts} of an {@link encodeTermCounts} string.
 * @throws RangeError for a string {@link encodeTermCounts} did not write
 */
export function decodeTermCounts(s: string): TermCounts {
  const tab = s.indexOf('\t');
  if (tab < 0) throw new RangeError('not an encoded term count');
  const part = (p: string): Map<string, number> => {
    const m = new Map<string, number>();
    if (p === '') return m;
    const xs = p.split(' ');
    if (xs.length % 2 !== 0) throw new RangeError('not an encoded term count');
    for (let i = 0; i < xs.length; i += 2) {
      const n = Number(xs[i + 1]);
      if (!(n >= 1) || !Number.isInteger(n)) throw new RangeError('not an encoded term count');
      m.set(xs[i]!, n);
    }
    return m;
  };
  return { main: part(s.slice(0, tab)), minor: part(s.slice(tab + 1)) };
}

/**
 * The {@link termBag} of a row from its {@link encodeTermCounts} string, in one pass (the
 * re-ranking reads one per row it scores): the same as `bagOfCounts` of the decoded counts.
 * @throws RangeError for a string {@link encodeTermCounts} did not write
 */
export function bagOfEncoded(s: string, minorWeight: number): Map<string, number> {
  const tab = s.indexOf('\t');
  if (tab < 0) throw new RangeError('not an encoded term count');
  const bag = new Map<string, number>();
  const add = (part: string, w: number, sum: boolean): void => {
    if (part === '') return;
    const xs = part.split(' ');
    if (xs.length % 2 !== 0) throw new RangeError('not an encoded term count');
    for (let i = 0; i < xs.length; i += 2) {
      const n = Number(xs[i + 1]);
      if (!(n >= 1) || !Number.isInteger(n)) throw new RangeError('not an encoded term count');
      const x = w * (1 + Math.log(n));
      bag.set(xs[i], sum ? (bag.get(xs[i]) ?? 0) + x : x);
    }
  };
  add(s.slice(0, tab), 1, false);
  if (minorWeight > 0) add(s.slice(tab + 1), minorWeight, true);
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
 * It complements the lexical index's BM25 on the short passages a memory store holds: BM25 normalises a
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

  /**
   * Share of the query covered by a document: the IDF-weighted query mass (Σ w², the query
   * vector being unit length) of the query terms the document holds, in [0, 1]. Unlike the
   * cosine it does not penalise a document for also being about other things, so a short
   * question fully answered by a long page covers close to 1.
   */
  coverage(doc: Map<string, number>): number {
    let c = 0;
    for (const [t, y] of this.q) if (doc.has(t)) c += y.w * y.w;
    return Math.min(1, c);
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
