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
  const { main, minor } = partsOf(s);
  const part = (p: Part): Map<string, number> => {
    const m = new Map<string, number>();
    forEachPair(s, p.from, p.to, (a, b, n) => m.set(s.slice(a, b), n));
    return m;
  };
  return { main: part(main), minor: part(minor) };
}

/**
 * The two classes of an {@link encodeTermCounts} string: main terms before its one tab, minor
 * ones after it.
 * @throws RangeError for a string without exactly one tab
 */
function partsOf(s: string): { main: Part; minor: Part } {
  const tab = s.indexOf('\t');
  if (tab < 0 || s.indexOf('\t', tab + 1) >= 0) throw new RangeError('not an encoded term count');
  return { main: { from: 0, to: tab }, minor: { from: tab + 1, to: s.length } };
}

/** Whether `s[from, to)` is one or more ASCII digits. */
function isDigits(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

/** The count written at `s[from, to)`: ASCII digits, ≥ 1. @throws RangeError otherwise */
function countAt(s: string, from: number, to: number): number {
  if (!isDigits(s, from, to)) throw new RangeError('not an encoded term count');
  let n = 0;
  for (let i = from; i < to; i++) n = n * 10 + (s.charCodeAt(i) - 48);
  if (!(n >= 1) || !Number.isSafeInteger(n)) throw new RangeError('not an encoded term count');
  return n;
}

/**
 * One class of an {@link encodeTermCounts} string, `s[from, to)`: its `term count` pairs, each
 * handed to `pair` as the term's bounds and its count, in order.
 * @throws RangeError for a part {@link encodeTermCounts} did not write
 */
function forEachPair(s: string, from: number, to: number, pair: (start: number, end: number, n: number) => void): void {
  if (from === to) return;
  let at = from;
  while (at <= to) {
    const sp = s.indexOf(' ', at);
    if (sp < 0 || sp >= to) throw new RangeError('not an encoded term count');
    let next = s.indexOf(' ', sp + 1);
    if (next < 0 || next > to) next = to;
    pair(at, sp, countAt(s, sp + 1, next));
    at = next + 1;
  }
}

/** Where a class of an encoded string lies: `[from, to)`. */
interface Part {
  from: number;
  to: number;
}

/** What {@link DocTerms.decode} reads of an encoded string (the string, its classes' bounds, the scalars). */
export interface EncodedDocTerms {
  s: string;
  main: Part;
  minor: Part;
  length: number;
  norm: number;
  setNorm2: number;
}

/**
 * The count of `term` in one class of an encoded string (0 when absent), without decoding it:
 * a term is found as a whole space-delimited token followed by its count. A token made of
 * digits only may also be a count, so such a term is looked for pair by pair.
 */
function countIn(s: string, p: Part, term: string): number {
  if (term === '' || p.from === p.to || term.includes(' ') || term.includes('\t')) return 0;
  if (isDigits(term, 0, term.length)) {
    let found = 0;
    forEachPair(s, p.from, p.to, (a, b, n) => {
      if (found === 0 && b - a === term.length && s.startsWith(term, a)) found = n;
    });
    return found;
  }
  const needle = term + ' ';
  for (let at = s.indexOf(needle, p.from); at >= 0 && at + needle.length < p.to; at = s.indexOf(needle, at + 1)) {
    if (at !== p.from && s.charCodeAt(at - 1) !== 32) continue;
    const from = at + needle.length;
    let end = s.indexOf(' ', from);
    if (end < 0 || end > p.to) end = p.to;
    return countAt(s, from, end);
  }
  return 0;
}

/**
 * One document's terms as the ranking reads them, from its {@link TermCounts}: the counts per
 * class (BM25), the BM25 row length, its {@link termBag} weights and their Euclidean norm
 * (TF-IDF), and its distinct-term set (the lexical-only score). Built once per row and kept by
 * the engines' memos; every score of it costs a lookup per query term, not per document term.
 *
 * One built from a stored string ({@link DocTerms.decode}) keeps the string and looks terms up
 * in it: a ranked row of a long page holds hundreds of terms and a query reads a handful, so
 * splitting it into maps cost more than every score of it (a fifth of a context request's
 * search on the `docs` bench profile).
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
  /** The counts as maps: given, or decoded from {@link encoded} when asked for. */
  private maps: TermCounts | null;
  /** The {@link encodeTermCounts} string, when built from one, with its two classes' bounds. */
  private readonly encoded: EncodedDocTerms | null;

  /**
   * @param counts the document's term counts (owned by the instance from now on), or what
   *   {@link DocTerms.decode} read of a string
   * @param minorWeight weight of a CJK unigram relative to a main term (the tuning's)
   */
  constructor(
    counts: TermCounts | EncodedDocTerms,
    readonly minorWeight: number,
  ) {
    if ('s' in counts) {
      this.length = counts.length;
      this.norm = counts.norm;
      this.setNorm2 = counts.setNorm2;
      this.maps = null;
      this.encoded = counts;
      return;
    }
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
    this.maps = counts;
    this.encoded = null;
  }

  /** The counts by class (decoded on first use for an instance built from a string). */
  get counts(): TermCounts {
    this.maps ??= decodeTermCounts((this.encoded as { s: string }).s);
    return this.maps;
  }

  /** The terms of a text (a query's, or a row stored without counts). */
  static ofText(text: string, minorWeight: number): DocTerms {
    return new DocTerms(termCounts(lexicalTerms(text)), minorWeight);
  }

  /**
   * The terms of an {@link encodeTermCounts} string: its length and norms in one pass over the
   * string, its terms looked up in it (see the class comment).
   * @throws RangeError for a string {@link encodeTermCounts} did not write
   */
  static decode(s: string, minorWeight: number): DocTerms {
    const { main, minor } = partsOf(s);
    let len = 1;
    let n2 = 0;
    let mainTerms = 0;
    // Main terms of one code point, the only ones a minor term (a CJK unigram) can share a spelling with.
    const single = new Map<string, number>();
    forEachPair(s, main.from, main.to, (a, b, n) => {
      len += n;
      mainTerms++;
      const w = 1 + Math.log(n);
      n2 += w * w;
      if (b - a <= 2 && canBeMinor(s.slice(a, b))) single.set(s.slice(a, b), n);
    });
    let minorOnly = 0;
    forEachPair(s, minor.from, minor.to, (a, b, n) => {
      len += n;
      const m = single.get(s.slice(a, b));
      if (m === undefined) minorOnly++;
      if (minorWeight > 0) {
        const w = minorWeight * (1 + Math.log(n));
        n2 += w * w + (m === undefined ? 0 : 2 * w * (1 + Math.log(m)));
      }
    });
    return new DocTerms({ s, main, minor, length: len, norm: Math.sqrt(n2), setNorm2: mainTerms + minorOnly * minorWeight * minorWeight }, minorWeight);
  }

  /** Occurrences of a term in one class (0 when absent). */
  count(cls: 0 | 1, term: string): number {
    const e = this.encoded;
    if (e !== null && this.maps === null) return countIn(e.s, cls === 0 ? e.main : e.minor, term);
    return (cls === 0 ? this.counts.main : this.counts.minor).get(term) ?? 0;
  }

  /** The term's {@link termBag} weight (0 when absent). */
  weight(term: string): number {
    const a = this.count(0, term);
    const b = this.minorWeight > 0 ? this.count(1, term) : 0;
    return (a === 0 ? 0 : 1 + Math.log(a)) + (b === 0 ? 0 : this.minorWeight * (1 + Math.log(b)));
  }

  /** Whether the term is in the document's {@link termBag}. */
  has(term: string): boolean {
    return this.count(0, term) > 0 || (this.minorWeight > 0 && this.count(1, term) > 0);
  }

  /** The term's weight in the distinct-term set: 1 for a main term, `minorWeight` for a minor-only one, else 0. */
  setWeight(term: string): number {
    return this.count(0, term) > 0 ? 1 : this.count(1, term) > 0 ? this.minorWeight : 0;
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
