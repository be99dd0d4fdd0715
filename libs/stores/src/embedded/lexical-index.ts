import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { EmbeddedDb } from './db';
import { bm25Idf, bm25Tf } from '../ranking/bm25';
import { decodeTermCounts as decodePending, encodeTermCounts } from '../ranking/terms';
import { BlockWriter, type LexicalRow, type TermClass, TIERS, groupRows, indexOf, rowLength } from './lexical-blocks';
import { type MergeStepOptions, TailMerge } from './lexical-merge';
import { type TailList, TailMirror } from './lexical-tail';
import { type Block, decodeBlock } from './postings';

export { TIERS, impactTier, type LexicalRow, type TermClass } from './lexical-blocks';
export type { MergeStepOptions } from './lexical-merge';

/**
 * Tables of the block-max inverted index (schema 5). A term is (account, class, term) — class 0
 * for main terms (stemmed words, CJK bigrams), 1 for minor ones (CJK unigrams), as the FTS5
 * columns were — so one tenant's rows never change another's statistics. A term's postings are
 * split into impact tiers ({@link impactTier}), each a list of blocks in ascending row id.
 * Rows written wait in the tail (`vi_lex_pending`, their terms as `encodeTermCounts` writes
 * them) until a merge moves them into the blocks (`vi_lex_tail` holds the merge's state, and
 * `vi_lex_terms.merged` which terms it has done: see {@link TailState}).
 * Every write transaction takes a new version number (`vi_lex_version`) and stamps the terms
 * and blocks it changes with it, so a reader's in-memory copies of headers, decoded blocks and
 * pending rows, keyed by version, are never stale — whichever connection or process wrote.
 */
export const LEXICAL_INDEX_DDL = `
  CREATE TABLE IF NOT EXISTS vi_lex_terms(tid INTEGER PRIMARY KEY, account TEXT NOT NULL, cls INTEGER NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, ver INTEGER NOT NULL,
    merged INTEGER NOT NULL DEFAULT 0);
  CREATE UNIQUE INDEX IF NOT EXISTS vi_lex_terms_key ON vi_lex_terms(account, cls, term);
  CREATE TABLE IF NOT EXISTS vi_lex_blocks(tid INTEGER NOT NULL, tier INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, n INTEGER NOT NULL,
    max_tf INTEGER NOT NULL, min_len INTEGER NOT NULL, ver INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(tid, tier, first)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS vi_lex_rows(account TEXT PRIMARY KEY, rows INTEGER NOT NULL, tokens INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS vi_lex_version(id INTEGER PRIMARY KEY CHECK (id = 1), ver INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS vi_lex_pending(id INTEGER PRIMARY KEY, ver INTEGER NOT NULL, account TEXT NOT NULL, terms TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS vi_lex_pending_ver ON vi_lex_pending(ver);
  CREATE TABLE IF NOT EXISTS vi_lex_tail(id INTEGER PRIMARY KEY CHECK (id = 1), merge_ver INTEGER NOT NULL, phase INTEGER NOT NULL, drops INTEGER NOT NULL,
    dropped INTEGER NOT NULL);
  INSERT OR IGNORE INTO vi_lex_tail(id, merge_ver, phase, drops, dropped) VALUES (1, 0, 0, 0, 0);
`;

/**
 * Create the lexical index's tables in `db`, or bring a schema-4 layout up to date (the
 * terms' `merged` column, the tail's tables): idempotent, and safe against another connection
 * doing the same.
 */
export function ensureLexicalTables(db: EmbeddedDb): void {
  const upToDate = (): boolean => {
    const cols = db.prepare("SELECT name FROM pragma_table_info('vi_lex_terms')").pluck().all() as string[];
    return cols.includes('merged') && db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vi_lex_tail'").get() !== undefined;
  };
  if (upToDate()) return;
  db.transaction(() => {
    const cols = db.prepare("SELECT name FROM pragma_table_info('vi_lex_terms')").pluck().all() as string[];
    if (cols.length > 0 && !cols.includes('merged')) db.exec('ALTER TABLE vi_lex_terms ADD COLUMN merged INTEGER NOT NULL DEFAULT 0');
    db.exec(LEXICAL_INDEX_DDL);
  }).immediate();
}

/** One query term. */
export interface LexicalQueryTerm {
  cls: TermClass;
  term: string;
  /** How often the query counts it (a capitalised term counts `capitalizedWeight` times). */
  repeat: number;
}

