import { InvalidRecordError, validateDocumentRecords } from '../ports/errors';
import { type AnnOptions, AnnSet, DEFAULT_ANN_OPTIONS, type DenseAnn } from './ann';
import { type AnnBuilder, threadAnnBuilder } from './ann-build';
import type { FieldSet, IndexStats, NodeContent, NodeRecord, NodeSummary, SearchHit, SearchQuery, VectorIndex, Visibility } from '../ports/vector-index';
import { DEFAULT_TUNING, type HybridTuning } from '../tuning';
import type { EmbeddedDb } from './db';
import { LexicalIndex, type LexicalTopKStats } from './lexical-index';
import { LexicalLeg } from './lexical-leg';
import { DEFAULT_TAIL_MERGE, MergeScheduler, type TailMergeOptions } from './merge-scheduler';
import { IndexReader } from './reads';
import { ScanCache } from './scan-cache';
import { migrateSchema } from './schema';
import { searchBatch } from './search';
import { type Statements, prepareStatements } from './statements';
import { type SyncOptions, syncCache } from './sync';
import { TermBags } from './term-bags';
import { IndexWriter, type WriteOp } from './writes';
import { IndexClosedError } from '../ports/errors';

export { IndexClosedError };

export { IndexSchemaMismatchError } from './schema';

/** Most operations one group commit applies (a longer queue takes several transactions). */
const MAX_GROUP_COMMIT = 256;
export { TopK } from './top-k';

/** Options of {@link EmbeddedVectorIndex}. */
export interface EmbeddedVectorIndexOptions {
  /** Dense dimension; must match an existing index in the file. */
  dimension: number;
  /** Hybrid-search tuning overrides. */
  tuning?: Partial<HybridTuning>;
  /**
   * Change-log rows kept for other readers of the file; a reader that falls further behind
   * reloads its scan cache from the tables. @default 20000
   */
  changeLogKeep?: number;
  /**
   * The dense leg's ANN index (HNSW, `usearch`) for accounts with many rows, saved beside the
   * file; `false` keeps the exact scan for every search. See {@link DenseAnn}. @default DEFAULT_ANN_OPTIONS
   */
  ann?: Partial<AnnOptions> | false;
  /**
   * Where a large ANN build runs (see {@link AnnOptions.offThreadRows}); null builds every index
   * on the search thread, in small steps. @default a worker thread ({@link threadAnnBuilder})
   */
  annBuilder?: AnnBuilder | null;
  /**
   * When the lexical index's tail of pending rows is merged into its blocks (see
   * {@link TailMergeOptions}). @default DEFAULT_TAIL_MERGE
   */
  lexicalTail?: Partial<TailMergeOptions>;
  /**
   * How a full load of the scan cache reads the vectors: `chunks` from the storage of sqlite-vec
   * 0.1 (`readVecChunks`, falling back to the scan where the layout is another), `scan` through
   * the `vec0` table row by row (what another layout gets; for comparison). @default "chunks"
   */
  vectorLoad?: 'chunks' | 'scan';
}

