import type Database from 'better-sqlite3';
import { LRUCache } from 'lru-cache';
import type { EmbeddedDb } from './db';
import { type TermClass, type TermGroup, impactTier, storedLen, storedTf } from './lexical-blocks';
import type { Block } from './postings';

/**
 * The merge state of the lexical index's tail (`vi_lex_tail`, one row). Rows written are
 * pending (`vi_lex_pending`) until a merge moves their postings into the blocks. A merge takes
 * every pending row at its start — the rows of version ≤ `mergeVer`, its set R — and moves R's
 * postings term by term, stamping each term it has done with `merged = mergeVer`
 * (`vi_lex_terms.merged`): so while it runs, R's postings of a term are in the blocks exactly
 * when the term's row carries that stamp. Once every term is done, R is dropped at once
 * (`dropped = mergeVer`: every pending row of version ≤ `dropped` is gone, whether or not it is
 * deleted yet) and its rows are deleted in steps.
 */
export interface TailState {
  /** Id (and last row version) of the merge in progress; 0 when none is. */
  mergeVer: number;
  /** Phase of the merge in progress: 1 R's terms the index holds, in id order; 2 the others; 3 deleting R's rows. */
  phase: number;
  /** Version of the last write that removed pending rows (not merged ones). */
  drops: number;
  /** Pending rows of version ≤ this are merged (every merge so far). */
  dropped: number;
}

/** A term, as the tail's work lists name it. */
export interface TermName {
  account: string;
  cls: TermClass;
  term: string;
}

/** Pending postings of one term and tier, as a query scores them. */
export interface TailList {
  tier: number;
  /** Ascending ids, their frequencies and row lengths (as a block stores them). */
  block: Block;
  /** Largest frequency and shortest row of the list: its BM25 bound. */
  maxTf: number;
  minLen: number;
}

/** One term's postings in one part: `slot × 256 + tf` per posting, in the order the rows came. */
interface PartTerm extends TermName {
  postings: number[];
}

/**
 * Postings of the query lists a mirror keeps between syncs (least recently used terms go first):
 * 7 bytes each; a term without pending postings counts as one.
 */
const LIST_CACHE_POSTINGS = 1_000_000;

/** Slots a part numbers before it compacts (packed postings must stay small integers). */
const MAX_SLOTS = 1 << 22;

const NO_STATE: TailState = Object.freeze({ mergeVer: 0, phase: 0, drops: 0, dropped: 0 });

/**
 * Pending rows of a range of versions, and their postings by term. The mirror keeps one part
 * per merge boundary, so the rows a merge took go at once when it finishes.
 */
let partSerial = 0;

class Part {
  /** Names the part in caches without holding it (a dropped part's memory goes at once). */
  readonly serial = ++partSerial;
  readonly byAccount = new Map<string, [Map<string, PartTerm>, Map<string, PartTerm>]>();
  readonly byId = new Map<number, number>();
  ids: number[] = [];
  vers: number[] = [];
  lens: number[] = [];
  counts: number[] = [];
  alive = new Uint8Array(64);
  liveRows = 0;
  livePostings = 0;
  deadPostings = 0;
  /** Highest version of a row the part took (0: none). */
  maxVer = 0;
  /** Lowest version of a live row, as far as known (a kill does not raise it). */
  minVer = Infinity;
  /** Rows killed so far (a cached list of the part's postings is stale once it moves). */
  kills = 0;

  /** @param limit the part takes rows of version ≤ this (Infinity: the open part) */
  constructor(public limit: number) {}

  termOf(account: string, cls: TermClass, term: string): PartTerm | undefined {
    return this.byAccount.get(account)?.[cls].get(term);
  }

  *terms(): IterableIterator<PartTerm> {
    for (const maps of this.byAccount.values()) for (const m of maps) yield* m.values();
  }