/** A term of an account as the index holds it: in its blocks, in its tail of pending rows, or both. */
export interface LexicalTermRow {
  /** Term id in the blocks (-1: only pending rows hold the term). */
  tid: number;
  /** Rows holding the term: the blocks' and the pending ones. */
  df: number;
  /** Version of the last write that changed its blocks (-1: it has none). */
  ver: number;
  /** Its pending postings, by impact tier (rows not merged into the blocks yet). */
  pending: TailList[];
}

/** A query term resolved and weighed for a top-k run. */
export interface WeightedLexicalTerm {
  row: LexicalTermRow;
  /** Its BM25 weight: repeat × idf. */
  w: number;
  /** Multiplier of its frequency (FTS5's column weight). */
  colWeight: number;
}

/** What a top-k run did (the bench and tests read it: cost must grow with k and the rarest terms). */
export interface LexicalTopKStats {
  /** Blocks of the query terms (a tier of a term's pending postings counts as one). */
  blocks: number;
  /** Blocks decoded (or pending lists read). */
  blocksDecoded: number;
  /** Postings of the query terms, in all. */
  postings: number;
  /** Postings scored. */
  postingsScored: number;
  /** Rows whose score was completed from single blocks after the reading stopped. */
  completed?: number;
}

interface Header {
  tier: number;
  first: number;
  last: number;
  n: number;
  maxTf: number;
  minLen: number;
  ver: number;
}

/** A term's block headers as read, with the order the bounds put them in for one mean row length. */
interface TermBlocks {
  ver: number;
  /** By (tier, first). */
  blocks: Header[];
  /** Start of each tier in `blocks` (length TIERS + 1). */
  tierStart: Int32Array;
  /** Mean row length `order` was computed for. */
  avgLen: number;
  /** Block indexes by decreasing bound. */
  order: Int32Array;
  /** `bm25Tf(maxTf, minLen, avgLen)` per block. */
  tfBound: Float64Array;
}

/** The headers of a term the blocks do not hold (only pending rows do). */
const NO_BLOCKS: TermBlocks = { ver: -1, blocks: [], tierStart: new Int32Array(TIERS + 1), avgLen: Number.NaN, order: new Int32Array(0), tfBound: new Float64Array(0) };

/** One query term resolved against the index. */
interface ResolvedTerm {
  /** Term id in the blocks (-1: only pending rows hold it). */
  tid: number;
  /** Document frequency: the blocks' and the pending rows'. */
  df: number;
  /** repeat × idf. */
  w: number;
  /** Class weight applied to the frequency (FTS5's column weight). */
  colWeight: number;
  tb: TermBlocks;
  /** Upper bound of each block's contribution, parallel to `tb.blocks`. */
  ub: Float64Array;
  /** The term's pending postings, by tier. */
  pending: TailList[];
}

/** A query prepared against one account: shared by every search of a batch with that text. */
export interface PreparedLexicalQuery {
  terms: ResolvedTerm[];
  avgLen: number;
}

/** Decoded postings kept in memory across queries (least recently used go first): about 7 bytes each. */
const BLOCK_CACHE_POSTINGS = 8_000_000;
/** What completing one row from one unread list costs, in postings read term-at-a-time (measured: ~10). */
const LOOKUP_COST = 10;
/** Block headers kept in memory across queries (least recently used terms go first). */
const HEADER_CACHE_BLOCKS = 400_000;

/**
 * The embedded lexical index: per (account, class, term) a postings list in impact tiers of
 * blocks of {@link BLOCK_SIZE} ascending row ids, each block stored with its largest term
 * frequency and shortest row (`vi_lex_blocks`), so a query bounds what a whole block can
 * contribute without reading it. Top-k is BM25 (FTS5's formula, `bm25Tf`/`bm25Idf`) by
 * block-max, score-at-a-time processing: blocks in decreasing bound order, a row first seen in a
 * block whose bound plus every other term's remaining bound cannot reach the k-th score found
 * is never a candidate, and the run stops as soon as the bounds of every block not yet read sum
 * below it; the candidates that could still enter are then completed exactly from the blocks
 * that may hold them. So the cost follows the rarest (highest IDF) terms and k, not the number
 * of rows that match.
 *
 * Writes (inside the caller's transaction: the node's) are an LSM-style tail: a row added is one
 * row of `vi_lex_pending` and a change of its account's statistics, whatever its terms. Queries
 * score the pending rows from an in-memory mirror of them ({@link TailMirror}, synced from the
 * file, so every connection and process sees them) beside the blocks, with statistics that count
 * both, so results are exactly those of an index holding every row in blocks. {@link mergeStep}
 * moves pending rows into the blocks in bounded steps ({@link TailMerge}), many rows at once,
 * so a term's blocks are rewritten once per merge instead of once per write. A removal drops a
 * pending row from the tail, and a merged row's postings from the blocks that hold them; a term
 * whose document frequency reaches zero is dropped. Headers and decoded blocks are kept in
 * bounded memory caches keyed by the write version that produced them.
 */
