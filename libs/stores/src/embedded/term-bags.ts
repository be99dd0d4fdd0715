import { LRUCache } from 'lru-cache';
import { DocTerms } from '../ranking/terms';
import { lexicalSource } from './rows';
import type { Statements } from './statements';
import type { RowMemo } from './sync';

/**
 * Memory the index's memo of row terms may take, in bytes as estimated by {@link bagBytes}
 * (least recently used go first). A row's stored counts average about a kilobyte of text on a
 * real-shaped tree (passages of long markdown, code), so this holds some 30,000 rows: the hot
 * set of a 10,000-document tree, where counted in rows (4,096) it missed on most searches (a
 * ranked search reads the terms of up to 720 candidates, and a miss costs a SQLite read and a
 * decode).
 */
export const BAG_MEMO_BYTES = 64 * 1024 * 1024;
/** Most rows the memo holds, whatever their size (a bound on its bookkeeping). */
const BAG_MEMO_MAX_ROWS = 200_000;

/** Estimated bytes of a memoised bag of `chars` characters: two bytes a character at most, and the object around it. */
export function bagBytes(chars: number): number {
  return 2 * chars + 160;
}

/**
 * The terms of rows by id ({@link DocTerms}: what the shared ranking reads of a row — BM25 of the
 * lexical candidates, the TF-IDF re-ranking, the coverage floor, the lexical-only score): from a
 * bounded memo (least recently used go first), else the term counts stored at write time
 * (`vi_bags`), else — rows written before that table existed — the row's text, re-tokenised.
 */
export class TermBags implements RowMemo {
  /** Terms of rows by id. */
  private readonly memo = new LRUCache<number, DocTerms>({ max: BAG_MEMO_MAX_ROWS, maxSize: BAG_MEMO_BYTES });

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
        // A bag re-tokenised from its text holds maps: sized by its text, a fair upper figure of their entries.
        let size = r.terms?.length ?? 0;
        if (r.terms !== null) {
          try {
            bag = DocTerms.decode(r.terms, this.minorWeight);
          } catch {
            bag = null;
          }
        }
        if (bag === null) {
          const text = this.sourceOf(r.id, r);
          bag = DocTerms.ofText(text, this.minorWeight);
          size = 4 * text.length;
        }
        out.set(r.id, bag);
        this.memo.set(r.id, bag, { size: bagBytes(size) });
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