  /** Add a row from its term counts as a write had them (their strings' hashes are computed already). */
  addCounts(id: number, ver: number, account: string, main: ReadonlyMap<string, number>, minor: ReadonlyMap<string, number>): void {
    const slot = this.ids.length;
    const maps = this.start(slot, account);
    let len = 1;
    let count = 0;
    for (const [cls, counts] of [[0, main] as const, [1, minor] as const]) {
      const m = maps[cls];
      for (const [term, n] of counts) {
        let t = m.get(term);
        if (!t) m.set(term, (t = { account, cls, term, postings: [] }));
        t.postings.push(slot * 256 + storedTf(n));
        len += n;
        count++;
      }
    }
    this.finish(id, ver, len, count);
  }

  /** Add a row from its stored term counts (`encodeTermCounts`). */
  add(id: number, ver: number, account: string, encoded: string): void {
    const slot = this.ids.length;
    const maps = this.start(slot, account);
    let len = 1;
    let count = 0;
    // `term count` pairs separated by spaces, main terms, a tab, minor terms (encodeTermCounts).
    let cls: TermClass = 0;
    let at = 0;
    const end = encoded.length;
    while (at < end) {
      if (encoded.charCodeAt(at) === 9) {
        cls = 1;
        at++;
        continue;
      }
      const sp = encoded.indexOf(' ', at);
      if (sp < 0) break;
      let stop = sp + 1;
      while (stop < end && encoded.charCodeAt(stop) !== 32 && encoded.charCodeAt(stop) !== 9) stop++;
      const term = encoded.slice(at, sp);
      const n = Number(encoded.slice(sp + 1, stop));
      const m = maps[cls];
      let t = m.get(term);
      if (!t) m.set(term, (t = { account, cls, term, postings: [] }));
      t.postings.push(slot * 256 + storedTf(n));
      len += n;
      count++;
      at = stop < end && encoded.charCodeAt(stop) === 32 ? stop + 1 : stop;
    }
    this.finish(id, ver, len, count);
  }

  private start(slot: number, account: string): [Map<string, PartTerm>, Map<string, PartTerm>] {
    if (slot >= this.alive.length) {
      const a = new Uint8Array(this.alive.length * 2);
      a.set(this.alive);
      this.alive = a;
    }
    let maps = this.byAccount.get(account);
    if (!maps) this.byAccount.set(account, (maps = [new Map(), new Map()]));
    return maps;
  }

  private finish(id: number, ver: number, len: number, count: number): void {
    const slot = this.ids.length;
    this.ids.push(id);
    this.vers.push(ver);
    this.lens.push(storedLen(len));
    this.counts.push(count);
    this.alive[slot] = 1;
    this.byId.set(id, slot);
    this.liveRows++;
    this.livePostings += count;
    if (ver > this.maxVer) this.maxVer = ver;
    if (ver < this.minVer) this.minVer = ver;
  }

  kill(slot: number): void {
    if (!this.alive[slot]) return;
    this.kills++;
    this.alive[slot] = 0;
    if (this.byId.get(this.ids[slot]!) === slot) this.byId.delete(this.ids[slot]!);
    this.liveRows--;
    this.livePostings -= this.counts[slot]!;
    this.deadPostings += this.counts[slot]!;
  }

  /** Drop dead postings and renumber the live rows' slots: O(postings), once dead ones outnumber live ones. */
  compact(): void {
    const map = new Int32Array(this.ids.length).fill(-1);
    const ids: number[] = [];
    const vers: number[] = [];
    const lens: number[] = [];
    const counts: number[] = [];
    for (let s = 0; s < this.ids.length; s++) {
      if (!this.alive[s]) continue;
      map[s] = ids.length;
      ids.push(this.ids[s]!);
      vers.push(this.vers[s]!);
      lens.push(this.lens[s]!);
      counts.push(this.counts[s]!);
    }
    for (const maps of this.byAccount.values()) {
      for (const m of maps) {
        for (const [term, t] of m) {
          const kept: number[] = [];
          for (const p of t.postings) {
            const to = map[p >>> 8]!;
            if (to >= 0) kept.push(to * 256 + (p & 255));
          }
          if (kept.length === 0) m.delete(term);
          else t.postings = kept;
        }
      }
    }
    this.ids = ids;
    this.vers = vers;
    this.lens = lens;
    this.counts = counts;
    this.alive = new Uint8Array(Math.max(64, ids.length * 2));
    this.alive.fill(1, 0, ids.length);
    this.byId.clear();
    ids.forEach((id, s) => this.byId.set(id, s));
    this.deadPostings = 0;
  }
}

