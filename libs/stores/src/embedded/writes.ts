import { lexicalTerms } from '@ctxmesh/embedder';
import { InvalidRecordError, validateDocumentRecords } from '../ports/errors';
import type { NodeRecord } from '../ports/vector-index';
import type { EmbeddedDb } from './db';
import { encodeTermCounts, termCounts } from './lexical-rerank';
import { lexicalSource, scopeToken, vecBlob } from './rows';
import type { Statements } from './statements';

/**
 * The write side of the embedded vector index: a document's points, vectors, lexical terms and
 * term counts, and its change-log entries, in one transaction, so nothing half-written is ever
 * searchable; and the housekeeping of the change log and the FTS5 segments.
 */
export class IndexWriter {
  /**
   * @param changeLogKeep change-log rows kept for other readers of the file
   */
  constructor(
    private readonly db: EmbeddedDb,
    private readonly st: Statements,
    private readonly dimension: number,
    private readonly changeLogKeep: number,
  ) {}

  private deleteIds(ids: number[]): void {
    for (const id of ids) {
      const src = this.st.lexSource.get(id) as { account: string; lexical_text: string; abstract: string; body: string; title: string } | undefined;
      if (src) this.countTerms(src.account, lexicalTerms(lexicalSource({ lexicalText: src.lexical_text, abstract: src.abstract, body: src.body, title: src.title })), -1);
      this.st.delNode.run(id);
      this.st.delVec.run(BigInt(id));
      this.st.delFts.run(id);
      this.st.delBag.run(id);
      this.st.logChange.run(id);
    }
  }

  /**
   * Document frequencies of lexical terms per account, kept beside FTS5 (whose fts5vocab lookups
   * cost ~13 µs a term) so a long query can pick its rarest terms cheaply. Per account, so one
   * tenant's corpus never changes which terms another tenant's queries keep. Runs inside the
   * write transaction.
   */
  private countTerms(account: string, terms: { main: string[]; minor: string[] }, delta: 1 | -1): void {
    for (const t of new Set([...terms.main, ...terms.minor])) {
      this.st.termAdd.run(account, t, delta);
      if (delta < 0) this.st.termGone.run(account, t);
    }
  }

  /** Housekeeping at the end of every write transaction. */
  private afterWrite(): void {
    this.pruneLog();
  }

  /**
   * Merge the FTS5 index into one segment (and refresh SQLite's planner statistics). Every
   * write transaction adds an FTS5 segment that automerge only folds in gradually, and each
   * segment costs every query term a b-tree seek: after a bulk ingest, long queries run about
   * 3x faster once optimised. Cost grows with the index (seconds at 100k rows), so call it when
   * an ingest drains, not per write. Not part of the VectorIndex port.
   */
  optimize(): void {
    this.db.exec("INSERT INTO vi_fts(vi_fts) VALUES('optimize'); PRAGMA optimize;");
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
    const account = validateDocumentRecords(docUri, records, this.dimension);
    const tx = this.db.transaction((): boolean => {
      const existing = this.st.docRows.all(account, docUri) as Array<{ id: number; content_hash: string }>;
      if (existing.length > 0) {
        const h = records[0].contentHash;
        if (records.every((r) => r.contentHash === h) && existing.every((e) => e.content_hash === h)) return false;
      }
      const stale = new Set(existing.map((e) => e.id));
      for (const r of records) {
        const other = this.st.idByUri.get(account, r.uri) as { id: number } | undefined;
        if (other) stale.add(other.id);
      }
      this.deleteIds([...stale]);
      for (const r of records) {
        const terms = lexicalTerms(lexicalSource(r));
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
        this.st.insFts.run(id, terms.main.join(' '), terms.minor.join(' '), scopeToken(r.account));
        this.st.insBag.run(id, r.uri, r.contentHash, encodeTermCounts(termCounts(terms)));
        this.countTerms(account, terms, 1);
        this.st.logChange.run(id);
      }
      this.afterWrite();
      return true;
    });
    return tx.immediate();
  }

  /**
   * Delete the points of `account`'s document `uri` (and its point whose URI is `uri`); with
   * `subtree`, also every point of the account whose URI or document URI lies under `uri/`.
   * @returns points removed
   * @throws InvalidRecordError when `account` is empty
   */

  deleteDocument(account: string, uri: string, opts: { subtree?: boolean } = {}): number {
    if (!account) throw new InvalidRecordError(`deleteDocument(${JSON.stringify(uri)}) needs an account`);
    const u = uri.length > 'viking://'.length ? uri.replace(/\/+$/, '') : uri;
    const tx = this.db.transaction((): number => {
      const rows = (opts.subtree ? this.st.subtreeIds : this.st.docIds).all({ a: account, u }) as Array<{ id: number }>;
      this.deleteIds(rows.map((r) => r.id));
      if (rows.length > 0) this.afterWrite();
      return rows.length;
    });
    return tx.immediate();
  }
}