export class LexicalIndex {
  private readonly st: Record<string, Database.Statement>;
  private readonly blocks: BlockWriter;
  private readonly tail: TailMirror;
  private readonly merge: TailMerge;

  constructor(private readonly db: EmbeddedDb) {
    ensureLexicalTables(db);
    this.blocks = new BlockWriter(db);
    this.tail = new TailMirror(db);
    this.merge = new TailMerge(db, this.blocks, this.tail);
    this.st = {
      tid: db.prepare('SELECT tid, df, ver, merged FROM vi_lex_terms WHERE account = ? AND cls = ? AND term = ?'),
      bump: db.prepare('INSERT INTO vi_lex_version(id, ver) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET ver = ver + 1 RETURNING ver').pluck(),
      headers: db.prepare('SELECT tier, first, last, n, max_tf, min_len, ver FROM vi_lex_blocks WHERE tid = ? ORDER BY tier, first').raw(),
      data: db.prepare('SELECT data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first = ?').pluck(),
      tierData: db.prepare('SELECT first, ver, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first BETWEEN ? AND ? ORDER BY first').raw(),
      rows: db.prepare('SELECT rows, tokens FROM vi_lex_rows WHERE account = ?'),
      addRows: db.prepare(
        'INSERT INTO vi_lex_rows(account, rows, tokens) VALUES (?, ?, ?) ON CONFLICT(account) DO UPDATE SET rows = rows + excluded.rows, tokens = tokens + excluded.tokens',
      ),
      tail: db.prepare('SELECT merge_ver AS mergeVer, phase, dropped FROM vi_lex_tail WHERE id = 1'),
      insPending: db.prepare('INSERT INTO vi_lex_pending(id, ver, account, terms) VALUES (?, ?, ?, ?)'),
      pendingOf: db.prepare('SELECT ver, terms FROM vi_lex_pending WHERE id = ?'),
      delPending: db.prepare('DELETE FROM vi_lex_pending WHERE id = ?'),
      setDrops: db.prepare('UPDATE vi_lex_tail SET drops = ? WHERE id = 1'),
    };
  }

  // ------------------------------------------------------------------ writes

  /**
   * Add new rows (inside the caller's write transaction): each becomes a pending row of the
   * tail, searchable at once; a merge ({@link mergeStep}) moves it into the blocks later.
   */
  add(rows: readonly LexicalRow[]): void {
    if (rows.length === 0) return;
    const ver = this.st.bump.get() as number;
    this.countRows(rows, 1);
    for (const r of rows) {
      if (r.main.size + r.minor.size === 0) continue;
      // Read only: the counts as the row holds them.
      const encoded = encodeTermCounts({ main: r.main as Map<string, number>, minor: r.minor as Map<string, number> });
      this.st.insPending.run(r.id, ver, r.account, encoded);
      this.tail.stage(r.id, ver, encoded, r.main, r.minor);
    }
  }

  /**
   * Add rows straight into the blocks, bypassing the tail (bulk builds: the schema upgrade): one
   * upsert per term and a rewrite of its tiers' last blocks per call.
   */
  addMerged(rows: readonly LexicalRow[]): void {
    if (rows.length === 0) return;
    this.blocks.ver = this.st.bump.get() as number;
    this.countRows(rows, 1);
    for (const g of groupRows(rows.map((row) => ({ row, len: rowLength(row) }))).values()) this.blocks.addTerm(g, 0);
  }