/**
 * One connection's in-memory mirror of the pending rows: their postings grouped by term, so a
 * query scores them beside the blocks, and a merge reads them by term. Synced from the tables
 * (`vi_lex_pending`, `vi_lex_tail`) whenever the lexical version (`vi_lex_version`) moved —
 * whichever connection or process wrote: new rows are read once (by version), rows removed
 * from the tail are found by one pass over the pending ids (only after a write that removed
 * some), and a finished merge's rows go at once: the mirror keeps the rows in parts split where
 * merges start, and drops a part whole. Removed rows leave dead postings in their part,
 * compacted away when they outnumber the live ones.
 */
export class TailMirror {
  /** The tail's merge state as of the last sync. */
  state: TailState = { ...NO_STATE };
  /** By ascending `limit`; the last one is open (takes every later row). */
  private parts: Part[] = [new Part(Infinity)];
  /** Lexical version the mirror reflects (-1: never synced). */
  private syncedVer = -1;
  /** The merge the open part was last sealed for. */
  private sealedFor = 0;
  /**
   * Query lists built, by term: valid while the parts, their kills and the term's postings in
   * each are what they were (a search between two writes, or a term no write since touched).
   */
  private readonly listCache = new LRUCache<string, { after: number; sig: number[]; parts: number[]; out: { lists: TailList[]; df: number } }>({
    maxSize: LIST_CACHE_POSTINGS,
    sizeCalculation: (e) => Math.max(1, e.out.df),
  });
  /** Rows this connection wrote since the last sync, by id, with their terms as the write had them. */
  private readonly staged = new Map<number, { ver: number; encoded: string; main: ReadonlyMap<string, number>; minor: ReadonlyMap<string, number> }>();
  private readonly st: Record<'ver' | 'state' | 'newRows' | 'ids', Database.Statement>;

  constructor(private readonly db: EmbeddedDb) {
    this.st = {
      ver: db.prepare('SELECT ver FROM vi_lex_version WHERE id = 1').pluck(),
      state: db.prepare('SELECT merge_ver AS mergeVer, phase, drops, dropped FROM vi_lex_tail WHERE id = 1'),
      newRows: db.prepare('SELECT id, ver, account, terms FROM vi_lex_pending WHERE ver > ? ORDER BY ver, id').raw(),
      ids: db.prepare('SELECT id, ver FROM vi_lex_pending WHERE ver > ?').raw(),
    };
  }

  /** Live pending rows. */
  get liveRows(): number {
    let n = 0;
    for (const p of this.parts) n += p.liveRows;
    return n;
  }

  /**
   * A row this connection writes (inside the write's transaction): when the next sync reads the
   * same row back (same id, version and stored terms), it takes its terms from here instead of
   * parsing them.
   */
  stage(id: number, ver: number, encoded: string, main: ReadonlyMap<string, number>, minor: ReadonlyMap<string, number>): void {
    this.staged.set(id, { ver, encoded, main, minor });
  }

