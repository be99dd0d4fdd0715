import type Database from 'better-sqlite3';
import type { EmbeddedDb } from './db';
import { bm25Idf, bm25Tf } from '../ranking/bm25';
import type { TermClass } from '../ranking/query';
import { BLOCK_SIZE, type Block, decodeBlock, encodeBlock } from './postings';

/**
 * Tables of the block-max inverted index (schema 4). A term is (account, class, term) — class 0
 * for main terms (stemmed words, CJK bigrams), 1 for minor ones (CJK unigrams), as the FTS5
 * columns were — so one tenant's rows never change another's statistics. A term's postings are
 * split into impact tiers ({@link impactTier}), each a list of blocks in ascending row id.
 * Every write transaction takes a new version number (`vi_lex_version`) and stamps the terms
 * and blocks it changes with it, so a reader's in-memory copies of headers and decoded blocks,
 * keyed by version, are never stale — whichever connection or process wrote.
 */
export const LEXICAL_INDEX_DDL = `
  CREATE TABLE IF NOT EXISTS vi_lex_terms(tid INTEGER PRIMARY KEY, account TEXT NOT NULL, cls INTEGER NOT NULL, term TEXT NOT NULL, df INTEGER NOT NULL, ver INTEGER NOT NULL);
  CREATE UNIQUE INDEX IF NOT EXISTS vi_lex_terms_key ON vi_lex_terms(account, cls, term);
  CREATE TABLE IF NOT EXISTS vi_lex_blocks(tid INTEGER NOT NULL, tier INTEGER NOT NULL, first INTEGER NOT NULL, last INTEGER NOT NULL, n INTEGER NOT NULL,
    max_tf INTEGER NOT NULL, min_len INTEGER NOT NULL, ver INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(tid, tier, first)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS vi_lex_rows(account TEXT PRIMARY KEY, rows INTEGER NOT NULL, tokens INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS vi_lex_version(id INTEGER PRIMARY KEY CHECK (id = 1), ver INTEGER NOT NULL);
`;

export type { TermClass };

/** One row's lexical terms, as written or removed. */
export interface LexicalRow {
  /** Row id (`vi_nodes.id`). */
  id: number;
  account: string;
  /** Main term → occurrences. */
  main: ReadonlyMap<string, number>;
  /** Minor term → occurrences. */
  minor: ReadonlyMap<string, number>;
}

/** One query term. */
export interface LexicalQueryTerm {
  cls: TermClass;
  term: string;
  /** How often the query counts it (a capitalised term counts `capitalizedWeight` times). */
  repeat: number;
}

/** A term of an account as the index stores it. */
export interface LexicalTermRow {
  tid: number;
  /** Rows holding the term. */
  df: number;
  /** Version of the last write that changed it. */
  ver: number;
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
  /** Blocks of the query terms. */
  blocks: number;
  /** Blocks decoded. */
  blocksDecoded: number;
  /** Postings of the query terms, in all. */
  postings: number;
  /** Postings scored. */
  postingsScored: number;
  /** Rows whose score was completed from single blocks after the reading stopped. */
  completed?: number;
}

/** Impact tiers of a term's postings. */
export const TIERS = 9;

/**
 * The impact tier of a posting, from its term frequency and row length only (so a removal finds
 * it again): higher tiers hold the postings BM25 weighs most — frequent in short rows — so their
 * blocks' bounds are high and tight, and the bulk (once, in a long row) sits in low tiers whose
 * blocks a query seldom needs to read.
 */
export function impactTier(tf: number, len: number): number {
  const f = tf >= 4 ? 2 : tf >= 2 ? 1 : 0;
  const l = len <= 64 ? 2 : len <= 256 ? 1 : 0;
  return f * 3 + l;
}