  /**
   * Remove the postings of rows about to be deleted, given the terms they were written with: a
   * pending row leaves the tail (with any of its postings a merge in progress has already moved),
   * a merged row's postings leave the blocks.
   */
  remove(rows: readonly LexicalRow[]): void {
    if (rows.length === 0) return;
    const ver = this.st.bump.get() as number;
    this.blocks.ver = ver;
    this.countRows(rows, -1);
    const tail = this.st.tail.get() as { mergeVer: number; phase: number; dropped: number };
    const fromBlocks: Array<{ row: LexicalRow; len: number; only?: (cls: TermClass, term: string) => boolean }> = [];
    let dropped = false;
    for (const r of rows) {
      const p = this.st.pendingOf.get(r.id) as { ver: number; terms: string } | undefined;
      if (!p) {
        fromBlocks.push({ row: r, len: rowLength(r) });
        continue;
      }
      this.st.delPending.run(r.id);
      const stored = { id: r.id, account: r.account, ...decodePending(p.terms) };
      if (p.ver <= tail.dropped) {
        // Merged already; its row was not deleted yet.
        fromBlocks.push({ row: stored, len: rowLength(stored) });
        continue;
      }
      dropped = true;
      if (tail.mergeVer !== 0 && p.ver <= tail.mergeVer) {
        // A row of the merge in progress: the terms it has done hold its postings in their blocks.
        const mergeVer = tail.mergeVer;
        fromBlocks.push({ row: stored, len: rowLength(stored), only: (cls, term) => this.blocks.termRow(r.account, cls, term)?.merged === mergeVer });
      }
    }
    if (dropped) this.st.setDrops.run(ver);
    for (const g of groupRows(fromBlocks).values()) this.blocks.removeTerm(g);
  }

  private countRows(rows: readonly LexicalRow[], sign: 1 | -1): void {
    const perAccount = new Map<string, { rows: number; tokens: number }>();
    for (const r of rows) {
      const acc = perAccount.get(r.account) ?? { rows: 0, tokens: 0 };
      acc.rows += 1;
      acc.tokens += rowLength(r);
      perAccount.set(r.account, acc);
    }
    for (const [account, a] of perAccount) this.st.addRows.run(account, sign * a.rows, sign * a.tokens);
  }

  /**
   * One step of merging the tail into the blocks: a write transaction of its own, of about
   * `budgetMs` (see {@link MergeStepOptions}); call it outside any transaction.
   * @returns whether merge work remains
   */
  mergeStep(opts: MergeStepOptions = {}): boolean {
    return this.merge.step(opts);
  }

  /** Merge every pending row into the blocks now, in steps (tests, tools; a server uses {@link mergeStep}). */
  mergeAll(): void {
    while (this.merge.step({ budgetMs: 1000 }));
  }

  /** Rows waiting in the tail (as of the last committed write). */
  pendingRows(): number {
    this.tail.sync();
    return this.tail.liveRows;
  }

  /**
   * Terms, blocks and postings of the whole index (for tests and the bench): terms and postings
   * count the pending rows' too, blocks only the blocks.
   */
  size(): { terms: number; blocks: number; postings: number } {
    return this.db.transaction(() => {
      this.tail.sync();
      const out = this.db
        .prepare('SELECT (SELECT COUNT(*) FROM vi_lex_terms) AS terms, COUNT(*) AS blocks, COALESCE(SUM(n), 0) AS postings FROM vi_lex_blocks')
        .get() as { terms: number; blocks: number; postings: number };
      for (const t of this.tail.allTerms()) {
        const f = this.blocks.termRow(t.account, t.cls, t.term);
        const { df } = this.tail.lists(t, this.movedUpTo(f?.merged));
        out.postings += df;
        if (df > 0 && !f) out.terms++;
      }
      return out;
    })();
  }

  /** Pending rows of version ≤ this are in a term's blocks, given the merge stamp on its row. */
  private movedUpTo(merged: number | undefined): number {
    const s = this.tail.state;
    return s.mergeVer !== 0 && s.phase !== 3 && merged === s.mergeVer ? s.mergeVer : 0;
  }

  // ------------------------------------------------------------------ queries

  /** Rows of an account in the index and the sum of their BM25 lengths (zeros for an account without rows). */
  rowStats(account: string): { rows: number; tokens: number } {
    const r = this.st.rows.get(account) as { rows: number; tokens: number } | undefined;
    return r ?? { rows: 0, tokens: 0 };
  }