/**
 * Embedded {@link VectorIndex}: one SQLite file, shared with the other embedded adapters.
 *
 * Storage: payloads in `vi_nodes`, dense vectors in a `sqlite-vec` `vec0` table (`vi_vec`),
 * lexical terms — from the shared tokenizer of `@ctxmesh/embedder`: stemmed words, and CJK runs
 * segmented into bigrams (main terms) and unigrams (minor terms) — in a block-max inverted
 * index of the file's own (`vi_lex_*`, see {@link LexicalIndex}: a written row waits in its
 * tail, searchable, until a background merge moves it into the blocks with many others — see
 * {@link TailMergeOptions}), the either-class document frequencies of one-code-point terms
 * per account (`vi_terms`; a longer term's is its main-class one in `vi_lex_terms`), each row's term counts (`vi_bags`, what the ranking reads of a row; a row
 * without them, written before the table existed, is re-tokenised when needed) and a change log
 * (`vi_changes`). A document's writes — or a batch of documents' — are one transaction, so
 * nothing half-written is ever searchable.
 *
 * Tenancy: a point is identified by (account, uri) and a document by (account, docUri) — the
 * account is not part of a URI, and account-wide scopes (`viking://resources/…`,
 * `viking://agent/…`) exist once per account — so every write, delete and read is keyed by the
 * account (the records', the caller's, or the {@link Visibility}'s), and lexical terms are
 * per account. Row ids are unique across the file, which keeps the change log and the scan
 * cache (one shard per account) keyed by id.
 *
 * Search: every filter (tenant visibility, targets, the filter tree, levels, `asOf`) and the
 * dense leg run on an in-memory mirror of the metadata and vectors (the scan cache), one shard
 * per account whose rows are kept physically sorted by URI, so a target is a contiguous slot
 * range. The mirror replays `vi_changes` before each batch, so it sees every committed write of
 * any connection or process; the sync, the postings and the payloads are read in one
 * transaction. The dense leg is an exact cosine over the rows in scope, computed by a
 * WebAssembly SIMD kernel once per distinct query vector per batch — or, for a scope of many
 * rows in a large account, the candidates of an HNSW index re-scored exactly ({@link DenseAnn});
 * the lexical leg is an exact BM25 top-k from the inverted index over the query's selected
 * terms (the rarest within a postings budget), one run per distinct text per batch shared by
 * its searches (a search whose scope is too narrow for it runs its own). Identical searches in
 * a batch are run once.
 *
 * Ranking and score: the legs' candidates go to the shared ranking (`ranking/`, the one the
 * Qdrant adapter calls too) with their features — each candidate's cosine and its term counts
 * (stored at write time in `vi_bags`, a bounded memo of them in memory; a row without them,
 * written before the table existed, is re-tokenised), the account's live rows, summed lengths
 * and document frequencies (`vi_lex_rows`, `vi_lex_terms`, `vi_terms`). It orders the lexical
 * leg by BM25 with its head re-ordered by TF-IDF, fuses the legs by weighted reciprocal-rank
 * fusion, and scores each hit by the shared relevance model (`ranking/relevance.ts`: a
 * calibrated relevance from the hit's cosine, coverage, matched IDF mass and rank, with the
 * noise floor at 0.35); hits come back best score first. Without a query vector the cosine
 * is the weighted set cosine of the query's and the hit's lexical terms. `scoreThreshold`
 * applies to the returned score; hits come back best first.
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly dimension: number;
  private readonly tuning: HybridTuning;
  private readonly cache: ScanCache;
  private closed = false;
  private readonly st: Statements;
  private readonly bags: TermBags;
  /** How a full load reads the vectors (`vectorLoad`). */
  private readonly sync: SyncOptions;
  private readonly writer: IndexWriter;
  private readonly reader: IndexReader;
  private readonly lexical: LexicalLeg;
  private readonly lexIndex: LexicalIndex;
  private readonly merger: MergeScheduler;
  /** Lexical top-k counters since the index was opened (see {@link lexicalStats}). */
  private readonly lexStats: LexicalTopKStats = { blocks: 0, blocksDecoded: 0, postings: 0, postingsScored: 0 };
  private readonly anns: AnnSet | null;
  /** Writes waiting for the next group commit (see {@link enqueue}). */
  private readonly queue: Array<{ ops: WriteOp[]; resolve: (v: Array<boolean | number>) => void; reject: (e: unknown) => void }> = [];
  /** Dense-leg counters since the index was opened (see {@link denseStats}). */
  private readonly annStats = { annSearches: 0, fallbacks: 0 };

  /**
   * @param db an open handle from `openEmbeddedDb` (sqlite-vec loaded); the caller owns it
   * @throws IndexDimensionMismatchError when the file holds an index of another dimension
   * @throws IndexSchemaMismatchError when it holds another, unsupported table layout
   */
  constructor(
    private readonly db: EmbeddedDb,
    opts: EmbeddedVectorIndexOptions,
  ) {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    this.dimension = opts.dimension;
    this.tuning = { ...DEFAULT_TUNING, ...opts.tuning };
    const changeLogKeep = Math.max(1, Math.floor(opts.changeLogKeep ?? 20_000));
    this.sync = { chunks: opts.vectorLoad !== 'scan' };
    migrateSchema(db, this.dimension);
    this.st = prepareStatements(db);
    this.cache = new ScanCache(this.dimension);
    this.bags = new TermBags(this.st, this.tuning.minorWeight);
    this.lexIndex = new LexicalIndex(db);
    this.merger = new MergeScheduler(db, this.lexIndex, { ...DEFAULT_TAIL_MERGE, ...opts.lexicalTail });
    this.writer = new IndexWriter(db, this.st, this.lexIndex, this.dimension, changeLogKeep);
    this.reader = new IndexReader(this.st, this.dimension);
    this.lexical = new LexicalLeg(this.st, this.lexIndex, this.cache, this.tuning);
    const cache = this.cache;
    const st = this.st;
    this.anns =
      opts.ann === false
        ? null
        : new AnnSet(
            this.dimension,
            db.memory ? null : db.name,
            {
              shards: cache.shards,
              where: cache.where,
              lastSeq: () => cache.lastSeq,
              prunedThrough: () => Number((st.prunedThrough.get() as { value: string } | undefined)?.value ?? 0),
              changedSince: (seq) => [...new Set((st.changesSince.all(seq) as Array<{ node_id: number }>).map((c) => c.node_id))],
              vectorOf: (id) => {
                const w = cache.where.get(id);
                return w ? w.shard.vectors.get(w.slot) : null;
              },
            },
            { ...DEFAULT_ANN_OPTIONS, ...opts.ann },
            opts.annBuilder === undefined ? threadAnnBuilder() : opts.annBuilder,
          );
  }

  private assertOpen(): void {
    if (this.closed) throw new IndexClosedError();
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
  async replaceDocument(docUri: string, records: NodeRecord[]): Promise<boolean> {
    this.assertOpen();
    validateDocumentRecords(docUri, records, this.dimension);
    return (await this.enqueue([{ kind: 'replace', docUri, records }]))[0] as boolean;
  }

  /**
   * Delete the points of `account`'s document `uri` (and its point whose URI is `uri`); with
   * `subtree`, also every point of the account whose URI or document URI lies under `uri/`.
   * @returns points removed
   * @throws InvalidRecordError when `account` is empty
   */
  async deleteDocument(account: string, uri: string, opts: { subtree?: boolean } = {}): Promise<number> {
    this.assertOpen();
    if (!account) throw new InvalidRecordError(`deleteDocument(${JSON.stringify(uri)}) needs an account`);
    return (await this.enqueue([{ kind: 'delete', account, uri, subtree: !!opts.subtree }]))[0] as number;
  }

  /**
   * Group commit: the writes and deletes called in one turn of the event loop (the indexer's
   * concurrent applies, a burst of `content/write` calls) are applied in one transaction, in
   * call order, at the next turn — one commit instead of one per document, and each lexical
   * term's blocks touched once. Each call's promise settles after that commit. A batch that
   * fails as a whole (a store error) is retried one operation per transaction, so one bad
   * document fails alone; a {@link replaceDocuments} call is one unit there (all or none).
   */
  private enqueue(ops: WriteOp[]): Promise<Array<boolean | number>> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ops, resolve, reject });
      if (this.queue.length === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    if (this.queue.length > 0 && !this.closed && this.merger.full() && this.merger.stepNow()) {
      // The lexical tail is full: writes wait, one merge step per turn, until it has room.
      setImmediate(() => this.flush());
      return;
    }
    while (this.queue.length > 0) {
      // Whole calls, up to MAX_GROUP_COMMIT operations (a larger call goes alone).
      let n = 0;
      let ops = 0;
      while (n < this.queue.length && (n === 0 || ops + this.queue[n]!.ops.length <= MAX_GROUP_COMMIT)) ops += this.queue[n++]!.ops.length;
      const batch = this.queue.splice(0, n);
      if (this.closed) {
        for (const b of batch) b.reject(new IndexClosedError());
        continue;
      }
      try {
        const out = this.writer.apply(batch.flatMap((b) => b.ops));
        let at = 0;
        for (const b of batch) {
          b.resolve(out.slice(at, at + b.ops.length));
          at += b.ops.length;
        }
      } catch (err) {
        if (batch.length === 1) {
          batch[0]!.reject(err);
          continue;
        }
        for (const b of batch) {
          try {
            b.resolve(this.writer.apply(b.ops));
          } catch (e) {
            b.reject(e);
          }
        }
      }
    }
    if (!this.closed) this.merger.wrote();
  }

  /**
   * {@link replaceDocument} for several documents in one transaction (all or none), so a batch
   * of writes costs one commit and touches each lexical term once; it joins the group commit
   * of its event-loop turn, in call order. Later documents of the batch see earlier ones.
   * @returns per document, true when something changed
   * @throws InvalidRecordError before writing anything when any document's records do not fit
   */
  async replaceDocuments(docs: ReadonlyArray<{ docUri: string; records: NodeRecord[] }>): Promise<boolean[]> {
    this.assertOpen();
    for (const d of docs) validateDocumentRecords(d.docUri, d.records, this.dimension);
    if (docs.length === 0) return [];
    return (await this.enqueue(docs.map((d) => ({ kind: 'replace', docUri: d.docUri, records: d.records })))) as boolean[];
  }

  /**
   * What the lexical top-k runs have touched since the index was opened: blocks and postings of
   * the query terms against those decoded and scored (the cost follows k and the rarest terms,
   * not the matching rows). Not part of the VectorIndex port.
   */
  lexicalStats(): Readonly<LexicalTopKStats> {
    return { ...this.lexStats };
  }

  /**
   * Dense-leg counters since the index was opened: searches answered by the ANN index, and those
   * whose scope its candidates did not fill (scanned exactly). Not part of the VectorIndex port.
   */
  denseStats(): { annSearches: number; fallbacks: number } {
    return { ...this.annStats };
  }

  /** Rows waiting in the lexical index's tail for a merge into its blocks. Not part of the VectorIndex port. */
  lexicalPending(): number {
    this.assertOpen();
    return this.lexIndex.pendingRows();
  }

  /**
   * Rows still to absorb in the background: queued for this adapter's HNSW indexes (`ann`) and
   * waiting in the lexical tail (`lexical`; the file's, whichever adapter merges it). Not part of
   * the VectorIndex port.
   */
  backgroundRows(): { ann: number; lexical: number } {
    this.assertOpen();
    return { ann: this.anns?.pendingRows() ?? 0, lexical: this.lexIndex.pendingRows() };
  }

  /** Terms, blocks and postings of the lexical index (pending rows' too). Not part of the VectorIndex port. */
  lexicalSize(): { terms: number; blocks: number; postings: number } {
    this.assertOpen();
    return this.lexIndex.size();
  }

  /**
   * Load now what the first search would otherwise load itself: the scan cache (every row's
   * filter columns and vectors — about 2 s at 52,000 rows and 19 s at 509,000 on the 2-core
   * machine) and, for accounts large enough to have one, the ANN index (loaded from its file,
   * or queued for its background build). A service calls it once it listens, so that the first
   * question after a start does not pay for the load; a search arriving during it waits for it,
   * as it would have loaded the cache itself. Not part of the VectorIndex port.
   * @returns the rows in the scan cache
   */
  async warm(): Promise<number> {
    this.assertOpen();
    this.db.transaction(() => {
      const synced = syncCache(this.db, this.st, this.cache, this.bags, this.sync);
      this.anns?.synced(synced.reloaded, synced.changed);
      if (this.anns) for (const account of this.cache.shards.keys()) this.anns.of(account);
    })();
    return this.cache.liveRows;
  }

  /**
   * Bring the dense leg's ANN indexes up to date now (load or build them for every account with
   * enough rows) and resolve when they are built, instead of at and after the next searches —
   * after a bulk load, before serving. Not part of the VectorIndex port.
   */
  async prepareDense(): Promise<void> {
    this.assertOpen();
    if (!this.anns) return;
    const synced = this.db.transaction(() => syncCache(this.db, this.st, this.cache, this.bags, this.sync))();
    this.anns.synced(synced.reloaded, synced.changed);
    await this.anns.prepare();
  }

  /**
   * Merge the lexical index's pending rows into its blocks (in steps between other work) and
   * refresh SQLite's planner statistics; call it when an ingest drains. Not part of the
   * VectorIndex port.
   */
  async optimize(): Promise<void> {
    this.assertOpen();
    await this.merger.drain();
    this.writer.optimize();
  }

  /**
   * Run a batch of hybrid searches. Work is shared across the batch: the dense scores of one
   * query vector are computed once per row, and the lexical hits of one text once per account.
   * @returns hits per query, best first, with cosine-like scores (see the class comment)
   * @throws UnsupportedFilterError for a filter the index cannot evaluate
   * @throws InvalidRecordError for a query vector of the wrong dimension
   */
  async search(queries: SearchQuery[]): Promise<SearchHit[][]> {
    this.assertOpen();
    for (const q of queries) {
      if (q.vector && q.vector.length !== this.dimension) throw new InvalidRecordError(`query vector has length ${q.vector.length}, expected ${this.dimension}`);
    }
    // One read transaction: the cache sync, the postings and the payloads are one snapshot, so a
    // write committed meanwhile is either wholly seen or not at all.
    return this.db.transaction(() => {
      const synced = syncCache(this.db, this.st, this.cache, this.bags, this.sync);
      this.anns?.synced(synced.reloaded, synced.changed);
      const ann = this.anns ? (account: string): DenseAnn | null => (this.anns as AnnSet).of(account) : undefined;
      return searchBatch(
        { tuning: this.tuning, cache: this.cache, lexical: this.lexical, bags: this.bags, st: this.st, stats: this.lexStats, ann, annStats: this.annStats },
        queries,
      );
    })();
  }

  /**
   * Points by indexed URI; `summary` omits body, overview, vector and lexical text, `full`
   * returns the whole {@link NodeRecord}. @returns null where missing or invisible
   */
  async get(uris: string[], visibility: Visibility, fields: FieldSet): Promise<Array<NodeRecord | NodeContent | NodeSummary | null>> {
    this.assertOpen();
    return this.reader.get(uris, visibility, fields);
  }

  /** Every visible point of a document in passage order (empty when missing or invisible). */
  async getDocument(docUri: string, visibility: Visibility): Promise<NodeRecord[]> {
    this.assertOpen();
    return this.reader.getDocument(docUri, visibility);
  }

  /** Dense vectors by indexed URI (exact, from `vi_vec`); null where missing or invisible. */
  async vectors(uris: string[], visibility: Visibility): Promise<Array<Float32Array | null>> {
    this.assertOpen();
    return this.reader.vectors(uris, visibility);
  }

  /** True when a visible point has this URI or lives under `uri/`. */
  async exists(uri: string, visibility: Visibility): Promise<boolean> {
    this.assertOpen();
    return this.reader.exists(uri, visibility);
  }

  /** Point and distinct-document counts, for one account or the whole file. */
  async stats(account?: string): Promise<IndexStats> {
    this.assertOpen();
    return this.reader.stats(account);
  }

  /** True while the database answers. */
  async ping(): Promise<boolean> {
    if (this.closed || !this.db.open) return false;
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  /** Drop the in-memory scan cache. The database handle stays open: its owner closes it. */
  async close(): Promise<void> {
    this.closed = true;
    this.merger.close();
    this.anns?.close();
    this.cache.shards.clear();
    this.cache.where.clear();
    this.bags.clear();
  }
}
