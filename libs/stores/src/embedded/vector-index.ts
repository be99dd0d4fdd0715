import { lexicalTerms } from '@ctxmesh/embedder';
import { monotoneScores, reciprocalRankFusion } from '../fusion';
import { IndexDimensionMismatchError, InvalidRecordError, validateDocumentRecords } from '../ports/errors';
import type {
  FieldSet,
  IndexStats,
  NodeRecord,
  NodeSummary,
  SearchHit,
  SearchQuery,
  VectorIndex,
  Visibility,
} from '../ports/vector-index';
import { defaultScopeRoots } from '../scope';
import { DEFAULT_TUNING, type HybridTuning } from '../tuning';
import type { EmbeddedDb } from './db';
import { type RowPredicate, compileFilter, compileLevelsAsOf, compileVisibility } from './filter';
import { TfIdfScorer, bagOfEncoded, encodeTermCounts, robertsonIdf, termBag, termCounts } from './lexical-rerank';
import { type CacheRow, ScanCache, Shard, type SlotRange, unit } from './scan-cache';

/** The SQLite file holds a vector index with another table layout (written by another ctxmesh version). */
export class IndexSchemaMismatchError extends Error {
  override readonly name = 'IndexSchemaMismatchError';
  constructor(
    readonly stored: string,
    readonly expected: string,
  ) {
    super(`vector index schema ${stored} is not supported (expected ${expected}); re-index into a new file`);
  }
}

/** A call on an index after {@link EmbeddedVectorIndex.close}. */
export class IndexClosedError extends Error {
  override readonly name = 'IndexClosedError';
  constructor() {
    super('the embedded vector index is closed');
  }
}

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
}

/**
 * Version of the table layout below. Version 2 (URIs unique across accounts, document
 * frequencies shared by every account) is upgraded in place; any other version is refused.
 */
const SCHEMA_VERSION = '3';

/**
 * Columns of `vi_nodes`. A point's identity is (account, uri): account-wide URIs such as
 * `viking://resources/…` repeat in every account (the account is not part of a URI).
 */
const NODE_COLUMNS = `
  id INTEGER PRIMARY KEY,
  uri TEXT NOT NULL,
  doc_uri TEXT NOT NULL,
  parent_uri TEXT NOT NULL,
  context_type TEXT NOT NULL,
  category TEXT NOT NULL,
  level INTEGER NOT NULL,
  account TEXT NOT NULL,
  owner TEXT NOT NULL,
  peer TEXT NOT NULL,
  workspace TEXT NOT NULL,
  subject TEXT NOT NULL,
  tags TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  valid_from INTEGER,
  valid_to INTEGER,
  title TEXT NOT NULL,
  abstract TEXT NOT NULL,
  overview TEXT NOT NULL,
  body TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  passage_index INTEGER NOT NULL,
  links TEXT NOT NULL,
  lexical_text TEXT NOT NULL`;

/** Column names of `vi_nodes`, in declaration order (for the schema-2 upgrade copy). */
const NODE_COLUMN_NAMES = NODE_COLUMNS.split(',').map((c) => c.trim().split(/\s+/)[0]).join(', ');

const SUMMARY_COLS =
  'id, uri, doc_uri, parent_uri, context_type, category, level, account, owner, peer, workspace, subject, tags, created_at, updated_at, valid_from, valid_to, title, abstract, content_hash, passage_index, links';
const FULL_COLS = SUMMARY_COLS + ', overview, body, lexical_text';

interface NodeRow {
  id: number;
  uri: string;
  doc_uri: string;
  parent_uri: string;
  context_type: string;
  category: string;
  level: number;
  account: string;
  owner: string;
  peer: string;
  workspace: string;
  subject: string;
  tags: string;
  created_at: number;
  updated_at: number;
  valid_from: number | null;
  valid_to: number | null;
  title: string;
  abstract: string;
  content_hash: string;
  passage_index: number;
  links: string;
  overview?: string;
  body?: string;
  lexical_text?: string;
}

function toSummary(r: NodeRow, withOverview: boolean): NodeSummary {
  const s: NodeSummary = {
    uri: r.uri,
    docUri: r.doc_uri,
    parentUri: r.parent_uri,
    contextType: r.context_type as NodeSummary['contextType'],
    category: r.category,
    level: r.level,
    account: r.account,
    owner: r.owner,
    peer: r.peer,
    workspace: r.workspace,
    subject: r.subject,
    tags: JSON.parse(r.tags) as string[],
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    validFrom: r.valid_from,
    validTo: r.valid_to,
    title: r.title,
    abstract: r.abstract,
    contentHash: r.content_hash,
    passageIndex: r.passage_index,
    links: JSON.parse(r.links) as string[],
  };
  if (withOverview && r.overview !== undefined) s.overview = r.overview;
  return s;
}