  /**
   * One term of an account: its id, document frequency and version in the blocks, and its
   * pending postings (the tail synced first: call it in the read transaction of the search), or
   * undefined when no row holds it.
   */
  term(account: string, cls: TermClass, term: string): LexicalTermRow | undefined {
    this.tail.sync();
    const f = this.st.tid.get(account, cls, term) as { tid: number; df: number; ver: number; merged: number } | undefined;
    const p = this.tail.lists({ account, cls, term }, this.movedUpTo(f?.merged));
    const df = (f?.df ?? 0) + p.df;
    if (df <= 0) return undefined;
    return f && f.df > 0 ? { tid: f.tid, df, ver: f.ver, pending: p.lists } : { tid: -1, df, ver: -1, pending: p.lists };
  }

  /**
   * Resolve a query's terms against one account: document frequencies (the blocks' and the
   * pending rows'), IDF, the block headers with each block's bound, and the term's pending
   * postings. Terms the account does not hold are left out. Reads one snapshot: the caller's
   * transaction, or one of its own.
   * @param minorWeight frequency weight of minor terms (FTS5's column weight)
   * @param maxDfFraction terms in more than this share of the account's rows are left out when rarer ones exist (they only cost time)
   */
  prepare(account: string, terms: readonly LexicalQueryTerm[], minorWeight: number, maxDfFraction = 1): PreparedLexicalQuery | null {
    if (!this.db.inTransaction) return this.db.transaction(() => this.prepare(account, terms, minorWeight, maxDfFraction))();
    const stats = this.rowStats(account);
    if (stats.rows <= 0 || terms.length === 0) return null;
    const n = stats.rows;
    const want = new Map<string, LexicalQueryTerm>();
    for (const t of terms) {
      const k = `${t.cls}\u0000${t.term}`;
      const cur = want.get(k);
      want.set(k, cur ? { ...cur, repeat: cur.repeat + t.repeat } : t);
    }
    // One indexed lookup per term (a join on json_each is planned as a scan of every term).
    const all: Array<{ row: LexicalTermRow; q: LexicalQueryTerm }> = [];
    for (const q of want.values()) {
      const row = this.term(account, q.cls, q.term);
      if (row) all.push({ row, q });
    }
    const specific = all.filter((f) => f.row.df <= maxDfFraction * n);
    const weighted: WeightedLexicalTerm[] = [];
    for (const f of specific.length > 0 ? specific : all) {
      const colWeight = f.q.cls === 0 ? 1 : minorWeight;
      if (!(colWeight > 0)) continue;
      weighted.push({ row: f.row, w: f.q.repeat * bm25Idf(f.row.df, n), colWeight });
    }
    return this.resolve(weighted, stats.tokens / n);
  }

  /**
   * A query of terms already weighed (the shared ranking's selection, `QueryScorer.selected`):
   * the block headers of each with each block's bound for the account's mean row length, and
   * its pending postings (as {@link term} found them: call both in one transaction).
   * @param avgLen mean BM25 row length of the account
   * @returns null when no term is given
   */
  resolve(terms: readonly WeightedLexicalTerm[], avgLen: number): PreparedLexicalQuery | null {
    const out: ResolvedTerm[] = [];
    for (const { row, w, colWeight } of terms) {
      const tb = row.tid < 0 ? NO_BLOCKS : this.blocksOf(row.tid, row.ver, avgLen, colWeight);
      const ub = new Float64Array(tb.tfBound.length);
      for (let i = 0; i < ub.length; i++) ub[i] = w * tb.tfBound[i]!;
      out.push({ tid: row.tid, df: row.df, w, colWeight, tb, ub, pending: row.pending });
    }
    return out.length > 0 ? { terms: out, avgLen } : null;
  }

  /** Headers of a term's blocks by term id, weighed by their blocks: from memory while the term has not changed since they were read. */
  private readonly headerCache = new LRUCache<number, TermBlocks>({ maxSize: HEADER_CACHE_BLOCKS, sizeCalculation: (tb) => Math.max(1, tb.blocks.length) });
  /** Decoded blocks by `tid:tier:first:ver`, weighed by their postings. */
  private readonly blockCache = new LRUCache<string, Block>({ maxSize: BLOCK_CACHE_POSTINGS, sizeCalculation: (b) => Math.max(1, b.ids.length) });