  /**
   * Bring the mirror up to the last committed write (in the caller's transaction when it is
   * in one, so it matches the blocks it reads; else in one of its own).
   */
  sync(): void {
    if (!this.db.inTransaction) {
      this.db.transaction(() => this.sync())();
      return;
    }
    const ver = (this.st.ver.get() as number | undefined) ?? 0;
    if (ver === this.syncedVer) return;
    if (ver < this.syncedVer) {
      // Versions only grow: the mirror read a write that was rolled back since. Start again.
      this.parts = [new Part(Infinity)];
      this.state = { ...NO_STATE };
      this.syncedVer = -1;
      this.sealedFor = 0;
      this.listCache.clear();
    }
    const state = (this.st.state.get() as TailState | undefined) ?? NO_STATE;
    const since = Math.max(this.syncedVer, 0);
    if (state.dropped > this.state.dropped) {
      // Merges finished: every row they took goes (they all have a version ≤ the last one's id).
      this.parts = this.parts.filter((p) => p.limit === Infinity || p.maxVer > state.dropped);
      for (const p of this.parts) {
        if (p.maxVer <= state.dropped && p.limit === Infinity) this.parts[this.parts.length - 1] = new Part(Infinity);
        else if (p.minVer <= state.dropped) for (let s = 0; s < p.ids.length; s++) if (p.alive[s] && p.vers[s]! <= state.dropped) p.kill(s);
      }
    }
    const open = this.parts[this.parts.length - 1]!;
    if (state.mergeVer !== 0 && state.phase !== 3 && this.sealedFor !== state.mergeVer && open.maxVer <= state.mergeVer) {
      this.sealedFor = state.mergeVer;
      // A merge started: the rows it takes (version ≤ its id) stay apart from later ones.
      open.limit = state.mergeVer;
      this.parts.push(new Part(Infinity));
    }
    for (const [id, rowVer, account, terms] of this.st.newRows.iterate(Math.max(since, state.dropped)) as Iterable<[number, number, string, string]>) {
      for (const p of this.parts) {
        const old = p.byId.get(id);
        if (old !== undefined) p.kill(old);
      }
      const part = this.parts.find((p) => rowVer <= p.limit)!;
      const st = this.staged.get(id);
      if (st && st.ver === rowVer && st.encoded === terms) part.addCounts(id, rowVer, account, st.main, st.minor);
      else part.add(id, rowVer, account, terms);
    }
    // What is not read back by now was rolled back (or is not committed): it is parsed if it comes.
    this.staged.clear();
    if (this.syncedVer >= 0 && state.drops > this.syncedVer) {
      // Rows removed from the tail since the last sync: keep exactly the rows still there.
      const present = new Map<number, number>();
      for (const [id, rowVer] of this.st.ids.iterate(state.dropped) as Iterable<[number, number]>) present.set(id, rowVer);
      for (const p of this.parts) for (const [id, slot] of [...p.byId]) if (present.get(id) !== p.vers[slot]) p.kill(slot);
    }
    for (const p of this.parts) if (p.deadPostings > Math.max(p.livePostings, 65_536) || p.ids.length >= MAX_SLOTS) p.compact();
    this.state = { ...state };
    this.syncedVer = ver;
  }

  /**
   * The terms of the rows of version ≤ `upTo` (a merge's set R), each once; with some terms no
   * such row holds, which {@link groupOf} then finds empty.
   */
  termsUpTo(upTo: number): TermName[] {
    const parts = this.parts.filter((p) => p.liveRows > 0 && p.minVer <= upTo);
    if (parts.length === 1) return [...parts[0]!.terms()];
    const seen = new Map<string, TermName>();
    for (const p of parts) for (const t of p.terms()) seen.set(`${t.account}\u0000${t.cls}\u0000${t.term}`, t);
    return [...seen.values()];
  }

  /** Every term the tail holds, each once. */
  allTerms(): TermName[] {
    return this.termsUpTo(Infinity);
  }

  /** Whether a live row of version ≤ `upTo` holds the term. */
  holds(t: TermName, upTo: number): boolean {
    return !this.eachLivePosting(t, upTo, () => false);
  }

  /**
   * Call `fn` for each posting of the term held by a live row of version ≤ `upTo` (the rows a
   * merge up to `upTo` moves), with its part, slot and term frequency, until `fn` returns false.
   * @returns false when `fn` stopped the walk
   */
  private eachLivePosting(t: TermName, upTo: number, fn: (p: Part, slot: number, tf: number) => boolean | void): boolean {
    for (const p of this.parts) {
      if (p.minVer > upTo) continue;
      const pt = p.termOf(t.account, t.cls, t.term);
      if (!pt) continue;
      for (const x of pt.postings) {
        const slot = x >>> 8;
        if (p.alive[slot] && p.vers[slot]! <= upTo && fn(p, slot, x & 255) === false) return false;
      }
    }
    return true;
  }

