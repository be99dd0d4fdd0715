import type Database from 'better-sqlite3';
import type { TermClass } from '../ranking/query';
import type { EmbeddedDb } from './db';
import { BLOCK_SIZE, MAX_LEN, MAX_TF, decodeBlock, encodeBlock } from './postings';

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
export function rowLength(r: Pick<LexicalRow, 'main' | 'minor'>): number {
  let n = 1;
  for (const c of r.main.values()) n += c;
  for (const c of r.minor.values()) n += c;
  return n;
}

/** A posting's term frequency as a block stores and scores it. */
export function storedTf(tf: number): number {
  return Math.min(MAX_TF, Math.max(1, tf));
}

/** A row length as a block stores and scores it. */
export function storedLen(len: number): number {
  return Math.min(MAX_LEN, Math.max(1, len));
}

/**
 * The key of a term in memory: account, class and term joined by NULs (neither an account nor a
 * term holds one).
 */
export function termKey(account: string, cls: TermClass, term: string): string {
  return `${account}\u0000${cls}\u0000${term}`;
}

/** Postings of one tier, in any order (parallel arrays). */
export interface TierPostings {
  ids: number[];
  tfs: number[];
  lens: number[];
}

/** The postings one write adds to or removes from one term, by tier. */
export interface TermGroup {
  account: string;
  cls: TermClass;
  term: string;
  /** Rows (postings) in all tiers: the change of the term's document frequency. */
  count: number;
  tiers: Map<number, TierPostings>;
}

/** A term's row in `vi_lex_terms`. */
export interface TermRow {
  tid: number;
  /** Postings in the term's blocks. */
  df: number;
  /** Version of the write that last changed the term. */
  ver: number;
  /** Id of the last tail merge that moved postings of the term into its blocks (0: none). */
  merged: number;
}

/**
 * Group rows' postings by term, then tier, so a write touches each term's blocks once.
 * @param rows rows, each with its length and, when only some of its terms are wanted, a filter
 */