/** Row length in tokens as BM25 counts it (every term of both classes, plus FTS5's account token). */
function rowLength(r: LexicalRow): number {
  let n = 1;
  for (const c of r.main.values()) n += c;
  for (const c of r.minor.values()) n += c;
  return n;
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

/** One query term resolved against the index. */
interface ResolvedTerm {
  tid: number;
  df: number;
  /** repeat × idf. */
  w: number;
  /** Class weight applied to the frequency (FTS5's column weight). */
  colWeight: number;
  tb: TermBlocks;
  /** Upper bound of each block's contribution, parallel to `tb.blocks`. */
  ub: Float64Array;
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

interface BlockRow {
  tier: number;
  first: number;
  last: number;
  n: number;
  data: Buffer;
}

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
 * Writes run inside the caller's transaction (the node's): postings are appended to the last
 * block of their tier (row ids only grow), removed from the block that holds them, and a term
 * whose document frequency reaches zero is dropped. Headers and decoded blocks are kept in
 * bounded memory caches keyed by the write version that produced them.
 */
export class LexicalIndex {
  private readonly st: Record<string, Database.Statement>;

  constructor(private readonly db: EmbeddedDb) {
    db.exec(LEXICAL_INDEX_DDL);
    this.st = {
      tid: db.prepare('SELECT tid, df, ver FROM vi_lex_terms WHERE account = ? AND cls = ? AND term = ?'),
      upTerm: db
        .prepare(
          'INSERT INTO vi_lex_terms(account, cls, term, df, ver) VALUES (?, ?, ?, ?, ?) ON CONFLICT(account, cls, term) DO UPDATE SET df = df + excluded.df, ver = excluded.ver RETURNING tid',
        )
        .pluck(),
      setDf: db.prepare('UPDATE vi_lex_terms SET df = ?, ver = ? WHERE tid = ?'),
      bump: db.prepare('INSERT INTO vi_lex_version(id, ver) VALUES (1, 1) ON CONFLICT(id) DO UPDATE SET ver = ver + 1 RETURNING ver').pluck(),
      delTerm: db.prepare('DELETE FROM vi_lex_terms WHERE tid = ?'),
      lastBlock: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? ORDER BY first DESC LIMIT 1'),
      blockAt: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first <= ? ORDER BY first DESC LIMIT 1'),
      tierBlocks: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? ORDER BY first'),
      insBlock: db.prepare('INSERT INTO vi_lex_blocks(tid, tier, first, last, n, max_tf, min_len, ver, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
      delBlock: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first = ?'),
      delTier: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ? AND tier = ?'),
      delBlocks: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ?'),
      headers: db.prepare('SELECT tier, first, last, n, max_tf, min_len, ver FROM vi_lex_blocks WHERE tid = ? ORDER BY tier, first').raw(),
      data: db.prepare('SELECT data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first = ?').pluck(),
      tierData: db.prepare('SELECT first, ver, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first BETWEEN ? AND ? ORDER BY first').raw(),
      rows: db.prepare('SELECT rows, tokens FROM vi_lex_rows WHERE account = ?'),
      addRows: db.prepare(
        'INSERT INTO vi_lex_rows(account, rows, tokens) VALUES (?, ?, ?) ON CONFLICT(account) DO UPDATE SET rows = rows + excluded.rows, tokens = tokens + excluded.tokens',
      ),
    };
  }

  // ------------------------------------------------------------------ writes

  /** Add the postings of new rows (inside the caller's write transaction). */
  add(rows: readonly LexicalRow[]): void {
    this.apply(rows, 1);
  }

  /** Remove the postings of rows about to be deleted, given the terms they were written with. */
  remove(rows: readonly LexicalRow[]): void {
    this.apply(rows, -1);
  }

  /** Version of the write in progress (see {@link LEXICAL_INDEX_DDL}). */
  private ver = 0;

  private apply(rows: readonly LexicalRow[], sign: 1 | -1): void {
    if (rows.length === 0) return;
    this.ver = this.st.bump.get() as number;
    // Group by term, then tier, so a batch touches each term's blocks once.
    type Group = { account: string; cls: TermClass; term: string; count: number; tiers: Map<number, { ids: number[]; tfs: number[]; lens: number[] }> };
    const byTerm = new Map<string, Group>();
    const perAccount = new Map<string, { rows: number; tokens: number }>();
    for (const r of rows) {
      const len = rowLength(r);
      const acc = perAccount.get(r.account) ?? { rows: 0, tokens: 0 };
      acc.rows += 1;
      acc.tokens += len;
      perAccount.set(r.account, acc);
      for (const [cls, m] of [[0, r.main] as const, [1, r.minor] as const]) {
        for (const [term, tf] of m) {
          const key = `${r.account}\u0000${cls}\u0000${term}`;
          let g = byTerm.get(key);
          if (!g) byTerm.set(key, (g = { account: r.account, cls, term, count: 0, tiers: new Map() }));
          g.count++;
          const tier = impactTier(tf, len);
          let p = g.tiers.get(tier);
          if (!p) g.tiers.set(tier, (p = { ids: [], tfs: [], lens: [] }));
          p.ids.push(r.id);
          p.tfs.push(tf);
          p.lens.push(len);
        }
      }
    }
    for (const [account, a] of perAccount) this.st.addRows.run(account, sign * a.rows, sign * a.tokens);
    for (const g of byTerm.values()) {
      let tid: number;
      if (sign > 0) {
        // One statement: the term's row created or its frequency raised.
        tid = this.st.upTerm.get(g.account, g.cls, g.term, g.count, this.ver) as number;
      } else {
        const t = this.st.tid.get(g.account, g.cls, g.term) as { tid: number; df: number } | undefined;
        if (!t) continue;
        tid = t.tid;
        const df = t.df - g.count;
        if (df <= 0) {
          this.st.delBlocks.run(tid);
          this.st.delTerm.run(tid);
          continue;
        }
        this.st.setDf.run(df, this.ver, tid);
      }
      for (const [tier, p] of g.tiers) {
        const order = p.ids.map((_, i) => i).sort((x, y) => p.ids[x]! - p.ids[y]!);
        const ids = order.map((i) => p.ids[i]!);
        if (sign > 0) this.append(tid, tier, ids, order.map((i) => p.tfs[i]!), order.map((i) => p.lens[i]!));
        else this.removeIds(tid, tier, ids);
      }
    }
  }

  private insertBlock(tid: number, tier: number, ids: ArrayLike<number>, tfs: ArrayLike<number>, lens: ArrayLike<number>): void {
    let maxTf = 0;
    let minLen = Infinity;
    for (let i = 0; i < ids.length; i++) {
      if (tfs[i]! > maxTf) maxTf = tfs[i]!;
      if (lens[i]! < minLen) minLen = lens[i]!;
    }
    this.st.insBlock.run(tid, tier, ids[0], ids[ids.length - 1], ids.length, Math.min(255, maxTf), Math.min(65_535, minLen), this.ver, encodeBlock(ids, tfs, lens));
  }

  /** Write postings (ascending ids) as full blocks of a tier, after any existing ones. */
  private writeBlocks(tid: number, tier: number, ids: number[], tfs: number[], lens: number[]): void {
    for (let at = 0; at < ids.length; at += BLOCK_SIZE) {
      const end = Math.min(ids.length, at + BLOCK_SIZE);
      this.insertBlock(tid, tier, ids.slice(at, end), tfs.slice(at, end), lens.slice(at, end));
    }
  }

  /** Append postings whose ids follow the tier's last block; anything else rewrites the tier's list. */
  private append(tid: number, tier: number, ids: number[], tfs: number[], lens: number[]): void {
    const last = this.st.lastBlock.get(tid, tier) as BlockRow | undefined;
    if (last && ids[0]! <= last.last) {
      // Not an append (a rebuild, or ids written out of order): merge into the whole tier.
      this.rewrite(tid, tier, ids, tfs, lens);
      return;
    }
    if (last && last.n < BLOCK_SIZE) {
      const b = decodeBlock(last.data, last.first, last.n);
      const take = Math.min(BLOCK_SIZE - last.n, ids.length);
      this.st.delBlock.run(tid, tier, last.first);
      this.insertBlock(tid, tier, [...b.ids, ...ids.slice(0, take)], [...b.tfs, ...tfs.slice(0, take)], [...b.lens, ...lens.slice(0, take)]);
      ids = ids.slice(take);
      tfs = tfs.slice(take);
      lens = lens.slice(take);
    }
    if (ids.length > 0) this.writeBlocks(tid, tier, ids, tfs, lens);
  }

  private rewrite(tid: number, tier: number, ids: number[], tfs: number[], lens: number[]): void {
    const all = new Map<number, [number, number]>();
    for (const r of this.st.tierBlocks.all(tid, tier) as BlockRow[]) {
      const b = decodeBlock(r.data, r.first, r.n);
      for (let i = 0; i < b.ids.length; i++) all.set(b.ids[i]!, [b.tfs[i]!, b.lens[i]!]);
    }
    ids.forEach((id, i) => all.set(id, [tfs[i]!, lens[i]!]));
    this.st.delTier.run(tid, tier);
    const sorted = [...all.keys()].sort((a, b) => a - b);
    this.writeBlocks(
      tid,
      tier,
      sorted,
      sorted.map((id) => all.get(id)![0]),
      sorted.map((id) => all.get(id)![1]),
    );
  }

  private removeIds(tid: number, tier: number, ids: number[]): void {
    for (const id of ids) {
      const r = this.st.blockAt.get(tid, tier, id) as BlockRow | undefined;
      if (!r || id > r.last) continue;
      const b = decodeBlock(r.data, r.first, r.n);
      const at = indexOf(b.ids, id);
      if (at < 0) continue;
      this.st.delBlock.run(tid, tier, r.first);
      if (r.n === 1) continue;
      const keep = (_: number, i: number) => i !== at;
      this.insertBlock(tid, tier, [...b.ids].filter(keep), [...b.tfs].filter(keep), [...b.lens].filter(keep));
    }
  }

  /** Terms, blocks and postings of the whole index (for tests and the bench). */
  size(): { terms: number; blocks: number; postings: number } {
    return this.db.prepare('SELECT (SELECT COUNT(*) FROM vi_lex_terms) AS terms, COUNT(*) AS blocks, COALESCE(SUM(n), 0) AS postings FROM vi_lex_blocks').get() as {
      terms: number;
      blocks: number;
      postings: number;
    };
  }

  // ------------------------------------------------------------------ queries

  /** Rows of an account in the index and the sum of their BM25 lengths (zeros for an account without rows). */
  rowStats(account: string): { rows: number; tokens: number } {
    const r = this.st.rows.get(account) as { rows: number; tokens: number } | undefined;
    return r ?? { rows: 0, tokens: 0 };
  }

  /** One term of an account: its id, document frequency and version, or undefined when no row holds it. */
  term(account: string, cls: TermClass, term: string): LexicalTermRow | undefined {
    return this.st.tid.get(account, cls, term) as LexicalTermRow | undefined;
  }

  /**
   * Resolve a query's terms against one account: document frequencies, IDF, and the block
   * headers with each block's bound. Terms the account does not hold are left out.
   * @param minorWeight frequency weight of minor terms (FTS5's column weight)
   * @param maxDfFraction terms in more than this share of the account's rows are left out when rarer ones exist (they only cost time)
   */
  prepare(account: string, terms: readonly LexicalQueryTerm[], minorWeight: number, maxDfFraction = 1): PreparedLexicalQuery | null {
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
      if (row && row.df > 0) all.push({ row, q });
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
   * the block headers of each with each block's bound for the account's mean row length.
   * @param avgLen mean BM25 row length of the account
   * @returns null when no term is given
   */
  resolve(terms: readonly WeightedLexicalTerm[], avgLen: number): PreparedLexicalQuery | null {
    const out: ResolvedTerm[] = [];
    for (const { row, w, colWeight } of terms) {
      const tb = this.blocksOf(row.tid, row.ver, avgLen, colWeight);
      const ub = new Float64Array(tb.tfBound.length);
      for (let i = 0; i < ub.length; i++) ub[i] = w * tb.tfBound[i]!;
      out.push({ tid: row.tid, df: row.df, w, colWeight, tb, ub });
    }
    return out.length > 0 ? { terms: out, avgLen } : null;
  }

  /** Headers of a term's blocks: from memory while the term has not changed since they were read. */
  private readonly headerCache = new Map<number, TermBlocks>();
  private headerCount = 0;
  /** Decoded blocks by `tid:tier:first:ver` (insertion order = recency). */
  private readonly blockCache = new Map<string, Block>();
  private cachedPostings = 0;

  private blocksOf(tid: number, ver: number, avgLen: number, colWeight: number): TermBlocks {
    let tb = this.headerCache.get(tid);
    if (tb) {
      this.headerCache.delete(tid);
      if (tb.ver !== ver) {
        this.headerCount -= tb.blocks.length;
        tb = undefined;
      }
    }
    if (!tb) {
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
      this.headerCount += blocks.length;
    }
    // The bounds and their order depend on the mean row length (stable while nothing is written).
    if (tb.avgLen !== avgLen || tb.tfBound.length !== tb.blocks.length) {
      tb.tfBound = Float64Array.from(tb.blocks, (b) => bm25Tf(colWeight * b.maxTf, b.minLen, avgLen));
      tb.order = Int32Array.from(tb.blocks.keys()).sort((a, b) => tb!.tfBound[b]! - tb!.tfBound[a]!);
      tb.avgLen = avgLen;
    }
    this.headerCache.set(tid, tb);
    while (this.headerCount > HEADER_CACHE_BLOCKS && this.headerCache.size > 1) {
      const [oldest, v] = this.headerCache.entries().next().value as [number, TermBlocks];
      this.headerCache.delete(oldest);
      this.headerCount -= v.blocks.length;
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
      if (b) {
        this.blockCache.delete(key);
        this.blockCache.set(key, b);
        out[bi - lo] = b;
      } else missing++;
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
    this.cachedPostings += b.ids.length;
    while (this.cachedPostings > BLOCK_CACHE_POSTINGS) {
      const [oldest, v] = this.blockCache.entries().next().value as [string, Block];
      this.blockCache.delete(oldest);
      this.cachedPostings -= v.ids.length;
    }
    return b;
  }

  /** Block `bi` of a term, decoded (from the cache when it holds that version). */
  blockAt(t: ResolvedTerm, bi: number): Block {
    const h = t.tb.blocks[bi]!;
    const key = `${t.tid}:${h.tier}:${h.first}:${h.ver}`;
    const b = this.blockCache.get(key);
    if (b) {
      this.blockCache.delete(key);
      this.blockCache.set(key, b);
      return b;
    }
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
    type List = { ti: number; lo: number; hi: number; max: number; postings: number };
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
        const l = { ti, lo, hi, max: mx, postings };
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
        for (const b of this.listBlocks(t, l.lo, l.hi)) {
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
              const bi = findBlock(t.tb.blocks, l.lo, l.hi - 1, id);
              if (bi < 0) continue;
              const b = this.blockAt(t, bi);
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
        stats.blocks += q.terms.reduce((n, t) => n + t.tb.blocks.length, 0);
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

function indexOf(ids: Int32Array, id: number): number {
  let lo = 0;
  let hi = ids.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = ids[mid]!;
    if (v < id) lo = mid + 1;
    else if (v > id) hi = mid - 1;
    else return mid;
  }
  return -1;
}