  /**
   * A term's pending postings by tier (ascending ids), as a query scores them.
   * @param after leave out rows of version ≤ this (the merge in progress has moved them; 0: none)
   * @returns the lists and the postings in all (the term's pending document frequency)
   */
  lists(t: TermName, after: number): { lists: TailList[]; df: number } {
    const key = `${t.account}\u0000${t.cls}\u0000${t.term}`;
    const sig: number[] = [];
    for (const p of this.parts) sig.push(p.kills, p.termOf(t.account, t.cls, t.term)?.postings.length ?? 0);
    const hit = this.listCache.get(key);
    if (hit && hit.after === after && hit.parts.length === this.parts.length && hit.parts.every((p, i) => p === this.parts[i]!.serial) && hit.sig.every((v, i) => v === sig[i])) return hit.out;
    const out = this.build(t, after);
    this.listCache.set(key, { after, sig, parts: this.parts.map((p) => p.serial), out });
    return out;
  }

  private build(t: TermName, after: number): { lists: TailList[]; df: number } {
    const by = new Map<number, { ids: number[]; tfs: number[]; lens: number[]; sorted: boolean }>();
    let df = 0;
    for (const p of this.parts) {
      if (p.maxVer <= after) continue;
      const pt = p.termOf(t.account, t.cls, t.term);
      if (!pt) continue;
      for (const x of pt.postings) {
        const slot = x >>> 8;
        if (!p.alive[slot] || p.vers[slot]! <= after) continue;
        const len = p.lens[slot]!;
        const tf = x & 255;
        const tier = impactTier(tf, len);
        let l = by.get(tier);
        if (!l) by.set(tier, (l = { ids: [], tfs: [], lens: [], sorted: true }));
        const id = p.ids[slot]!;
        if (l.ids.length > 0 && id < l.ids[l.ids.length - 1]!) l.sorted = false;
        l.ids.push(id);
        l.tfs.push(tf);
        l.lens.push(len);
        df++;
      }
    }
    const lists: TailList[] = [];
    for (const [tier, l] of by) {
      const n = l.ids.length;
      const order = Array.from({ length: n }, (_, i) => i);
      if (!l.sorted) order.sort((a, b) => l.ids[a]! - l.ids[b]!);
      const block: Block = { ids: new Int32Array(n), tfs: new Uint8Array(n), lens: new Uint16Array(n) };
      let maxTf = 0;
      let minLen = Infinity;
      order.forEach((i, j) => {
        block.ids[j] = l.ids[i]!;
        block.tfs[j] = l.tfs[i]!;
        block.lens[j] = l.lens[i]!;
        if (l.tfs[i]! > maxTf) maxTf = l.tfs[i]!;
        if (l.lens[i]! < minLen) minLen = l.lens[i]!;
      });
      lists.push({ tier, block, maxTf, minLen });
    }
    return { lists, df };
  }

  /**
   * The postings of a term that live rows of version ≤ `upTo` hold (a merge's set R), grouped
   * by tier: what the merge moves into the blocks. Null when there are none.
   */
  groupOf(t: TermName, upTo: number): TermGroup | null {
    let g: TermGroup | null = null;
    this.eachLivePosting(t, upTo, (p, slot, tf) => {
      g ??= { account: t.account, cls: t.cls, term: t.term, count: 0, tiers: new Map() };
      const len = p.lens[slot]!;
      const tier = impactTier(tf, len);
      let l = g.tiers.get(tier);
      if (!l) g.tiers.set(tier, (l = { ids: [], tfs: [], lens: [] }));
      l.ids.push(p.ids[slot]!);
      l.tfs.push(tf);
      l.lens.push(len);
      g.count++;
    });
    return g;
  }
}