function vecBlob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function blobVec(b: Buffer): Float32Array {
  // Copy: the buffer belongs to better-sqlite3 and may not be 4-byte aligned.
  const out = new Float32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** The text indexed lexically for a record. */
function lexicalSource(r: Pick<NodeRecord, 'lexicalText' | 'abstract' | 'body' | 'title'>): string {
  if (r.lexicalText && r.lexicalText.trim() !== '') return r.lexicalText;
  return r.abstract === r.body ? r.body : `${r.abstract}\n${r.body}`;
}

let empty: Shard | undefined;
/** Columns of no rows, to validate a filter for an account that has none. */
function emptyColumns(): Shard {
  empty ??= new Shard('', 4, false);
  return empty;
}

/** Merge half-open ranges into ascending, disjoint ones. */
function mergeRanges(ranges: SlotRange[]): SlotRange[] {
  const sorted = ranges.filter(([lo, hi]) => hi > lo).sort((a, b) => a[0] - b[0]);
  const out: SlotRange[] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1]) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** FTS5 string literal. */
function ftsQuote(term: string): string {
  return '"' + term.replace(/"/g, '""') + '"';
}

/** Bounded top-k by score (a min-heap on typed arrays), for scanning many rows cheaply. Exported for tests. */
export class TopK {
  private readonly slots: Int32Array;
  private readonly scores: Float64Array;
  private n = 0;
  /** Lowest score kept once full (-Infinity before): a row must beat it to enter. */
  floor = -Infinity;

  constructor(private readonly k: number) {
    this.slots = new Int32Array(k);
    this.scores = new Float64Array(k);
  }

  push(slot: number, score: number): void {
    const { slots, scores, k } = this;
    if (this.n < k) {
      let i = this.n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (scores[p] <= score) break;
        scores[i] = scores[p];
        slots[i] = slots[p];
        i = p;
      }
      scores[i] = score;
      slots[i] = slot;
      if (this.n === k) this.floor = scores[0];
      return;
    }
    if (score <= scores[0]) return;
    // Sift the new entry down from the root.
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= k) break;
      const r = l + 1;
      const m = r < k && scores[r] < scores[l] ? r : l;
      if (scores[m] >= score) break;
      scores[i] = scores[m];
      slots[i] = slots[m];
      i = m;
    }
    scores[i] = score;
    slots[i] = slot;
    this.floor = scores[0];
  }

  /** Slots best first. */
  sorted(): number[] {
    const idx = Array.from({ length: this.n }, (_, i) => i);
    idx.sort((a, b) => this.scores[b] - this.scores[a]);
    return idx.map((i) => this.slots[i]);
  }
}

/** One query's compiled scope. */
interface Plan {
  shard: Shard | undefined;
  roots: string[];
  pred: RowPredicate;
  /** Sorted-part slot ranges under `roots`. */
  ranges: SlotRange[];
  /** Tail slots under `roots`. */
  tail: number[];
}

/** Lexical hits of one (account, text), best first, shared by every search of a batch. */
interface LexResult {
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

/** Rows whose term bags the index keeps in memory for the lexical re-ranking (least recently used go first). */
const BAG_MEMO_ROWS = 4096;

/** Smallest lexical head a search re-orders whatever its limit (when `lexicalRerankDepth` allows it). */
const MIN_RERANK_DEPTH = 10;

/**
 * Embedded {@link VectorIndex}: one SQLite file, shared with the other embedded adapters.
 *
 * Storage: payloads in `vi_nodes`, dense vectors in a `sqlite-vec` `vec0` table (`vi_vec`),
 * lexical terms in a contentless FTS5 table (`vi_fts`) fed by the shared tokenizer of
 * `@ctxmesh/embedder` — words are stemmed; CJK runs are pre-segmented into bigrams (`main`
 * column) and unigrams (`minor`), since FTS5's unicode61 tokenizer does not split CJK — their
 * per-account document frequencies (`vi_terms`), each row's term counts (`vi_bags`, for the
 * lexical re-ranking; a row without them, written before the table existed, is re-tokenised
 * when needed) and a change log (`vi_changes`). A document's writes are one transaction, so
 * nothing half-written is ever searchable.
 *
 * Tenancy: a point is identified by (account, uri) and a document by (account, docUri) — the
 * account is not part of a URI, and account-wide scopes (`viking://resources/…`,
 * `viking://agent/…`) exist once per account — so every write, delete and read is keyed by the
 * account (the records', the caller's, or the {@link Visibility}'s), and FTS rows carry an
 * account token. Row ids are unique across the file, which keeps the change log and the scan
 * cache (one shard per account) keyed by id.
 *
 * Search: every filter (tenant visibility, targets, the filter tree, levels, `asOf`) and the
 * dense leg run on an in-memory mirror of the metadata and vectors (the scan cache), one shard
 * per account whose rows are kept physically sorted by URI, so a target is a contiguous slot
 * range. The mirror replays `vi_changes` before each batch, so it sees every committed write of
 * any connection or process. The dense leg is an exact cosine over the rows in scope, computed
 * by a WebAssembly SIMD kernel once per distinct query vector per batch; the lexical leg is one
 * FTS5 BM25 query per distinct text per batch over its rarest terms (a postings budget bounds
 * its cost), filtered per search, whose head (`lexicalRerankDepth` rows) is then re-ordered by
 * TF-IDF relevance ({@link TfIdfScorer}; per-account document frequencies, each row's term
 * counts stored at write time in `vi_bags`, a bounded memo of them in memory). The legs are fused by
 * weighted reciprocal-rank fusion, which decides the order. Identical searches in a batch are
 * run once.
 *
 * Score: the returned `score` is the hit's dense cosine — raised to the coverage floor
 * (`coverageWeight × coverage^coveragePower`, the share of the query's IDF-weighted terms the
 * hit holds) — clamped to [0, 1] and smoothed into a non-increasing sequence along the fused
 * order (pool-adjacent-violators; see {@link monotoneScores}), so it is cosine-like, can be
 * thresholded, and sorting by it reproduces the fused order. Without a query vector the cosine
 * is the weighted set cosine of the query's and the hit's lexical terms. `scoreThreshold` applies to the returned score; hits
 * come back best first.
 */
export class EmbeddedVectorIndex implements VectorIndex {
  readonly dimension: number;
  private readonly tuning: HybridTuning;
  private readonly changeLogKeep: number;
  private readonly cache: ScanCache;
  private closed = false;
  private readonly st: ReturnType<EmbeddedVectorIndex['prepare']>;
  /** Term bags of rows by id, for the lexical re-ranking (insertion order = recency). */
  private readonly bagMemo = new Map<number, Map<string, number>>();