  private blocksOf(tid: number, ver: number, avgLen: number, colWeight: number): TermBlocks {
    let tb = this.headerCache.get(tid);
    if (tb?.ver !== ver) {
      const blocks = (this.st.headers.all(tid) as Array<[number, number, number, number, number, number, number]>).map(([tier, first, last, n, maxTf, minLen, bver]) => ({
        tier,
        first,
        last,
        n,
        maxTf,
        minLen,
        ver: bver,
      }));
      const tierStart = new Int32Array(TIERS + 1);
      for (const b of blocks) tierStart[b.tier + 1]! += 1;
      for (let i = 1; i <= TIERS; i++) tierStart[i]! += tierStart[i - 1]!;
      tb = { ver, blocks, tierStart, avgLen: Number.NaN, order: new Int32Array(0), tfBound: new Float64Array(0) };
      this.headerCache.set(tid, tb);
    }
    // The bounds and their order depend on the mean row length (stable while nothing is written).
    if (tb.avgLen !== avgLen || tb.tfBound.length !== tb.blocks.length) {
      tb.tfBound = Float64Array.from(tb.blocks, (b) => bm25Tf(colWeight * b.maxTf, b.minLen, avgLen));
      tb.order = Int32Array.from(tb.blocks.keys()).sort((a, b) => tb!.tfBound[b]! - tb!.tfBound[a]!);
      tb.avgLen = avgLen;
    }
    return tb;
  }

  /**
   * Blocks `[lo, hi)` of one tier of a term, decoded: from the cache, and what it lacks in one
   * range read (a statement per block costs more than the block).
   */
  listBlocks(t: ResolvedTerm, lo: number, hi: number): Block[] {
    const out: Block[] = new Array(hi - lo);
    let missing = 0;
    for (let bi = lo; bi < hi; bi++) {
      const h = t.tb.blocks[bi]!;
      const key = `${t.tid}:${h.tier}:${h.first}:${h.ver}`;
      const b = this.blockCache.get(key);
      if (b) out[bi - lo] = b;
      else missing++;
    }
    if (missing === 0) return out;
    if (missing <= 2) {
      for (let bi = lo; bi < hi; bi++) if (!out[bi - lo]) out[bi - lo] = this.blockAt(t, bi);
      return out;
    }
    const tier = t.tb.blocks[lo]!.tier;
    const rows = this.st.tierData.all(t.tid, tier, t.tb.blocks[lo]!.first, t.tb.blocks[hi - 1]!.first) as Array<[number, number, number, Buffer]>;
    const byFirst = new Map(rows.map((r) => [r[0], r] as const));
    for (let bi = lo; bi < hi; bi++) {
      if (out[bi - lo]) continue;
      const h = t.tb.blocks[bi]!;
      const r = byFirst.get(h.first);
      // A block the headers name is in the same snapshot, unless it was rewritten meanwhile.
      out[bi - lo] = r && r[1] === h.ver ? this.remember(t.tid, h, decodeBlock(r[3], h.first, r[2])) : this.blockAt(t, bi);
    }
    return out;
  }

  /** Keep a decoded block in the cache (evicting the least recently used beyond its budget). */
  private remember(tid: number, h: Header, b: Block): Block {
    this.blockCache.set(`${tid}:${h.tier}:${h.first}:${h.ver}`, b);
    return b;
  }

  /** Block `bi` of a term, decoded (from the cache when it holds that version). */
  blockAt(t: ResolvedTerm, bi: number): Block {
    const h = t.tb.blocks[bi]!;
    const key = `${t.tid}:${h.tier}:${h.first}:${h.ver}`;
    const b = this.blockCache.get(key);
    if (b) return b;
    return this.remember(t.tid, h, decodeBlock(this.st.data.get(t.tid, h.tier, h.first) as Buffer, h.first, h.n));
  }

  /** Per-row scratch of a top-k run, indexed by row id (grown as ids grow; reset after each run). */
  private acc = new Float64Array(0);
  private mask = new Uint32Array(0);
  private state = new Uint8Array(0);

  private scratch(maxId: number): void {
    if (this.acc.length > maxId) return;
    const n = Math.max(maxId + 1, this.acc.length * 2, 1024);
    this.acc = new Float64Array(n);
    this.mask = new Uint32Array(n);
    this.state = new Uint8Array(n);
  }