export function groupRows(rows: ReadonlyArray<{ row: LexicalRow; len: number; only?: (cls: TermClass, term: string) => boolean }>): Map<string, TermGroup> {
  const byTerm = new Map<string, TermGroup>();
  for (const { row: r, len, only } of rows) {
    for (const [cls, m] of [[0, r.main] as const, [1, r.minor] as const]) {
      for (const [term, tf] of m) {
        if (only && !only(cls, term)) continue;
        const key = termKey(r.account, cls, term);
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
  return byTerm;
}

interface BlockRow {
  tier: number;
  first: number;
  last: number;
  n: number;
  data: Buffer;
}

/**
 * The write side of the postings blocks (`vi_lex_terms`, `vi_lex_blocks`), inside the caller's
 * write transaction: a term's document frequency, and postings appended to the last block of
 * their tier (filled up to {@link BLOCK_SIZE}, then new full blocks) or removed from the block
 * that holds them. Every term and block written is stamped with {@link ver}.
 */
export class BlockWriter {
  /** Version of the write in progress: the caller sets it before writing. */
  ver = 0;
  private readonly st: Record<string, Database.Statement>;

  constructor(db: EmbeddedDb) {
    this.st = {
      term: db.prepare('SELECT tid, df, ver, merged FROM vi_lex_terms WHERE account = ? AND cls = ? AND term = ?'),
      upTerm: db
        .prepare(
          'INSERT INTO vi_lex_terms(account, cls, term, df, ver, merged) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(account, cls, term) DO UPDATE SET df = df + excluded.df, ver = excluded.ver, merged = max(merged, excluded.merged) RETURNING tid',
        )
        .pluck(),
      bumpTerm: db.prepare('UPDATE vi_lex_terms SET df = df + ?, ver = ?, merged = max(merged, ?) WHERE tid = ?'),
      bumpIf: db.prepare('UPDATE vi_lex_terms SET df = df + ?, ver = ?, merged = ? WHERE tid = ? AND merged <> ? AND account = ? AND cls = ? AND term = ?'),
      setDf: db.prepare('UPDATE vi_lex_terms SET df = ?, ver = ? WHERE tid = ?'),
      delTerm: db.prepare('DELETE FROM vi_lex_terms WHERE tid = ?'),
      lastBlock: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? ORDER BY first DESC LIMIT 1'),
      blockAt: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first <= ? ORDER BY first DESC LIMIT 1'),
      tierBlocks: db.prepare('SELECT tier, first, last, n, data FROM vi_lex_blocks WHERE tid = ? AND tier = ? ORDER BY first'),
      insBlock: db.prepare('INSERT INTO vi_lex_blocks(tid, tier, first, last, n, max_tf, min_len, ver, data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)'),
      // A block keeps its key (tid, tier, first) when postings are appended to it: rewritten in place.
      updBlock: db.prepare('UPDATE vi_lex_blocks SET last = ?, n = ?, max_tf = ?, min_len = ?, ver = ?, data = ? WHERE tid = ? AND tier = ? AND first = ?'),
      delBlock: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ? AND tier = ? AND first = ?'),
      delTier: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ? AND tier = ?'),
      delBlocks: db.prepare('DELETE FROM vi_lex_blocks WHERE tid = ?'),
    };
  }

  /** A term's row, if the blocks hold postings of it. */
  termRow(account: string, cls: TermClass, term: string): TermRow | undefined {
    return this.st.term.get(account, cls, term) as TermRow | undefined;
  }

  /**
   * Add a group's postings: the term created or its document frequency raised, the postings
   * appended to their tiers.
   * @param mark tail merge id to record on the term ({@link TermRow.merged}; kept when higher)
   * @param tid the term's id when the caller read its row in this transaction (skips a lookup)
   * @returns the term's id
   */
  addTerm(g: TermGroup, mark: number, tid?: number): number {
    if (tid === undefined) tid = this.st.upTerm.get(g.account, g.cls, g.term, g.count, this.ver, mark) as number;
    else this.st.bumpTerm.run(g.count, this.ver, mark, tid);
    this.appendTiers(tid, g);
    return tid;
  }

  /**
   * {@link addTerm} to the term of id `tid`, if that is still the group's term and no merge
   * stamped `mark` on it yet (a merge's term ids are looked up before it writes).
   * @returns whether the postings were added
   */
  addTermIf(g: TermGroup, mark: number, tid: number): boolean {
    if (this.st.bumpIf.run(g.count, this.ver, mark, tid, mark, g.account, g.cls, g.term).changes === 0) return false;
    this.appendTiers(tid, g);
    return true;
  }

  private appendTiers(tid: number, g: TermGroup): void {
    for (const [tier, p] of g.tiers) {
      const order = ascending(p.ids);
      this.append(
        tid,
        tier,
        order.map((i) => p.ids[i]!),
        order.map((i) => p.tfs[i]!),
        order.map((i) => p.lens[i]!),
      );
    }
  }

  /** Remove a group's postings; a term whose document frequency reaches zero is dropped with its blocks. */
  removeTerm(g: TermGroup): void {
    const t = this.termRow(g.account, g.cls, g.term);
    if (!t) return;
    const df = t.df - g.count;
    if (df <= 0) {
      this.st.delBlocks.run(t.tid);
      this.st.delTerm.run(t.tid);
      return;
    }
    this.st.setDf.run(df, this.ver, t.tid);
    for (const [tier, p] of g.tiers) this.removeIds(t.tid, tier, [...p.ids].sort((a, b) => a - b));
  }

  private encode(ids: ArrayLike<number>, tfs: ArrayLike<number>, lens: ArrayLike<number>): { maxTf: number; minLen: number; data: Buffer } {
    let maxTf = 0;
    let minLen = Infinity;
    for (let i = 0; i < ids.length; i++) {
      if (tfs[i]! > maxTf) maxTf = tfs[i]!;
      if (lens[i]! < minLen) minLen = lens[i]!;
    }
    return { maxTf: storedTf(maxTf), minLen: storedLen(minLen), data: encodeBlock(ids, tfs, lens) };
  }

  private insertBlock(tid: number, tier: number, ids: ArrayLike<number>, tfs: ArrayLike<number>, lens: ArrayLike<number>): void {
    const e = this.encode(ids, tfs, lens);
    this.st.insBlock.run(tid, tier, ids[0], ids[ids.length - 1], ids.length, e.maxTf, e.minLen, this.ver, e.data);
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
      const all = [...b.ids, ...ids.slice(0, take)];
      const e = this.encode(all, [...b.tfs, ...tfs.slice(0, take)], [...b.lens, ...lens.slice(0, take)]);
      this.st.updBlock.run(all[all.length - 1], all.length, e.maxTf, e.minLen, this.ver, e.data, tid, tier, last.first);
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
}

/** Positions of `ids` in ascending id order (the identity when they already are). */
function ascending(ids: readonly number[]): number[] {
  const order = ids.map((_, i) => i);
  for (let i = 1; i < ids.length; i++) if (ids[i]! < ids[i - 1]!) return order.sort((x, y) => ids[x]! - ids[y]!);
  return order;
}

/** Index of `id` in ascending `ids`, or -1. */
export function indexOf(ids: ArrayLike<number>, id: number): number {
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