  /**
   * @param db an open handle from `openEmbeddedDb` (sqlite-vec loaded); the caller owns it
   * @throws IndexDimensionMismatchError when the file holds an index of another dimension
   */
  constructor(
    private readonly db: EmbeddedDb,
    opts: EmbeddedVectorIndexOptions,
  ) {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    this.dimension = opts.dimension;
    this.tuning = { ...DEFAULT_TUNING, ...opts.tuning };
    this.changeLogKeep = Math.max(1, Math.floor(opts.changeLogKeep ?? 20_000));
    this.migrate();
    this.st = this.prepare();
    this.cache = new ScanCache(this.dimension);
  }

  private migrate(): void {
    const d = this.dimension;
    this.db.exec('CREATE TABLE IF NOT EXISTS vi_meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;');
    const meta = (key: string) => (this.db.prepare('SELECT value FROM vi_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
    const dim = meta('dimension');
    if (dim !== undefined && Number(dim) !== d) throw new IndexDimensionMismatchError(Number(dim), d);
    const schema = meta('schema');
    if (schema === '2') {
      // Re-read inside the write lock: another connection may have upgraded the file meanwhile.
      this.db.transaction(() => {
        if (meta('schema') === '2') this.upgradeFrom2();
      }).immediate();
    } else if (schema !== undefined && schema !== SCHEMA_VERSION) {
      throw new IndexSchemaMismatchError(schema, SCHEMA_VERSION);
    }
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS vi_nodes(${NODE_COLUMNS});
      CREATE UNIQUE INDEX IF NOT EXISTS vi_nodes_key ON vi_nodes(account, uri);
      CREATE INDEX IF NOT EXISTS vi_nodes_doc ON vi_nodes(account, doc_uri, passage_index);
      CREATE TABLE IF NOT EXISTS vi_changes(seq INTEGER PRIMARY KEY AUTOINCREMENT, node_id INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS vi_terms(account TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY(account, term)) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS vi_bags(id INTEGER PRIMARY KEY, uri TEXT NOT NULL, content_hash TEXT NOT NULL, terms TEXT NOT NULL);
      CREATE VIRTUAL TABLE IF NOT EXISTS vi_vec USING vec0(embedding float[${d}] distance_metric=cosine);
      CREATE VIRTUAL TABLE IF NOT EXISTS vi_fts USING fts5(
        main, minor, scope, content='', contentless_delete=1,
        tokenize="unicode61 remove_diacritics 0 categories 'L* N* M* Co'");
    `);
    this.db.prepare("INSERT OR IGNORE INTO vi_meta(key, value) VALUES ('dimension', ?), ('schema', ?)").run(String(d), SCHEMA_VERSION);
  }

  /**
   * Schema 2 → 3, inside the caller's write transaction: rebuild `vi_nodes` without the
   * file-wide `UNIQUE(uri)` (row ids are kept, so `vi_vec`, `vi_fts` and the change log stay
   * valid), and recount the lexical document frequencies per account. Costs one pass over the
   * rows (seconds at 100k points), once.
   */
  private upgradeFrom2(): void {
    this.db.exec(`
      CREATE TABLE vi_nodes_v3(${NODE_COLUMNS});
      INSERT INTO vi_nodes_v3(${NODE_COLUMN_NAMES}) SELECT ${NODE_COLUMN_NAMES} FROM vi_nodes;
      DROP TABLE vi_nodes;
      ALTER TABLE vi_nodes_v3 RENAME TO vi_nodes;
      DROP TABLE IF EXISTS vi_terms;
      CREATE TABLE vi_terms(account TEXT NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, PRIMARY KEY(account, term)) WITHOUT ROWID;
    `);
    const df = new Map<string, Map<string, number>>();
    const rows = this.db.prepare('SELECT account, lexical_text, abstract, body, title FROM vi_nodes').iterate() as Iterable<{
      account: string;
      lexical_text: string;
      abstract: string;
      body: string;
      title: string;
    }>;
    for (const r of rows) {
      const { main, minor } = lexicalTerms(lexicalSource({ lexicalText: r.lexical_text, abstract: r.abstract, body: r.body, title: r.title }));
      let counts = df.get(r.account);
      if (!counts) df.set(r.account, (counts = new Map()));
      for (const t of new Set([...main, ...minor])) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    const ins = this.db.prepare('INSERT INTO vi_terms(account, term, df) VALUES (?, ?, ?)');
    for (const [account, counts] of df) for (const [term, n] of counts) ins.run(account, term, n);
    this.db.prepare("UPDATE vi_meta SET value = ? WHERE key = 'schema'").run(SCHEMA_VERSION);
  }

  private prepare() {
    const db = this.db;
    return {
      docRows: db.prepare('SELECT id, content_hash FROM vi_nodes WHERE account = ? AND doc_uri = ?'),
      idByUri: db.prepare('SELECT id FROM vi_nodes WHERE account = ? AND uri = ?'),
      insNode: db.prepare(`INSERT INTO vi_nodes(uri, doc_uri, parent_uri, context_type, category, level, account, owner, peer, workspace, subject, tags,
        created_at, updated_at, valid_from, valid_to, title, abstract, overview, body, content_hash, passage_index, links, lexical_text)
        VALUES (@uri, @docUri, @parentUri, @contextType, @category, @level, @account, @owner, @peer, @workspace, @subject, @tags,
        @createdAt, @updatedAt, @validFrom, @validTo, @title, @abstract, @overview, @body, @contentHash, @passageIndex, @links, @lexicalText)`),
      insVec: db.prepare('INSERT INTO vi_vec(rowid, embedding) VALUES (?, ?)'),
      insFts: db.prepare('INSERT INTO vi_fts(rowid, main, minor, scope) VALUES (?, ?, ?, ?)'),
      delNode: db.prepare('DELETE FROM vi_nodes WHERE id = ?'),
      delVec: db.prepare('DELETE FROM vi_vec WHERE rowid = ?'),
      delFts: db.prepare('DELETE FROM vi_fts WHERE rowid = ?'),
      logChange: db.prepare('INSERT INTO vi_changes(node_id) VALUES (?)'),
      subtreeIds: db.prepare(
        "SELECT id FROM vi_nodes WHERE account = @a AND (uri = @u OR doc_uri = @u OR (uri >= @u || '/' AND uri < @u || '0') OR (doc_uri >= @u || '/' AND doc_uri < @u || '0'))",
      ),
      docIds: db.prepare('SELECT id FROM vi_nodes WHERE account = @a AND (uri = @u OR doc_uri = @u)'),
      changesSince: db.prepare('SELECT seq, node_id FROM vi_changes WHERE seq > ? ORDER BY seq'),
      maxSeq: db.prepare("SELECT COALESCE(MAX(seq), 0) AS s FROM vi_changes"),
      prunedThrough: db.prepare("SELECT value FROM vi_meta WHERE key = 'pruned_through'"),
      setPruned: db.prepare("INSERT INTO vi_meta(key, value) VALUES ('pruned_through', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
      prune: db.prepare('DELETE FROM vi_changes WHERE seq <= ?'),
      cacheRowsByIds: db.prepare(`SELECT n.id, n.uri, n.doc_uri, n.context_type, n.category, n.level, n.account, n.owner, n.peer, n.workspace, n.subject,
        n.tags, n.created_at, n.updated_at, n.valid_from, n.valid_to, v.embedding
        FROM vi_nodes n JOIN vi_vec v ON v.rowid = n.id WHERE n.id IN (SELECT value FROM json_each(?))`),
      allVectors: db.prepare('SELECT rowid, embedding FROM vi_vec').raw(),
      allNodesSorted: db.prepare(`SELECT id, uri, doc_uri, context_type, category, level, account, owner, peer, workspace, subject,
        tags, created_at, updated_at, valid_from, valid_to FROM vi_nodes ORDER BY account, uri`),
      summariesByIds: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))`),
      summariesOvByIds: db.prepare(`SELECT ${SUMMARY_COLS}, overview FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))`),
      lexTextByIds: db.prepare('SELECT id, lexical_text, abstract, body, title FROM vi_nodes WHERE id IN (SELECT value FROM json_each(?))'),
      // A row's stored term counts, or its text where it has none that match it (written before
      // the table existed, or by a writer that does not keep it and reused the id).
      bagsByIds: db.prepare(`SELECT n.id, b.terms,
        CASE WHEN b.terms IS NULL THEN n.lexical_text END AS lexical_text, CASE WHEN b.terms IS NULL THEN n.abstract END AS abstract,
        CASE WHEN b.terms IS NULL THEN n.body END AS body, CASE WHEN b.terms IS NULL THEN n.title END AS title
        FROM vi_nodes n LEFT JOIN vi_bags b ON b.id = n.id AND b.uri = n.uri AND b.content_hash = n.content_hash
        WHERE n.id IN (SELECT value FROM json_each(?))`),
      insBag: db.prepare('INSERT OR REPLACE INTO vi_bags(id, uri, content_hash, terms) VALUES (?, ?, ?, ?)'),
      delBag: db.prepare('DELETE FROM vi_bags WHERE id = ?'),
      fullByUri: db.prepare(`SELECT ${FULL_COLS} FROM vi_nodes WHERE account = ? AND uri = ?`),
      fullByDoc: db.prepare(`SELECT ${FULL_COLS} FROM vi_nodes WHERE account = ? AND doc_uri = ? ORDER BY passage_index, uri`),
      vecById: db.prepare('SELECT embedding FROM vi_vec WHERE rowid = ?'),
      existsUnder: db.prepare(`SELECT ${SUMMARY_COLS} FROM vi_nodes WHERE account = @a AND (uri = @u OR (uri >= @u || '/' AND uri < @u || '0'))`),
      ftsSearch: db.prepare(`SELECT rowid FROM vi_fts WHERE vi_fts MATCH ? ORDER BY bm25(vi_fts, 1.0, ${Number(this.tuning.minorWeight)}, 0.0)`).pluck(),
      vocab: db.prepare('SELECT term, df FROM vi_terms WHERE account = ? AND term IN (SELECT value FROM json_each(?))'),
      termAdd: db.prepare('INSERT INTO vi_terms(account, term, df) VALUES (?, ?, ?) ON CONFLICT(account, term) DO UPDATE SET df = df + excluded.df'),
      termGone: db.prepare('DELETE FROM vi_terms WHERE account = ? AND term = ? AND df <= 0'),
      lexSource: db.prepare('SELECT account, lexical_text, abstract, body, title FROM vi_nodes WHERE id = ?'),
      // A document is (account, doc_uri): the same document URI in two accounts is two documents.
      stats: db.prepare('SELECT COUNT(*) AS points, (SELECT COUNT(*) FROM (SELECT DISTINCT account, doc_uri FROM vi_nodes)) AS documents FROM vi_nodes'),
      statsAccount: db.prepare('SELECT COUNT(*) AS points, COUNT(DISTINCT doc_uri) AS documents FROM vi_nodes WHERE account = ?'),
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new IndexClosedError();
  }

  // ---------------------------------------------------------------- writes


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
  async optimize(): Promise<void> {
    this.assertOpen();
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
  async replaceDocument(docUri: string, records: NodeRecord[]): Promise<boolean> {
    this.assertOpen();
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
  async deleteDocument(account: string, uri: string, opts: { subtree?: boolean } = {}): Promise<number> {
    this.assertOpen();
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

  // ---------------------------------------------------------------- cache sync

  private toCacheRow(r: Record<string, unknown>): CacheRow {
    return {
      id: r.id as number,
      uri: r.uri as string,
      docUri: r.doc_uri as string,
      contextType: r.context_type as string,
      category: r.category as string,
      level: r.level as number,
      account: r.account as string,
      owner: r.owner as string,
      peer: r.peer as string,
      workspace: r.workspace as string,
      subject: r.subject as string,
      tags: r.tags === '[]' ? [] : (JSON.parse(r.tags as string) as string[]),
      createdAt: r.created_at as number,
      updatedAt: r.updated_at as number,
      validFrom: r.valid_from as number | null,
      validTo: r.valid_to as number | null,
      vector: blobVec(r.embedding as Buffer),
    };
  }

  /** Bring the scan cache up to the last committed write (a consistent snapshot, one read transaction). */
  private sync(): void {
    const c = this.cache;
    this.db.transaction(() => {
      const pruned = Number((this.st.prunedThrough.get() as { value: string } | undefined)?.value ?? 0);
      if ((c.lastSeq === 0 && c.liveRows === 0) || c.lastSeq < pruned) {
        // First use, or this reader fell behind the pruned change log: load everything.
        c.clear();
        this.bagMemo.clear();
        c.lastSeq = (this.st.maxSeq.get() as { s: number }).s;
        // vec0 is read in one sequential scan (a join would cost a vec0 lookup per row), and the
        // nodes in (account, uri) order, which is already each shard's sorted layout.
        const vectors = new Map<number, Buffer>();
        for (const [id, blob] of this.st.allVectors.iterate() as Iterable<[number, Buffer]>) vectors.set(Number(id), blob);
        for (const r of this.st.allNodesSorted.iterate() as Iterable<Record<string, unknown>>) {
          const blob = vectors.get(r.id as number);
          if (blob) c.upsert(this.toCacheRow({ ...r, embedding: blob }));
        }
        c.adoptLoadOrder();
        return;
      }
      const changes = this.st.changesSince.all(c.lastSeq) as Array<{ seq: number; node_id: number }>;
      if (changes.length === 0) return;
      const ids = [...new Set(changes.map((ch) => ch.node_id))];
      for (const id of ids) c.remove(id);
      // SQLite may hand a deleted row's id to the next insert, so a changed id's bag is stale.
      for (const id of ids) this.bagMemo.delete(id);
      for (const r of this.st.cacheRowsByIds.all(JSON.stringify(ids)) as Array<Record<string, unknown>>) c.upsert(this.toCacheRow(r));
      c.lastSeq = changes[changes.length - 1].seq;
      c.reorganize();
    })();
  }

  // ---------------------------------------------------------------- search

  private plan(q: SearchQuery): Plan {
    const shard = this.cache.shards.get(q.visibility.account);
    const targets = (q.targets ?? []).filter((t) => typeof t === 'string' && t.trim() !== '').map((t) => t.trim());
    const roots = targets.length > 0 ? targets : defaultScopeRoots(q.visibility);
    if (!shard) {
      // Still validate the filter, so a bad filter fails the same way on an empty account.
      if (q.filter) compileFilter(q.filter, this.cache.dict, emptyColumns());
      return { shard, roots, pred: () => false, ranges: [], tail: [] };
    }
    const vis = compileVisibility(q.visibility, this.cache.dict, targets.length > 0, shard);
    const filt = q.filter ? compileFilter(q.filter, this.cache.dict, shard) : null;
    const la = compileLevelsAsOf(q, shard);
    const pred: RowPredicate = filt && la ? (s) => vis(s) && la(s) && filt(s) : filt ? (s) => vis(s) && filt(s) : la ? (s) => vis(s) && la(s) : vis;
    return { shard, roots, pred, ranges: shard.rangesUnder(roots), tail: shard.tailUnder(roots) };
  }

  /**
   * Lexical leg of one (account, text): every row matching the rarest query terms, by FTS5
   * BM25, best first. The postings budget bounds how many rows that can be, so the searches of
   * a batch filter one shared list instead of each querying FTS5.
   */
  private lexical(text: string, shard: Shard, multiAccount: boolean): LexResult {
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
  private rerankHead(lex: LexResult, shard: Shard, list: number[], limit: number): number[] {
    const cap = Math.max(MIN_RERANK_DEPTH, limit * this.tuning.legFactor);
    const depth = Math.min(list.length, Math.floor(this.tuning.lexicalRerankDepth), cap);
    const scorer = lex.scorer;
    if (!scorer || !(depth > 1)) return list;
    const head = list.slice(0, depth);
    const missing = head.filter((s) => !lex.tfidf.has(s));
    if (missing.length > 0) {
      const ids = missing.map((s) => shard.ids[s]);
      const bags = this.rowBags(ids);
      missing.forEach((s, i) => lex.tfidf.set(s, scorer.score(bags.get(ids[i]) ?? new Map())));
    }
    const order = head.map((s, i) => ({ s, i, c: lex.tfidf.get(s) as number }));
    order.sort((a, b) => b.c - a.c || a.i - b.i);
    return [...order.map((o) => o.s), ...list.slice(depth)];
  }

  /** Term bags ({@link termBag}) of rows by id: from the memo, the stored term counts, or (rows without) their text. */
  private rowBags(ids: number[]): Map<number, Map<string, number>> {
    const out = new Map<number, Map<string, number>>();
    const fetch: number[] = [];
    for (const id of ids) {
      const bag = this.bagMemo.get(id);
      if (bag) {
        // Re-insert: a Map iterates in insertion order, so the memo's first key is the least recently used.
        this.bagMemo.delete(id);
        this.bagMemo.set(id, bag);
        out.set(id, bag);
      } else fetch.push(id);
    }
    if (fetch.length > 0) {
      type BagRow = { id: number; terms: string | null; lexical_text: string | null; abstract: string | null; body: string | null; title: string | null };
      for (const r of this.st.bagsByIds.all(JSON.stringify(fetch)) as BagRow[]) {
        let bag: Map<string, number> | null = null;
        if (r.terms !== null) {
          try {
            bag = bagOfEncoded(r.terms, this.tuning.minorWeight);
          } catch {
            bag = null;
          }
        }
        bag ??= termBag(this.lexicalSourceOf(r.id, r), this.tuning.minorWeight);
        out.set(r.id, bag);
        this.bagMemo.set(r.id, bag);
      }
      while (this.bagMemo.size > BAG_MEMO_ROWS) this.bagMemo.delete(this.bagMemo.keys().next().value as number);
    }
    return out;
  }

  /** The lexical source of a row: from the text columns of `r` when it has them, else read by id. */
  private lexicalSourceOf(id: number, r: { lexical_text: string | null; abstract: string | null; body: string | null; title: string | null }): string {
    let t = r;
    if (t.abstract === null || t.body === null) {
      const row = (this.st.lexTextByIds.all(JSON.stringify([id])) as Array<typeof r>)[0];
      if (!row) return '';
      t = row;
    }
    return lexicalSource({ lexicalText: t.lexical_text ?? '', abstract: t.abstract ?? '', body: t.body ?? '', title: t.title ?? '' });
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
    this.sync();
    const plans = queries.map((q) => this.plan(q));
    const multiAccount = this.cache.shards.size > 1;
    const lexMemo = new Map<string, LexResult>();
    const picked: Array<{ slots: number[]; scores: number[]; shard: Shard | undefined }> = [];

    // Dense leg, shared across the batch: one exact cosine per (distinct query vector, row),
    // computed by the SIMD kernel over the union of the contiguous slot ranges the searches need.
    const keyOf = new Map<Float32Array, string | null>();
    const denseKey: Array<string | null> = queries.map((q, qi) => {
      if (!q.vector || !plans[qi].shard || !(q.limit > 0)) return null;
      let key = keyOf.get(q.vector);
      if (key === undefined) {
        let n2 = 0;
        for (let i = 0; i < q.vector.length; i++) n2 += q.vector[i] * q.vector[i];
        // Content, not identity: callers may embed the same text twice.
        key = n2 > 0 ? vecBlob(q.vector).toString('base64') : null;
        keyOf.set(q.vector, key);
      }
      return key;
    });
    // Identical searches in one batch (gather's per-bucket peer scans are) run once.
    const firstOf = new Map<string, number>();
    const same = queries.map((q, qi) => {
      const sig = JSON.stringify([q.visibility, q.targets, q.filter, q.limit, q.levels ?? [], q.asOf ?? null, q.scoreThreshold ?? null, q.text, denseKey[qi], !!q.vector]);
      const first = firstOf.get(sig);
      if (first !== undefined) return first;
      firstOf.set(sig, qi);
      return qi;
    });
    const need = new Map<string, Map<Shard, { q: Float32Array; ranges: SlotRange[]; tail: boolean }>>();
    queries.forEach((q, qi) => {
      const key = denseKey[qi];
      if (key === null) return;
      const { ranges, tail } = plans[qi];
      const shard = plans[qi].shard as Shard;
      const byShard = need.get(key) ?? new Map<Shard, { q: Float32Array; ranges: SlotRange[]; tail: boolean }>();
      need.set(key, byShard);
      const cur = byShard.get(shard) ?? { q: q.vector as Float32Array, ranges: [], tail: false };
      byShard.set(shard, cur);
      cur.ranges.push(...ranges);
      cur.tail ||= tail.length > 0;
    });
    const dense = new Map<string, Map<Shard, Float32Array>>();
    for (const [key, byShard] of need) {
      const out = new Map<Shard, Float32Array>();
      dense.set(key, out);
      for (const [shard, { q, ranges, tail }] of byShard) {
        // Rows are stored unit-length, so with a unit query the kernel's dot products are cosines.
        const uq = unit(q);
        const scores = new Float32Array(shard.size);
        for (const [lo, hi] of mergeRanges(tail ? [...ranges, [shard.sortedUpTo, shard.size]] : ranges)) shard.vectors.dots(uq, lo, hi, scores);
        out.set(shard, scores);
      }
    }

    queries.forEach((q, qi) => {
      if (same[qi] !== qi) {
        picked.push(picked[same[qi]]);
        return;
      }
      const { shard, pred, ranges, tail } = plans[qi];
      const limit = Math.floor(q.limit);
      if (!shard || !(limit > 0)) {
        picked.push({ slots: [], scores: [], shard });
        return;
      }
      const legK = Math.max(this.tuning.legMin, limit * this.tuning.legFactor);

      const key = denseKey[qi];
      const cosines = key === null ? null : ((dense.get(key) as Map<Shard, Float32Array>).get(shard) as Float32Array);
      let denseList: number[] = [];
      if (cosines) {
        const top = new TopK(legK);
        const live = shard.live;
        let floor = top.floor;
        for (const [lo, hi] of ranges) {
          for (let s = lo; s < hi; s++) {
            const c = cosines[s];
            // The floor test first: most rows lose on score before the filter is evaluated.
            if (c > floor && live[s] && pred(s)) {
              top.push(s, c);
              floor = top.floor;
            }
          }
        }
        for (const s of tail) if (pred(s)) top.push(s, cosines[s]);
        denseList = top.sorted();
      }
      const cos = cosines ? (slot: number): number => cosines[slot] : null;

      // Lexical leg: BM25 rows of the account, filtered to this search's scope.
      let lexList: number[] = [];
      let lex: LexResult | null = null;
      if (q.text && q.text.trim() !== '') {
        const key = q.visibility.account + '\u0000' + q.text;
        lex = lexMemo.get(key) ?? this.lexical(q.text, shard, multiAccount);
        lexMemo.set(key, lex);
        const tailSet = tail.length > 0 ? new Set(tail) : null;
        const sorted = shard.sortedUpTo;
        for (const slot of lex.slots) {
          const inScope = slot < sorted ? ranges.some(([lo, hi]) => slot >= lo && slot < hi) : tailSet !== null && tailSet.has(slot);
          if (!inScope || !pred(slot)) continue;
          lexList.push(slot);
          if (lexList.length >= legK) break;
        }
        lexList = this.rerankHead(lex, shard, lexList, limit);
      }

      const lists: number[][] = [];
      const weights: number[] = [];
      if (denseList.length > 0) {
        lists.push(denseList);
        weights.push(this.tuning.denseWeight);
      }
      if (lexList.length > 0) {
        lists.push(lexList);
        weights.push(this.tuning.lexicalWeight);
      }
      const fused = reciprocalRankFusion(lists, { k: this.tuning.rrfK, weights }).slice(0, limit);
      const slots = fused.map((f) => f.id);
      let raw: number[];
      if (cos) {
        const f = cos;
        raw = slots.map((s) => f(s));
      } else if (lex) {
        raw = this.lexicalScores(slots.map((s) => shard.ids[s]), lex.terms);
      } else {
        raw = slots.map(() => 0);
      }
      // Coverage floor (see HybridTuning.coverageWeight): a page that holds the whole question
      // scores like a good match even when the cosine is diluted by everything else it says.
      const cw = this.tuning.coverageWeight;
      if (cw > 0 && lex && lex.scorer && slots.length > 0) {
        const scorer = lex.scorer;
        const cp = this.tuning.coveragePower;
        const ids = slots.map((s) => shard.ids[s]);
        const bags = this.rowBags(ids);
        raw = raw.map((r, i) => Math.max(r, cw * Math.pow(scorer.coverage(bags.get(ids[i]) ?? new Map()), cp)));
      }
      const scores = monotoneScores(raw);
      const threshold = q.scoreThreshold ?? null;
      let n = scores.length;
      if (threshold !== null && threshold !== undefined) {
        n = 0;
        while (n < scores.length && scores[n] >= threshold) n++;
      }
      picked.push({ slots: slots.slice(0, n), scores: scores.slice(0, n), shard });
    });

    // One payload read for the whole batch.
    const ids = new Set<number>();
    for (const p of picked) for (const s of p.slots) ids.add((p.shard as Shard).ids[s]);
    const withOverview = queries.some((q) => q.withOverview);
    const rows = new Map<number, NodeRow>();
    if (ids.size > 0) {
      const stmt = withOverview ? this.st.summariesOvByIds : this.st.summariesByIds;
      for (const r of stmt.all(JSON.stringify([...ids])) as NodeRow[]) rows.set(r.id, r);
    }
    return picked.map((p, qi) => {
      const out: SearchHit[] = [];
      p.slots.forEach((s, i) => {
        const r = rows.get((p.shard as Shard).ids[s]);
        if (r) out.push({ node: toSummary(r, !!queries[qi].withOverview), score: p.scores[i] });
      });
      return out;
    });
  }

  /** Weighted set cosine between the query's lexical terms and each row's (lexical-only searches). */
  private lexicalScores(ids: number[], qTerms: Map<string, number>): number[] {
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

  // ---------------------------------------------------------------- reads

  /** Visibility of one stored row to a caller that names it explicitly (get/getDocument/exists). */
  private visibleRow(r: NodeRow, vis: Visibility): boolean {
    if (r.account !== vis.account) return false;
    if (vis.workspace !== null && r.workspace !== vis.workspace) return false;
    if (r.owner === '') return true;
    if (r.owner === vis.user) return r.peer === '' || vis.openPeers || (vis.actorPeer !== null && r.peer === vis.actorPeer);
    return vis.allUsers;
  }

  /**
   * Points by indexed URI; `summary` omits body, overview, vector and lexical text, `full`
   * returns the whole {@link NodeRecord}. @returns null where missing or invisible
   */
  async get(uris: string[], visibility: Visibility, fields: FieldSet): Promise<Array<NodeRecord | NodeSummary | null>> {
    this.assertOpen();
    return uris.map((u) => {
      const r = this.st.fullByUri.get(visibility.account, u) as NodeRow | undefined;
      if (!r || !this.visibleRow(r, visibility)) return null;
      return fields === 'full' ? this.toRecord(r) : toSummary(r, false);
    });
  }

  private toRecord(r: NodeRow): NodeRecord {
    const v = this.st.vecById.get(BigInt(r.id)) as { embedding: Buffer } | undefined;
    return {
      ...toSummary(r, false),
      overview: r.overview ?? '',
      body: r.body ?? '',
      lexicalText: r.lexical_text ?? '',
      vector: v ? blobVec(v.embedding) : new Float32Array(this.dimension),
    };
  }

  /** Every visible point of a document in passage order (empty when missing or invisible). */
  async getDocument(docUri: string, visibility: Visibility): Promise<NodeRecord[]> {
    this.assertOpen();
    const rows = this.st.fullByDoc.all(visibility.account, docUri) as NodeRow[];
    return rows.filter((r) => this.visibleRow(r, visibility)).map((r) => this.toRecord(r));
  }

  /** Dense vectors by indexed URI (exact, from `vi_vec`); null where missing or invisible. */
  async vectors(uris: string[], visibility: Visibility): Promise<Array<Float32Array | null>> {
    this.assertOpen();
    return uris.map((u) => {
      const r = this.st.fullByUri.get(visibility.account, u) as NodeRow | undefined;
      if (!r || !this.visibleRow(r, visibility)) return null;
      const v = this.st.vecById.get(BigInt(r.id)) as { embedding: Buffer } | undefined;
      return v ? blobVec(v.embedding) : null;
    });
  }

  /** True when a visible point has this URI or lives under `uri/`. */
  async exists(uri: string, visibility: Visibility): Promise<boolean> {
    this.assertOpen();
    const u = uri.length > 'viking://'.length ? uri.replace(/\/+$/, '') : uri;
    for (const r of this.st.existsUnder.iterate({ a: visibility.account, u }) as Iterable<NodeRow>) {
      if (this.visibleRow(r, visibility)) return true;
    }
    return false;
  }

  /** Point and distinct-document counts, for one account or the whole file. */
  async stats(account?: string): Promise<IndexStats> {
    this.assertOpen();
    const r = (account === undefined ? this.st.stats.get() : this.st.statsAccount.get(account)) as IndexStats;
    return { points: r.points, documents: r.documents };
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
    this.cache.shards.clear();
    this.cache.where.clear();
    this.bagMemo.clear();
  }
}

/** FTS token naming an account in the `scope` column (hex, so the tokenizer keeps it whole). */
function scopeToken(account: string): string {
  return 'acct' + Buffer.from(account, 'utf8').toString('hex');
}
