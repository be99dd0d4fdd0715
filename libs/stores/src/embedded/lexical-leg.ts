import { type CorpusStats, type DfKey, QueryScorer, QueryTerms } from '../ranking/query';
import { canBeMinor } from '../ranking/terms';
import type { HybridTuning } from '../tuning';
import type { LexicalIndex, LexicalTermRow, LexicalTopKStats, PreparedLexicalQuery } from './lexical-index';
import type { ScanCache, Shard } from './scan-cache';
import type { Statements } from './statements';

/** The lexical leg of one (account, text), shared by every search of a batch. */
export interface LexResult {
  /** The query's terms. */
  query: QueryTerms;
  /** The query weighed against the account (the shared ranking's scorer; null when the text has no lexical term). */
  scorer: QueryScorer | null;
  /** The scorer's selected terms resolved against the account's block-max index (null when none). */
  prepared: PreparedLexicalQuery | null;
  /** The account-wide top-k run the batch's searches share (see `LexicalLeg.topK`), once run. */
  shared?: { k: number; hits: Array<{ id: number; score: number }> };
}

/**
 * The lexical leg of the embedded index: the account's statistics for the shared ranking
 * ({@link CorpusStats}: `vi_lex_rows`, the per-class document frequencies of `vi_lex_terms`, the
 * either-class ones of one-code-point terms in `vi_terms` — a longer term is only ever a main
 * term), and each search's candidates — its top-k by the ranking's
 * BM25 from the block-max inverted index ({@link LexicalIndex}).
 */
export class LexicalLeg {
  constructor(
    private readonly st: Statements,
    private readonly index: LexicalIndex,
    private readonly cache: ScanCache,
    private readonly tuning: HybridTuning,
  ) {}

  /**
   * Prepare the lexical leg of one (account, text), shared by every search of a batch: the
   * query weighed against the account's statistics ({@link QueryScorer}), and its selected terms
   * resolved against the account's block-max index.
   */
  query(text: string, shard: Shard): LexResult {
    const query = new QueryTerms(text, this.tuning);
    if (query.empty) return { query, scorer: null, prepared: null };
    const account = shard.account;
    const { rows, tokens } = this.index.rowStats(account);
    // Either-class frequencies: of the query's one-code-point terms (the only ones that can be
    // in both classes) from `vi_terms` in one statement, of longer terms their main ones from
    // the lexical index; class ones on demand.
    const any = new Map<string, number>();
    const single = [...query.set.keys()].filter(canBeMinor);
    if (single.length > 0) for (const r of this.st.vocab.all(account, JSON.stringify(single)) as Array<{ term: string; df: number }>) any.set(r.term, r.df);
    const terms = new Map<DfKey, LexicalTermRow | undefined>();
    const termRow = (key: DfKey): LexicalTermRow | undefined => {
      if (!terms.has(key)) terms.set(key, this.index.term(account, key[0] === '0' ? 0 : 1, key.slice(2)));
      return terms.get(key);
    };
    const eitherDf = (term: string): number => (canBeMinor(term) ? (any.get(term) ?? 0) : (termRow(`0:${term}`)?.df ?? 0));
    const stats: CorpusStats = {
      docs: rows,
      tokens,
      df: (key) => (key[0] === '*' ? eitherDf(key.slice(2)) : (termRow(key)?.df ?? 0)),
    };
    const scorer = new QueryScorer(query, stats, this.tuning);
    const weighted = scorer.selected.map((t) => ({ row: termRow(`${t.cls}:${t.term}`) as LexicalTermRow, w: t.w, colWeight: t.colWeight }));
    return { query, scorer, prepared: this.index.resolve(weighted, scorer.avgLen) };
  }

  /**
   * The lexical leg of one search: its best `k` rows by BM25 among those `accept` admits (the
   * search's scope and filters), best first, as slots of `shard` with their BM25 (the shared
   * ranking's: `QueryScorer.bm25`). The searches of a batch with
   * one text share one top-k run over the whole account, `sharedK` deep: a search whose scope
   * holds `k` of those rows takes them (they are its exact top k: every row below scores no
   * more); a narrower one runs its own scoped top-k. Rows written after the scan cache was
   * synced are not in it, and are left out.
   * @param sharedK depth of the shared run (the batch's deepest lexical leg, or more)
   * @param stats counters of the top-k runs (postings touched), when given
   */
  topK(lex: LexResult, shard: Shard, accept: (slot: number) => boolean, k: number, sharedK: number, stats?: LexicalTopKStats): Array<{ slot: number; score: number }> {
    if (!lex.prepared) return [];
    const where = this.cache.where;
    const slotOf = (id: number): number => {
      const w = where.get(id);
      return w !== undefined && w.shard === shard && shard.live[w.slot] === 1 ? w.slot : -1;
    };
    if (!lex.shared || lex.shared.k < sharedK) lex.shared = { k: sharedK, hits: this.index.topK(lex.prepared, Math.max(k, sharedK), null, stats) };
    const out: Array<{ slot: number; score: number }> = [];
    for (const h of lex.shared.hits) {
      const slot = slotOf(h.id);
      if (slot >= 0 && accept(slot)) {
        out.push({ slot, score: h.score });
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
      .map((h) => ({ slot: slotOf(h.id), score: h.score }));
  }
}