  /**
   * The `k` best rows by BM25 among those `accept` admits (every row without it), best first
   * (ties: lower id first).
   *
   * Term-at-a-time over impact tiers: each (term, tier) postings list in turn, the highest
   * bound first, adding each posting's BM25 into a per-row accumulator. A row not seen yet can
   * score at most the sum over the terms of their best unread list's bound, and a seen row its
   * score so far plus that sum over the terms it was not seen in (a row is in one tier of a
   * term). Once the first cannot reach the k-th score found, the rows that still can are either
   * completed one by one from the blocks that may hold them or the reading goes on, whichever
   * costs less. So the bulk of a common term — the postings of rows that hold it once in a long
   * text, its lowest tiers — is seldom read. Exact: the result is what scoring every row would give.
   * @param accept whether a row id is in the search's scope (called once per row met)
   * @param stats filled with what the run did, when given
   */
  topK(q: PreparedLexicalQuery, k: number, accept: ((id: number) => boolean) | null = null, stats?: LexicalTopKStats): Array<{ id: number; score: number }> {
    if (!(k > 0)) return [];
    const T = q.terms.length;
    // Seen-in-term bits cover 32 terms; rows of later terms are bounded without them.
    const B = Math.min(T, 32);
    // A list is one tier of a term: blocks [lo, hi) of its headers, or its pending postings (`tail`).
    type List = { ti: number; lo: number; hi: number; max: number; postings: number; tail: Block | null };
    const lists: List[] = [];
    const perTerm: List[][] = q.terms.map(() => []);
    let maxId = 0;
    q.terms.forEach((t, ti) => {
      for (let tier = 0; tier < TIERS; tier++) {
        const lo = t.tb.tierStart[tier]!;
        const hi = t.tb.tierStart[tier + 1]!;
        if (hi <= lo) continue;
        let mx = 0;
        let postings = 0;
        for (let i = lo; i < hi; i++) {
          if (t.ub[i]! > mx) mx = t.ub[i]!;
          if (t.tb.blocks[i]!.last > maxId) maxId = t.tb.blocks[i]!.last;
          postings += t.tb.blocks[i]!.n;
        }
        const l = { ti, lo, hi, max: mx, postings, tail: null };
        lists.push(l);
        perTerm[ti]!.push(l);
      }
      for (const p of t.pending) {
        const ids = p.block.ids;
        if (ids[ids.length - 1]! > maxId) maxId = ids[ids.length - 1]!;
        const l = { ti, lo: 0, hi: 0, max: t.w * bm25Tf(t.colWeight * p.maxTf, p.minLen, q.avgLen), postings: ids.length, tail: p.block };
        lists.push(l);
        perTerm[ti]!.push(l);
      }
    });
    lists.sort((a, b) => b.max - a.max);
    for (const p of perTerm) p.sort((a, b) => b.max - a.max);
    this.scratch(maxId);
    const { acc, mask, state } = this;
    // state[id]: 0 not met, 2 met and in scope, 3 met and out of scope.
    const touched: number[] = [];
    const rows: number[] = [];
    const read = new Set<List>();
    // unread[ti]: the bound of term ti's best unread list.
    const unread = Float64Array.from(perTerm, (p) => p[0]?.max ?? 0);
    const nextOf = new Int32Array(T);
    let decoded = 0;
    let scored = 0;
    let completedRows = 0;
    const rest = (id: number): number => {
      let r = 0;
      const bits = mask[id]!;
      for (let ti = 0; ti < T; ti++) if (ti >= B || !(bits & (1 << ti))) r += unread[ti]!;
      return r;
    };
    const scoresOf = (ids: readonly number[]): Float64Array => {
      const out = new Float64Array(ids.length);
      for (let i = 0; i < ids.length; i++) out[i] = acc[ids[i]!]!;
      return out;
    };
    try {
      let open: number[] | null = null;
      let checkedAt = Infinity;
      for (let li = 0; li < lists.length; li++) {
        let unseen = 0;
        for (let ti = 0; ti < T; ti++) unseen += unread[ti]!;
        // Whether the reading can stop is checked each time the unseen bound has halved.
        if (rows.length >= k && unseen < 0.5 * checkedAt) {
          checkedAt = unseen;
          const theta = kthLargest(scoresOf(rows), k);
          if (unseen <= theta) {
            // Rows that can still reach the k-th score. Completing one costs a block lookup per
            // unread list of its missing terms; reading on costs the unread postings: the cheaper wins.
            const s: number[] = [];
            const low = theta - unseen;
            for (const id of rows) if (acc[id]! >= low && acc[id]! + rest(id) >= theta) s.push(id);
            let unreadPostings = 0;
            for (let j = li; j < lists.length; j++) unreadPostings += lists[j]!.postings;
            if (s.length * Math.min(lists.length - li, T * 2) * LOOKUP_COST < unreadPostings) {
              open = s;
              break;
            }
          }
        }
        const l = lists[li]!;
        const t = q.terms[l.ti]!;
        read.add(l);
        const pt = perTerm[l.ti]!;
        while (nextOf[l.ti]! < pt.length && read.has(pt[nextOf[l.ti]!]!)) nextOf[l.ti]! += 1;
        unread[l.ti] = nextOf[l.ti]! < pt.length ? pt[nextOf[l.ti]!]!.max : 0;
        const w = t.w;
        const cw = t.colWeight;
        const avg = q.avgLen;
        const bit = l.ti < B ? 1 << l.ti : 0;
        for (const b of l.tail ? [l.tail] : this.listBlocks(t, l.lo, l.hi)) {
          decoded++;
          const { ids, tfs, lens } = b;
          for (let i = 0; i < ids.length; i++) {
            const id = ids[i]!;
            let st = state[id]!;
            if (st === 0) {
              st = accept === null || accept(id) ? 2 : 3;
              state[id] = st;
              touched.push(id);
              if (st === 2) rows.push(id);
            }
            if (st !== 2) continue;
            scored++;
            acc[id]! += w * bm25Tf(cw * tfs[i]!, lens[i]!, avg);
            mask[id]! |= bit;
          }
        }
      }
      if (open) {
        // Complete each open row from the unread lists of the terms it was not seen in.
        for (const id of open) {
          const bits = mask[id]!;
          for (let ti = 0; ti < T; ti++) {
            if (ti < B && bits & (1 << ti)) continue;
            const t = q.terms[ti]!;
            for (const l of perTerm[ti]!) {
              if (read.has(l)) continue;
              let b: Block;
              if (l.tail) b = l.tail;
              else {
                const bi = findBlock(t.tb.blocks, l.lo, l.hi - 1, id);
                if (bi < 0) continue;
                b = this.blockAt(t, bi);
              }
              const at = indexOf(b.ids, id);
              if (at >= 0) {
                acc[id]! += t.w * bm25Tf(t.colWeight * b.tfs[at]!, b.lens[at]!, q.avgLen);
                break;
              }
            }
          }
          completedRows++;
        }
      }
      let pool = open ?? rows;
      if (pool.length > k) {
        const cut = kthLargest(scoresOf(pool), k);
        pool = pool.filter((id) => acc[id]! >= cut);
      }
      pool.sort((a, b) => acc[b]! - acc[a]! || a - b);
      if (stats) {
        stats.blocks += q.terms.reduce((n, t) => n + t.tb.blocks.length + t.pending.length, 0);
        stats.postings += q.terms.reduce((n, t) => n + t.df, 0);
        stats.blocksDecoded += decoded;
        stats.postingsScored += scored;
        stats.completed = (stats.completed ?? 0) + completedRows;
      }
      return pool.slice(0, k).map((id) => ({ id, score: acc[id]! }));
    } finally {
      for (const id of touched) {
        acc[id] = 0;
        mask[id] = 0;
        state[id] = 0;
      }
    }
  }
}

/** The k-th largest value of `v` (1 ≤ k ≤ v.length), by quickselect; reorders `v`. */
export function kthLargest(v: Float64Array, k: number): number {
  let lo = 0;
  let hi = v.length - 1;
  const target = v.length - k;
  while (lo < hi) {
    const pivot = v[(lo + hi) >> 1]!;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (v[i]! < pivot) i++;
      while (v[j]! > pivot) j--;
      if (i <= j) {
        const x = v[i]!;
        v[i] = v[j]!;
        v[j] = x;
        i++;
        j--;
      }
    }
    if (target <= j) hi = j;
    else if (target >= i) lo = i;
    else return v[target]!;
  }
  return v[target]!;
}

/** Index of the block in `blocks[lo..hi]` (ascending, disjoint id ranges) whose range holds `id`, or -1. */
function findBlock(blocks: readonly Header[], lo: number, hi: number, id: number): number {
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const b = blocks[mid]!;
    if (id < b.first) hi = mid - 1;
    else if (id > b.last) lo = mid + 1;
    else return mid;
  }
  return -1;
}
