import { lexicalTerms } from '@ctxmesh/embedder';
import type { HybridTuning } from '../tuning';
import { TfIdfScorer, robertsonIdf, termBag } from './lexical-rerank';
import { lexicalSource, scopeToken } from './rows';
import type { ScanCache, Shard } from './scan-cache';
import type { Statements } from './statements';
import type { TermBags } from './term-bags';

/** Lexical hits of one (account, text), best first, shared by every search of a batch. */
export interface LexResult {
  /** Live slots of the account's shard, best BM25 first. */
  slots: number[];
  /** Distinct query terms with their BM25 class weight (for the lexical-only score). */
  terms: Map<string, number>;
  /** TF-IDF scorer of the query against the account's rows (null when no query term is in any row). */
  scorer: TfIdfScorer | null;
  /** TF-IDF scores computed so far in this batch, by slot (each re-ordered head adds its missing ones). */
  tfidf: Map<number, number>;
  /** Every query term, unknown ones at the highest IDF: measures how much of the query a row covers. */
  coverer: TfIdfScorer | null;
}

/** Smallest lexical head a search re-orders whatever its limit (when `lexicalRerankDepth` allows it). */
const MIN_RERANK_DEPTH = 10;

/** FTS5 string literal. */
function ftsQuote(term: string): string {
  return '"' + term.replace(/"/g, '""') + '"';
}

/**
 * The lexical leg of the embedded index: candidates by FTS5 BM25 over the rarest query terms,
 * the head re-ordered by TF-IDF relevance, and the lexical-only score.
 */
export class FtsLexicalLeg {
  constructor(
    private readonly st: Statements,
    private readonly cache: ScanCache,
    private readonly tuning: HybridTuning,
    private readonly bags: TermBags,
  ) {}

  /**
   * Lexical leg of one (account, text): every row matching the rarest query terms, by FTS5
   * BM25, best first. The postings budget bounds how many rows that can be, so the searches of
   * a batch filter one shared list instead of each querying FTS5.
   */
  query(text: string, shard: Shard, multiAccount: boolean): LexResult {
    const { main, minor, capitalized } = lexicalTerms(text);
    const terms = new Map<string, number>();
    for (const t of main) terms.set(t, 1);
    for (const t of minor) if (!terms.has(t)) terms.set(t, this.tuning.minorWeight);
    const tfidf = new Map<number, number>();
    if (terms.size === 0) return { slots: [], terms, scorer: null, tfidf, coverer: null };
    const df = new Map<string, number>();
    for (const r of this.st.vocab.all(shard.account, JSON.stringify([...terms.keys()])) as Array<{ term: string; df: number }>) df.set(r.term, r.df);
    const n = Math.max(1, shard.liveCount);
    // Query terms no row holds cannot match; leaving them out keeps the scale of the scores.
    const qBag = termBag(text, this.tuning.minorWeight, this.tuning.capitalizedWeight);
    const coverer = qBag.size > 0 ? new TfIdfScorer(new Map(qBag), (t) => robertsonIdf(df.get(t) ?? 0, n)) : null;
    for (const t of [...qBag.keys()]) if (!((df.get(t) ?? 0) > 0)) qBag.delete(t);
    const scorer = qBag.size > 0 ? new TfIdfScorer(qBag, (t) => robertsonIdf(df.get(t) ?? 0, n)) : null;
    // Rarest first; near-universal terms only cost time, and a postings budget bounds the
    // work on large corpora (the rarest term is always kept).
    let candidates = [...terms.keys()].filter((t) => (df.get(t) ?? 0) > 0);
    const specific = candidates.filter((t) => (df.get(t) as number) <= this.tuning.maxTermDocFraction * n);
    if (specific.length > 0) candidates = specific;
    candidates.sort((a, b) => (df.get(a) as number) - (df.get(b) as number));
    const kept: string[] = [];
    let postings = 0;
    for (const t of candidates) {
      const d = df.get(t) as number;
      if (kept.length >= this.tuning.maxQueryTerms || (kept.length > 0 && postings + d > this.tuning.maxQueryPostings)) break;
      kept.push(t);
      postings += d;
    }
    if (kept.length === 0) return { slots: [], terms, scorer, tfidf, coverer };
    // FTS5 sums the BM25 of every phrase in the query, so a repeated term counts double.
    const caps = new Set(capitalized);
    const capRepeat = Math.max(1, Math.round(this.tuning.capitalizedWeight));
    const mainQ = kept.filter((t) => terms.get(t) === 1).flatMap((t) => Array.from({ length: caps.has(t) ? capRepeat : 1 }, () => ftsQuote(t)));
    const minorQ = kept.filter((t) => terms.get(t) !== 1).map(ftsQuote);
    const parts: string[] = [];
    if (mainQ.length > 0) parts.push(`main : (${mainQ.join(' OR ')})`);
    if (minorQ.length > 0) parts.push(`minor : (${minorQ.join(' OR ')})`);
    let match = `(${parts.join(' OR ')})`;
    // The scope column keeps other tenants' rows out when the file holds several accounts.
    const account = shard.account;
    if (multiAccount) match = `scope : ${ftsQuote(scopeToken(account))} AND ${match}`;
    const slots: number[] = [];
    for (const id of this.st.ftsSearch.all(match) as number[]) {
      const w = this.cache.where.get(id);
      if (w && w.shard === shard) slots.push(w.slot);
    }
    return { slots, terms, scorer, tfidf, coverer };
  }

  /**
   * Re-order the head of a search's BM25 list by TF-IDF relevance ({@link TfIdfScorer}; ties
   * keep the BM25 order); the rest keeps its place. The head is `lexicalRerankDepth` slots, and
   * at most `legFactor × limit` (at least {@link MIN_RERANK_DEPTH}): rows deeper than that in
   * the lexical list seldom reach a small search's results, and each costs its terms. A slot is
   * scored once per batch, and a row's terms come from the bag memo or its stored text.
   */
  rerankHead(lex: LexResult, shard: Shard, list: number[], limit: number): number[] {
    const cap = Math.max(MIN_RERANK_DEPTH, limit * this.tuning.legFactor);
    const depth = Math.min(list.length, Math.floor(this.tuning.lexicalRerankDepth), cap);
    const scorer = lex.scorer;
    if (!scorer || !(depth > 1)) return list;
    const head = list.slice(0, depth);
    const missing = head.filter((s) => !lex.tfidf.has(s));
    if (missing.length > 0) {
      const ids = missing.map((s) => shard.ids[s]);
      const bags = this.bags.get(ids);
      missing.forEach((s, i) => lex.tfidf.set(s, scorer.score(bags.get(ids[i]) ?? new Map())));
    }
    const order = head.map((s, i) => ({ s, i, c: lex.tfidf.get(s) as number }));
    order.sort((a, b) => b.c - a.c || a.i - b.i);
    return [...order.map((o) => o.s), ...list.slice(depth)];
  }

  /** Weighted set cosine between the query's lexical terms and each row's (lexical-only searches). */
  lexicalScores(ids: number[], qTerms: Map<string, number>): number[] {
    if (ids.length === 0) return [];
    const texts = new Map<number, string>();
    for (const r of this.st.lexTextByIds.all(JSON.stringify(ids)) as Array<{ id: number; lexical_text: string; abstract: string; body: string; title: string }>) {
      texts.set(r.id, lexicalSource({ lexicalText: r.lexical_text, abstract: r.abstract, body: r.body, title: r.title }));
    }
    let qn = 0;
    for (const w of qTerms.values()) qn += w * w;
    return ids.map((id) => {
      const { main, minor } = lexicalTerms(texts.get(id) ?? '');
      const d = new Map<string, number>();
      for (const t of main) d.set(t, 1);
      for (const t of minor) if (!d.has(t)) d.set(t, this.tuning.minorWeight);
      let dn = 0;
      let dot = 0;
      for (const [t, w] of d) {
        dn += w * w;
        const qw = qTerms.get(t);
        if (qw !== undefined) dot += qw * w;
      }
      return qn > 0 && dn > 0 ? dot / Math.sqrt(qn * dn) : 0;
    });
  }
}
