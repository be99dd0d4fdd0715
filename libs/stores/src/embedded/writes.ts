import { lexicalTerms } from '@ctxmesh/embedder';
import { InvalidRecordError, validateDocumentRecords } from '../ports/errors';
import type { NodeRecord } from '../ports/vector-index';
import type { EmbeddedDb } from './db';
import type { LexicalIndex, LexicalRow } from './lexical-index';
import { canBeMinor, encodeTermCounts, termCounts } from '../ranking/terms';
import { lexicalSource, vecBlob } from './rows';
import { type StoredTermsRow, storedTermCounts } from './schema';
import type { Statements } from './statements';

/**
 * What one write transaction changes in the lexical statistics, applied once at its end: the
 * postings to add and remove (a row added and removed within the transaction is neither) and
 * the per-account document-frequency deltas, so each term is touched once per transaction.
 */
class LexicalChanges {
  readonly add = new Map<number, LexicalRow>();
  readonly remove: LexicalRow[] = [];
  /** account → term → document-frequency delta. */
  readonly df = new Map<string, Map<string, number>>();

  /**
   * Count a row's distinct terms that can be in both classes (terms of one code point, see
   * `canBeMinor`: a term in both counts once) `delta` times. A longer term is only ever a main
   * term, and its either-class frequency is its main one, which the lexical index keeps.
   */
  count(account: string, row: { main: ReadonlyMap<string, number>; minor: ReadonlyMap<string, number> }, delta: 1 | -1): void {
    // Keyed per account, then by the term itself: no key is built per term.
    let df = this.df.get(account);
    if (df === undefined) this.df.set(account, (df = new Map()));
    for (const t of row.main.keys()) if (canBeMinor(t)) df.set(t, (df.get(t) ?? 0) + delta);
    for (const t of row.minor.keys()) if (!row.main.has(t)) df.set(t, (df.get(t) ?? 0) + delta);
  }
}

/**
 * The write side of the embedded vector index: a document's points, vectors, lexical postings
 * and term counts, and its change-log entries, in one transaction, so nothing half-written is
 * ever searchable; and the housekeeping of the change log.
 */
export class IndexWriter {
  /**
   * @param lex the lexical index (its tables live in the same file)
   * @param changeLogKeep change-log rows kept for other readers of the file
   */
  constructor(
    private readonly db: EmbeddedDb,
    private readonly st: Statements,
    private readonly lex: LexicalIndex,
    private readonly dimension: number,
    private readonly changeLogKeep: number,
  ) {}

  private deleteIds(ids: number[], ch: LexicalChanges): void {
    for (const id of ids) {
      const pending = ch.add.get(id);
      if (pending) {
        // Written earlier in this transaction: its postings were never stored.
        ch.add.delete(id);
        ch.count(pending.account, pending, -1);
      } else {
        const src = this.st.rowTerms.get(id) as StoredTermsRow | undefined;
        if (src) {
          const counts = storedTermCounts(src);
          ch.remove.push({ id, account: src.account, ...counts });
          ch.count(src.account, counts, -1);
        }
      }
      this.st.delNode.run(id);
      this.st.delVec.run(BigInt(id));
      this.st.delBag.run(id);
      this.st.logChange.run(id);
    }
  }

  /**
   * Apply a transaction's lexical changes: postings first removed, then added; then the
   * per-account either-class document frequencies of one-code-point terms (`vi_terms`, which
   * the TF-IDF re-ranking reads with the lexical index's main frequencies of longer terms; per
   * account, so one tenant's corpus never changes another's weights); then housekeeping.
   */
  private finish(ch: LexicalChanges): void {
    this.lex.remove(ch.remove);
    this.lex.add([...ch.add.values()]);
    for (const [account, df] of ch.df) {
      for (const [term, delta] of df) {
        if (delta === 0) continue;
        this.st.termAdd.run(account, term, delta);
        if (delta < 0) this.st.termGone.run(account, term);
      }
    }
    this.pruneLog();
  }

  /** Refresh SQLite's planner statistics (cheap; call when an ingest drains). */
  optimize(): void {
    this.db.exec('PRAGMA optimize;');
  }

  private pruneLog(): void {
    const max = (this.st.maxSeq.get() as { s: number }).s;
    const pruned = Number((this.st.prunedThrough.get() as { value: string } | undefined)?.value ?? 0);
    if (max - pruned > 2 * this.changeLogKeep) {
      const upTo = max - this.changeLogKeep;
      this.st.prune.run(upTo);
      this.st.setPruned.run(String(upTo));
    }
  }

  /**
   * Replace the points of document (account, `docUri`) in one transaction, where the account is
   * the records' own, or do nothing when every stored point of that document already carries the
   * `contentHash` of every new record. A record whose URI another document of the same account
   * holds moves to this one; other accounts' points are never touched.
   * @returns true when something changed
   * @throws InvalidRecordError before writing anything when a record does not fit, the records
   *   span several accounts, or `records` is empty
   */
  replaceDocument(docUri: string, records: NodeRecord[]): boolean {
    return this.replaceDocuments([{ docUri, records }])[0]!;
  }

