import { lexicalTerms } from '@ctxmesh/embedder';
import type { HybridTuning } from '../tuning';
import { TfIdfScorer, robertsonIdf, termBag } from './lexical-rerank';
import type { LexicalIndex, LexicalQueryTerm, LexicalTopKStats, PreparedLexicalQuery } from './lexical-index';
import { lexicalSource } from './rows';
import type { ScanCache, Shard } from './scan-cache';
import type { Statements } from './statements';
import type { TermBags } from './term-bags';

/** Lexical hits of one (account, text), best first, shared by every search of a batch. */
export interface LexResult {
  /** The query resolved against the account's lexical index (null when no query term is in any row). */
  prepared: PreparedLexicalQuery | null;
  /** The account-wide top-k run the batch's searches share (see `LexicalLeg.topK`), once run. */
  shared?: { k: number; hits: Array<{ id: number; score: number }> };
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

/**
 * The lexical leg of the embedded index: each search's top-k by BM25 from the block-max
 * inverted index ({@link LexicalIndex}), the head re-ordered by TF-IDF relevance, and the
 * lexical-only score.
 */
export class LexicalLeg {
  constructor(
    private readonly st: Statements,
    private readonly index: LexicalIndex,
    private readonly cache: ScanCache,
    private readonly tuning: HybridTuning,
    private readonly bags: TermBags,
  ) {}

  /**
   * Prepare the lexical leg of one (account, text), shared by every search of a batch: the
   * query's terms resolved against the account's block-max index (at most `maxQueryTerms`,
   * the rarest first; terms in more than `maxTermDocFraction` of the rows only cost time and
   * are left out when rarer ones exist), and the TF-IDF scorers of the re-ranking.
   */
  query(text: string, shard: Shard): LexResult {
    const { main, minor, capitalized } = lexicalTerms(text);
    const terms = new Map<string, number>();
    for (const t of main) terms.set(t, 1);
    for (const t of minor) if (!terms.has(t)) terms.set(t, this.tuning.minorWeight);
    const tfidf = new Map<number, number>();
    if (terms.size === 0) return { prepared: null, terms, scorer: null, tfidf, coverer: null };
    const df = new Map<string, number>();
    for (const r of this.st.vocab.all(shard.account, JSON.stringify([...terms.keys()])) as Array<{ term: string; df: number }>) df.set(r.term, r.df);
    const n = Math.max(1, shard.liveCount);
    // Query terms no row holds cannot match; leaving them out keeps the scale of the scores.
    const qBag = termBag(text, this.tuning.minorWeight, this.tuning.capitalizedWeight);
    const coverer = qBag.size > 0 ? new TfIdfScorer(new Map(qBag), (t) => robertsonIdf(df.get(t) ?? 0, n)) : null;
    for (const t of [...qBag.keys()]) if (!((df.get(t) ?? 0) > 0)) qBag.delete(t);
    const scorer = qBag.size > 0 ? new TfIdfScorer(qBag, (t) => robertsonIdf(df.get(t) ?? 0, n)) : null;
    // Rarest first, within the postings budget (the rarest term is always kept): a term's
    // postings are the index's work, so the budget bounds a query's cost whatever the corpus.
    const candidates = [...terms.keys()].filter((t) => (df.get(t) ?? 0) > 0);
    candidates.sort((a, b) => (df.get(a) as number) - (df.get(b) as number));
    const kept: string[] = [];
    let postings = 0;
    for (const t of candidates) {
      const d = df.get(t) as number;
      if (kept.length >= Math.max(1, this.tuning.maxQueryTerms) || (kept.length > 0 && postings + d > this.tuning.maxQueryPostings)) break;
      kept.push(t);
      postings += d;
    }
    // BM25 sums over the query's terms, so a capitalised one counts `capitalizedWeight` times (rounded, as FTS5 phrases did).
    const caps = new Set(capitalized);
    const capRepeat = Math.max(1, Math.round(this.tuning.capitalizedWeight));
    const qTerms: LexicalQueryTerm[] = kept.map((t) => (terms.get(t) === 1 ? { cls: 0, term: t, repeat: caps.has(t) ? capRepeat : 1 } : { cls: 1, term: t, repeat: 1 }));
    const prepared = this.index.prepare(shard.account, qTerms, this.tuning.minorWeight, this.tuning.maxTermDocFraction);
    return { prepared, terms, scorer, tfidf, coverer };
  }

  /**
   * The lexical leg of one search: its best `k` rows by BM25 among those `accept` admits (the
   * search's scope and filters), best first, as slots of `shard`. The searches of a batch with
   * one text share one top-k run over the whole account, `sharedK` deep: a search whose scope
   * holds `k` of those rows takes them (they are its exact top k: every row below scores no
   * more); a narrower one runs its own scoped top-k. Rows written after the scan cache was
   * synced are not in it, and are left out.
   * @param sharedK depth of the shared run (the batch's deepest lexical leg, or more)
   * @param stats counters of the top-k runs (postings touched), when given
   */
  topK(lex: LexResult, shard: Shard, accept: (slot: number) => boolean, k: number, sharedK: number, stats?: LexicalTopKStats): number[] {
    if (!lex.prepared) return [];
    const where = this.cache.where;
    const slotOf = (id: number): number => {
      const w = where.get(id);
      return w !== undefined && w.shard === shard && shard.live[w.slot] === 1 ? w.slot : -1;
    };
    if (!lex.shared || lex.shared.k < sharedK) lex.shared = { k: sharedK, hits: this.index.topK(lex.prepared, Math.max(k, sharedK), null, stats) };
    const out: number[] = [];
    for (const h of lex.shared.hits) {
      const slot = slotOf(h.id);
      if (slot >= 0 && accept(slot)) {
        out.push(slot);
        if (out.length >= k) return out;
      }
    }
    // Fewer hits than asked for: the shared run listed every matching row.
    if (lex.shared.hits.length < lex.shared.k) return out;
    return this.index
      .topK(
        lex.prepared,
        k,
        (id) => {
          const slot = slotOf(id);
          return slot >= 0 && accept(slot);
        },
        stats,
      )
      .map((h) => slotOf(h.id));
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
