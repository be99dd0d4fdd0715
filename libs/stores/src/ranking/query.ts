import { lexicalTerms } from '@ctxmesh/embedder';
import type { HybridTuning } from '../tuning';
import { MAX_LEN, MAX_TF, bm25Idf, bm25Tf, robertsonIdf } from './bm25';
import { type DocTerms, TfIdfScorer, termBag } from './terms';

/** Term class: 0 for main terms (stemmed words, CJK bigrams), 1 for minor ones (CJK unigrams). */
export type TermClass = 0 | 1;

/**
 * Key of one document frequency the ranking needs: `0:<term>` rows holding the term as a main
 * term, `1:<term>` as a minor term, `*:<term>` in either class.
 */
export type DfKey = string;

/** The {@link DfKey} of a term in a class, or in either (`*`). */
export function dfKey(cls: TermClass | '*', term: string): DfKey {
  return `${cls}:${term}`;
}

/**
 * What an engine tells the ranking about one account (every live row of it, whatever the
 * search's scope): the statistics of the IDF and BM25 weights.
 */
export interface CorpusStats {
  /** Live rows of the account. */
  docs: number;
  /** Sum of the rows' BM25 lengths ({@link DocTerms.length}). */
  tokens: number;
  /** Rows holding a term (see {@link DfKey}); 0 for a term no row holds. */
  df(key: DfKey): number;
}

/** A lexical query term of the BM25 leg. */
export interface QueryTerm {
  cls: TermClass;
  term: string;
  /** How often BM25 counts it (a capitalised term `round(capitalizedWeight)` times). */
  repeat: number;
}

/** A query term the BM25 leg weighs, with its statistics. */
export interface WeightedTerm extends QueryTerm {
  /** Rows holding it in its class. */
  df: number;
  /** `repeat × bm25Idf(df, docs)`. */
  w: number;
  /** Multiplier of its frequency (FTS5's column weight): 1 for main terms, `minorWeight` for minor ones. */
  colWeight: number;
}

/**
 * The lexical side of one query text, independent of any engine or account: its BM25 terms,
 * its {@link termBag} and its distinct-term set. Pure; an engine asks the ranking for
 * {@link lookups}, answers them for an account ({@link CorpusStats}) and weighs the query
 * against them ({@link QueryScorer}).
 */
export class QueryTerms {
  /** BM25 terms: each distinct main term (class 0), then each minor term that is not also a main one (class 1). */
  readonly terms: readonly QueryTerm[];
  /** The query's {@link termBag}, capitalised terms weighed `capitalizedWeight` times. */
  readonly bag: ReadonlyMap<string, number>;
  /** Every distinct term (main ones first), weighed as the lexical-only score's set: main terms 1, minor-only ones `minorWeight`. */
  readonly set: ReadonlyMap<string, number>;

  constructor(
    readonly text: string,
    tuning: Pick<HybridTuning, 'minorWeight' | 'capitalizedWeight'>,
  ) {
    const { main, minor, capitalized } = lexicalTerms(text);
    const set = new Map<string, number>();
    const mains = new Set(main);
    for (const t of main) set.set(t, 1);
    for (const t of minor) if (!set.has(t)) set.set(t, tuning.minorWeight);
    this.set = set;
    const caps = new Set(capitalized);
    // BM25 sums over the query's terms, so a capitalised one counts `capitalizedWeight` times (rounded, as FTS5 phrases did).
    const capRepeat = Math.max(1, Math.round(tuning.capitalizedWeight));
    this.terms = [...set.keys()].map((term): QueryTerm => (mains.has(term) ? { cls: 0, term, repeat: caps.has(term) ? capRepeat : 1 } : { cls: 1, term, repeat: 1 }));
    this.bag = termBag(text, tuning.minorWeight, tuning.capitalizedWeight);
  }

  /** Whether the text has no lexical term (no lexical leg, no lexical score). */
  get empty(): boolean {
    return this.set.size === 0;
  }

  /**
   * Every document frequency a {@link QueryScorer} of this text may read: `*:t` for each
   * distinct term, and the class key of each BM25 term. An engine that fetches statistics
   * ahead of ranking fetches these.
   */
  lookups(): DfKey[] {
    const out: DfKey[] = [];
    for (const t of this.terms) out.push(dfKey('*', t.term), dfKey(t.cls, t.term));
    return out;
  }
}

/**
 * One query text weighed against one account's statistics: the BM25 terms the lexical leg
 * ranks by, and the scorers of the re-ranking, the coverage floor and the lexical-only score.
 * Scores of a {@link DocTerms} are memoised per instance (engines hand out one instance per row
 * and batch), so a row shared by several searches of a batch is scored once.
 */