  /**
   * {@link replaceDocument} for several documents in one transaction: every document is
   * validated before anything is written, and either all of them are written or none (a
   * failure rolls the whole batch back). Later documents of the batch see earlier ones.
   * @returns per document, true when something changed
   * @throws InvalidRecordError before writing anything when a document's records do not fit
   */
  replaceDocuments(docs: ReadonlyArray<{ docUri: string; records: NodeRecord[] }>): boolean[] {
    return this.apply(docs.map((d) => ({ kind: 'replace', docUri: d.docUri, records: d.records }))) as boolean[];
  }

  private replaceIn(docUri: string, records: NodeRecord[], account: string, ch: LexicalChanges): boolean {
    const existing = this.st.docRows.all(account, docUri) as Array<{ id: number; content_hash: string }>;
    if (existing.length > 0) {
      const h = records[0]!.contentHash;
      if (records.every((r) => r.contentHash === h) && existing.every((e) => e.content_hash === h)) return false;
    }
    const stale = new Set(existing.map((e) => e.id));
    for (const r of records) {
      const other = this.st.idByUri.get(account, r.uri) as { id: number } | undefined;
      if (other) stale.add(other.id);
    }
    this.deleteIds([...stale], ch);
    for (const r of records) {
      const source = lexicalSource(r);
      // The writer's own count of the same text when it made one (`NodeRecord.lexicalCounts`).
      const counts = r.lexicalCounts !== undefined && source === r.lexicalText ? r.lexicalCounts : termCounts(lexicalTerms(source));
      const info = this.st.insNode.run({
        uri: r.uri,
        docUri: r.docUri,
        parentUri: r.parentUri ?? '',
        contextType: r.contextType,
        category: r.category ?? '',
        level: r.level,
        account: r.account,
        owner: r.owner ?? '',
        peer: r.peer ?? '',
        workspace: r.workspace || 'default',
        subject: r.subject ?? '',
        tags: JSON.stringify((r.tags ?? []).map((t) => t.trim().toLowerCase())),
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        validFrom: r.validFrom ?? null,
        validTo: r.validTo ?? null,
        title: r.title ?? '',
        abstract: r.abstract ?? '',
        overview: r.overview ?? '',
        body: r.body ?? '',
        contentHash: r.contentHash,
        passageIndex: r.passageIndex ?? 0,
        links: JSON.stringify(r.links ?? []),
        lexicalText: r.lexicalText ?? '',
      });
      const id = Number(info.lastInsertRowid);
      this.st.insVec.run(BigInt(id), vecBlob(r.vector));
      this.st.insBag.run(id, r.uri, r.contentHash, encodeTermCounts(counts));
      ch.add.set(id, { id, account, ...counts });
      ch.count(account, counts, 1);
      this.st.logChange.run(id);
    }
    return true;
  }

  /**
   * Delete the points of `account`'s document `uri` (and its point whose URI is `uri`); with
   * `subtree`, also every point of the account whose URI or document URI lies under `uri/`.
   * @returns points removed
   * @throws InvalidRecordError when `account` is empty
   */
  deleteDocument(account: string, uri: string, opts: { subtree?: boolean } = {}): number {
    return this.apply([{ kind: 'delete', account, uri, subtree: !!opts.subtree }])[0] as number;
  }

  /**
   * Writes and deletes in one transaction, in order (a later one sees the earlier ones): every
   * replacement is validated before anything is written, and either all land or none.
   * @returns per operation: a replacement's `changed`, a deletion's points removed
   * @throws InvalidRecordError before writing anything when an operation is invalid
   */
  apply(ops: readonly WriteOp[]): Array<boolean | number> {
    const accounts = ops.map((op) => {
      if (op.kind === 'replace') return validateDocumentRecords(op.docUri, op.records, this.dimension);
      if (!op.account) throw new InvalidRecordError(`deleteDocument(${JSON.stringify(op.uri)}) needs an account`);
      return op.account;
    });
    const tx = this.db.transaction((): Array<boolean | number> => {
      const ch = new LexicalChanges();
      const out = ops.map((op, i) => {
        if (op.kind === 'replace') return this.replaceIn(op.docUri, op.records, accounts[i]!, ch);
        const u = op.uri.length > 'viking://'.length ? op.uri.replace(/\/+$/, '') : op.uri;
        const rows = (op.subtree ? this.st.subtreeIds : this.st.docIds).all({ a: op.account, u }) as Array<{ id: number }>;
        this.deleteIds(rows.map((r) => r.id), ch);
        return rows.length;
      });
      this.finish(ch);
      return out;
    });
    return tx.immediate();
  }
}

/** One operation of a write batch ({@link IndexWriter.apply}). */
export type WriteOp =
  | { kind: 'replace'; docUri: string; records: NodeRecord[] }
  | { kind: 'delete'; account: string; uri: string; subtree: boolean };
