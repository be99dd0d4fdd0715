import { lexicalTerms } from '@ctxmesh/embedder';

/**
 * Lexical terms of texts and documents, as the shared ranking reads them: the terms of
 * `@ctxmesh/embedder`'s `lexicalTerms` (stemmed words and CJK bigrams are `main` terms, CJK
 * unigrams `minor` ones), counted per class ({@link TermCounts}, what every engine stores per
 * row at write time), and weighed sublinearly ({@link termBag}).
 */

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
 * Whether a term can be a minor term: minor terms are single characters (CJK unigrams), so a
 * term of two or more code points is only ever a main term — its document frequency in either
 * class is its main one. Engines that count document frequencies per request use it to ask once.
 */
export function canBeMinor(term: string): boolean {
  const first = term.codePointAt(0);
  return first !== undefined && term.length === (first > 0xffff ? 2 : 1);
}

/**
 * Weighted term frequencies of a text: a `main` term seen `n` times weighs `1 + ln n`, times
 * `capitalizedWeight` when the text capitalises it somewhere (a name, title or acronym); a
 * `minor` term weighs `minorWeight · (1 + ln n)`, added to the main weight of the same spelling.
 * Sublinear, as in the SMART `ltc`/`lnc` weightings (and like BM25's saturation): matching two
 * different query terms should beat repeating one — a title word that a passage repeats in its
 * heading, abstract and body is not three times the evidence.
 * @param minorWeight weight of a CJK unigram relative to a main term
 * @param capitalizedWeight multiplier of a capitalised main term; @default 1 (documents); queries pass the tuning's
 * @returns term → weight (> 0); empty for a text without terms
 */
export function termBag(text: string, minorWeight: number, capitalizedWeight = 1): Map<string, number> {
  const { main, minor, capitalized } = lexicalTerms(text);
  return bagOfCounts(termCounts({ main, minor }), minorWeight, capitalizedWeight !== 1 ? new Set(capitalized) : null, capitalizedWeight);
}

/**
 * The {@link termBag} of a text from its {@link TermCounts}.
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
 * One document's terms as the ranking reads them, from its {@link TermCounts}: the counts per
 * class (BM25), the BM25 row length, its {@link termBag} weights and their Euclidean norm
 * (TF-IDF), and its distinct-term set (the lexical-only score). Built once per row and kept by
 * the engines' memos; every score of it costs a lookup per query term, not per document term.
 */
export class DocTerms {
  /**
   * Row length in tokens as BM25 counts it: every term of both classes, plus one (the account
   * token FTS5 indexed with every row, kept so that scores did not move when FTS5 left).
   */
  readonly length: number;
  /** Euclidean norm of the {@link termBag} weights (0 for a document without terms). */
  readonly norm: number;
  /** Squared norm of the distinct-term set: main terms weigh 1, minor-only ones `minorWeight`. */
  readonly setNorm2: number;

  /**
   * @param counts the document's term counts (owned by the instance from now on)
   * @param minorWeight weight of a CJK unigram relative to a main term (the tuning's)
   */
  constructor(
    readonly counts: TermCounts,
    readonly minorWeight: number,
  ) {
    // One pass per class (engines build one per row they rank, often cold): the bag's squared
    // norm is Σ main² + Σ minor² + 2·Σ main·minor over the spellings in both classes.
    let len = 1;
    let n2 = 0;
    for (const n of counts.main.values()) {
      len += n;
      const w = 1 + Math.log(n);
      n2 += w * w;
    }
    let minorOnly = 0;
    for (const [t, n] of counts.minor) {
      len += n;
      const a = counts.main.get(t);
      if (a === undefined) minorOnly++;
      if (minorWeight > 0) {
        const w = minorWeight * (1 + Math.log(n));
        n2 += w * w + (a === undefined ? 0 : 2 * w * (1 + Math.log(a)));
      }
    }
    this.length = len;
    this.norm = Math.sqrt(n2);
    this.setNorm2 = counts.main.size + minorOnly * minorWeight * minorWeight;
  }

  /** The terms of a text (a query's, or a row stored without counts). */
  static ofText(text: string, minorWeight: number): DocTerms {
    return new DocTerms(termCounts(lexicalTerms(text)), minorWeight);
  }

  /**
   * The terms of an {@link encodeTermCounts} string.
   * @throws RangeError for a string {@link encodeTermCounts} did not write
   */
  static decode(s: string, minorWeight: number): DocTerms {
    return new DocTerms(decodeTermCounts(s), minorWeight);
  }

  /** Occurrences of a term in one class (0 when absent). */
  count(cls: 0 | 1, term: string): number {
    return (cls === 0 ? this.counts.main : this.counts.minor).get(term) ?? 0;
  }

  /** The term's {@link termBag} weight (0 when absent). */
  weight(term: string): number {
    const a = this.counts.main.get(term);
    const b = this.minorWeight > 0 ? this.counts.minor.get(term) : undefined;
    return (a === undefined ? 0 : 1 + Math.log(a)) + (b === undefined ? 0 : this.minorWeight * (1 + Math.log(b)));
  }

  /** Whether the term is in the document's {@link termBag}. */
  has(term: string): boolean {
    return this.counts.main.has(term) || (this.minorWeight > 0 && this.counts.minor.has(term));
  }

  /** The term's weight in the distinct-term set: 1 for a main term, `minorWeight` for a minor-only one, else 0. */
  setWeight(term: string): number {
    return this.counts.main.has(term) ? 1 : this.counts.minor.has(term) ? this.minorWeight : 0;
  }
}

/**
 * TF-IDF relevance of documents to one query, in the vector-space model: the query is its
 * {@link termBag} with each weight multiplied by the term's IDF and scaled to unit length; a
 * document's score is `Σ_t q_t · d_t · idf(t)` over the terms both hold, divided by the length
 * of the document's own term-frequency vector (`d_t` is its {@link termBag} weight). So each
 * match counts its IDF twice, as in a TF-IDF cosine, while normalising the document needs no
 * IDF of the document's other terms — on MADial-Bench the two rank within noise of each other.
 * A document that holds every query term in the query's proportions and nothing else scores
 * its IDF-weighted cosine; the scale is an ordering, not a probability (it can exceed 1).
 *
 * It complements BM25 on the short passages a memory store holds: BM25 normalises a document
 * by its length, term by term and saturating, and ignores how often the query repeats a term;
 * this normalises by the whole term vector (a passage that is mostly about other things is
 * penalised more) and weighs the terms a long query keeps coming back to. The ranking uses it
 * to re-order the head of the BM25 list, and its {@link coverage} for the score's floor.
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
  coverage(doc: DocTerms): number {
    let c = 0;
    for (const [t, y] of this.q) if (doc.has(t)) c += y.w * y.w;
    return Math.min(1, c);
  }

  /** Relevance of a document; 0 when it shares no term with the query. */
  score(doc: DocTerms): number {
    if (this.q.size === 0 || !(doc.norm > 0)) return 0;
    let dot = 0;
    for (const [t, y] of this.q) {
      const w = doc.weight(t);
      if (w !== 0) dot += y.w * w * y.idf;
    }
    return dot / doc.norm;
  }
}