export class QueryScorer {
  /**
   * The BM25 leg's terms: the rarest first (by document frequency in either class) while
   * fewer than `maxQueryTerms` and their document frequencies sum to at most
   * `maxQueryPostings` (the rarest is always kept) — a term's postings are an index's work, so
   * the budget bounds a query's cost whatever the corpus; then, when some remain, those in at
   * most `maxTermDocFraction` of the rows (the others only cost time). Terms no row holds in
   * their class are left out. Engines generate the leg's candidates from these terms.
   */
  readonly selected: readonly WeightedTerm[];
  /** Mean BM25 row length of the account. */
  readonly avgLen: number;
  /** TF-IDF scorer of the query's terms the account holds (null when it holds none). */
  readonly tfidf: TfIdfScorer | null;
  private readonly setNorm2: number;
  private readonly bm25Memo = new Map<DocTerms, number>();
  private readonly tfidfMemo = new Map<DocTerms, number>();

  constructor(
    readonly query: QueryTerms,
    readonly stats: CorpusStats,
    tuning: Pick<HybridTuning, 'minorWeight' | 'maxQueryTerms' | 'maxQueryPostings' | 'maxTermDocFraction'>,
  ) {
    const n = stats.docs;
    this.avgLen = n > 0 ? stats.tokens / n : 1;
    const any = (t: string): number => stats.df(dfKey('*', t));
    // Selection as the block-max index has always done it: rarest first within the budget.
    const candidates = n > 0 ? query.terms.filter((t) => any(t.term) > 0) : [];
    candidates.sort((a, b) => any(a.term) - any(b.term));
    const kept: QueryTerm[] = [];
    let postings = 0;
    for (const t of candidates) {
      const d = any(t.term);
      if (kept.length >= Math.max(1, tuning.maxQueryTerms) || (kept.length > 0 && postings + d > tuning.maxQueryPostings)) break;
      kept.push(t);
      postings += d;
    }
    const resolved = kept.map((t) => ({ ...t, df: stats.df(dfKey(t.cls, t.term)) })).filter((t) => t.df > 0);
    const specific = resolved.filter((t) => t.df <= tuning.maxTermDocFraction * n);
    const selected: WeightedTerm[] = [];
    for (const t of specific.length > 0 ? specific : resolved) {
      const colWeight = t.cls === 0 ? 1 : tuning.minorWeight;
      if (!(colWeight > 0)) continue;
      selected.push({ ...t, w: t.repeat * bm25Idf(t.df, n), colWeight });
    }
    this.selected = selected;
    // Query terms no row holds cannot match; leaving them out keeps the scale of the scores.
    const held = new Map<string, number>();
    for (const [t, w] of query.bag) if (any(t) > 0) held.set(t, w);
    const docs = Math.max(1, n);
    this.tfidf = held.size > 0 ? new TfIdfScorer(held, (t) => robertsonIdf(any(t), docs)) : null;
    let q2 = 0;
    for (const w of query.set.values()) q2 += w * w;
    this.setNorm2 = q2;
  }

  /** BM25 of a document over the {@link selected} terms (0 when it holds none of them). */
  bm25(doc: DocTerms): number {
    let s = this.bm25Memo.get(doc);
    if (s !== undefined) return s;
    s = 0;
    const len = Math.min(MAX_LEN, doc.length);
    for (const t of this.selected) {
      const tf = doc.count(t.cls, t.term);
      if (tf > 0) s += t.w * bm25Tf(t.colWeight * Math.min(MAX_TF, tf), len, this.avgLen);
    }
    this.bm25Memo.set(doc, s);
    return s;
  }

  /** TF-IDF relevance of a document (see {@link TfIdfScorer}); 0 without a scorer. */
  relevance(doc: DocTerms): number {
    if (!this.tfidf) return 0;
    let s = this.tfidfMemo.get(doc);
    if (s === undefined) {
      s = this.tfidf.score(doc);
      this.tfidfMemo.set(doc, s);
    }
    return s;
  }

  /** Share of the query's IDF-weighted terms (those the account holds) the document holds, in [0, 1]. */
  coverage(doc: DocTerms): number {
    return this.tfidf ? this.tfidf.coverage(doc) : 0;
  }

  /**
   * The lexical-only relevance: the weighted set cosine of the query's and the document's
   * distinct terms (main terms 1, minor-only ones `minorWeight`), in [0, 1].
   */
  setCosine(doc: DocTerms): number {
    if (!(this.setNorm2 > 0) || !(doc.setNorm2 > 0)) return 0;
    let dot = 0;
    for (const [t, w] of this.query.set) {
      const d = doc.setWeight(t);
      if (d !== 0) dot += w * d;
    }
    return dot / Math.sqrt(this.setNorm2 * doc.setNorm2);
  }
}
