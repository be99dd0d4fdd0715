import { LRUCache } from 'lru-cache';
import { DocTerms } from '../ranking/terms';
import { lexicalSource } from './rows';
import type { Statements } from './statements';
import type { RowMemo } from './sync';

/** Rows whose terms the index keeps in memory for the ranking (least recently used go first). */
const BAG_MEMO_ROWS = 4096;

/**
 * The terms of rows by id ({@link DocTerms}: what the shared ranking reads of a row — BM25 of the
 * lexical candidates, the TF-IDF re-ranking, the coverage floor, the lexical-only score): from a
 * bounded memo (least recently used go first), else the term counts stored at write time
 * (`vi_bags`), else — rows written before that table existed — the row's text, re-tokenised.
 */
export class TermBags implements RowMemo {
  /** Terms of rows by id. */
  private readonly memo = new LRUCache<number, DocTerms>({ max: BAG_MEMO_ROWS });

  /** @param minorWeight weight of CJK unigram terms (the tuning's) */
  constructor(
    private readonly st: Statements,
    private readonly minorWeight: number,
  ) {}

  /** Forget every bag. */
  clear(): void {
    this.memo.clear();
  }

  /** Forget the bags of changed rows (SQLite may hand a deleted row's id to the next insert). */
  forget(ids: readonly number[]): void {
    for (const id of ids) this.memo.delete(id);
  }

  /** The terms of rows by id (rows that no longer exist are missing from the map). */
  get(ids: readonly number[]): Map<number, DocTerms> {
    const out = new Map<number, DocTerms>();
    const fetch: number[] = [];
    for (const id of ids) {
      const bag = this.memo.get(id);
      if (bag) out.set(id, bag);
      else fetch.push(id);
    }
    if (fetch.length > 0) {
      type BagRow = { id: number; terms: string | null; lexical_text: string | null; abstract: string | null; body: string | null; title: string | null };
      for (const r of this.st.bagsByIds.all(JSON.stringify(fetch)) as BagRow[]) {
        let bag: DocTerms | null = null;
        if (r.terms !== null) {
          try {
            bag = DocTerms.decode(r.terms, this.minorWeight);
          } catch {
            bag = null;
          }
        }
        bag ??= DocTerms.ofText(this.sourceOf(r.id, r), this.minorWeight);
        out.set(r.id, bag);
        this.memo.set(r.id, bag);
      }
    }
    return out;
  }

  /** The lexical source of a row: from the text columns of `r` when it has them, else read by id. */
  private sourceOf(id: number, r: { lexical_text: string | null; abstract: string | null; body: string | null; title: string | null }): string {
    let t = r;
    if (t.abstract === null || t.body === null) {
      const row = (this.st.lexTextByIds.all(JSON.stringify([id])) as Array<typeof r>)[0];
      if (!row) return '';
      t = row;
    }
    return lexicalSource({ lexicalText: t.lexical_text ?? '', abstract: t.abstract ?? '', body: t.body ?? '', title: t.title ?? '' });
  }

}
