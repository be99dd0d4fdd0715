import { Dictionary, type FilterColumns, isUnderPrefix } from './filter';
import { VectorRows } from './simd-dot';

/** Row metadata plus vector as loaded from SQLite into the scan cache. */
export interface CacheRow {
  id: number;
  uri: string;
  docUri: string;
  contextType: string;
  category: string;
  level: number;
  account: string;
  owner: string;
  peer: string;
  workspace: string;
  subject: string;
  tags: string[];
  createdAt: number;
  updatedAt: number;
  validFrom: number | null;
  validTo: number | null;
  /** The vector, or null when it is set afterwards ({@link ScanCache.setVector}: a full load reads the vectors after the rows). */
  vector: Float32Array | null;
}

function grow<T extends Int32Array | Float64Array | Float32Array | Uint8Array>(a: T, n: number): T {
  const b = new (a.constructor as { new (n: number): T })(n);
  b.set(a.subarray(0, Math.min(a.length, n)));
  return b;
}

/** `v` scaled to unit length (a copy, into `out` when given; a zero vector is returned as zeros). */
export function unit(v: Float32Array, out: Float32Array = new Float32Array(v.length)): Float32Array {
  let n2 = 0;
  for (let i = 0; i < v.length; i++) n2 += v[i] * v[i];
  if (n2 > 0) {
    const inv = 1 / Math.sqrt(n2);
    for (let i = 0; i < v.length; i++) out[i] = v[i] * inv;
  } else out.fill(0, 0, v.length);
  return out;
}

/** Half-open slot range. */
export type SlotRange = [lo: number, hi: number];

/** The tags of a row without tags (shared by every such row; never written). */
const NO_TAGS = new Int32Array(0);

function sameCodes(a: Int32Array, b: Int32Array): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * All rows of one account, columnar. Slots `[0, sortedUpTo)` are physically ordered by URI,
 * so every URI-prefix target is one contiguous slot range (found by binary search) and its
 * vectors are contiguous for the SIMD scan. Rows added since the last {@link reorganize} form an
 * unsorted tail that is checked row by row; deletes leave tombstones. `reorganize` re-sorts and
 * compacts when the tail or the tombstones grow (amortised O(log n) per write).
 */
export class Shard implements FilterColumns {
  size = 0;
  dead = 0;
  sortedUpTo = 0;
  ids = new Int32Array(16);
  live = new Uint8Array(16);
  uri: string[] = [];
  docUri: string[] = [];
  contextType = new Int32Array(16);
  category = new Int32Array(16);
  level = new Int32Array(16);
  owner = new Int32Array(16);
  peer = new Int32Array(16);
  workspace = new Int32Array(16);
  subject = new Int32Array(16);
  tags: Int32Array[] = [];
  createdAt = new Float64Array(16);
  updatedAt = new Float64Array(16);
  validFrom = new Float64Array(16);
  validTo = new Float64Array(16);
  /** Unit-normalised vectors (a zero vector stays zero), so a dot product with a unit query is the cosine. */
  vectors: VectorRows;

  constructor(
    readonly account: string,
    readonly dim: number,
    private readonly simd = true,
  ) {
    this.vectors = new VectorRows(dim, simd);
  }

  private growTo(n: number): void {
    this.ids = grow(this.ids, n);
    this.live = grow(this.live, n);
    this.contextType = grow(this.contextType, n);
    this.category = grow(this.category, n);
    this.level = grow(this.level, n);
    this.owner = grow(this.owner, n);
    this.peer = grow(this.peer, n);
    this.workspace = grow(this.workspace, n);
    this.subject = grow(this.subject, n);
    this.createdAt = grow(this.createdAt, n);
    this.updatedAt = grow(this.updatedAt, n);
    this.validFrom = grow(this.validFrom, n);
    this.validTo = grow(this.validTo, n);
  }

  /** Append a row to the tail; @returns its slot */
  add(r: CacheRow, dict: Dictionary): number {
    const s = this.size;
    if (s === this.ids.length) this.growTo(s * 2);
    this.ids[s] = r.id;
    this.live[s] = 1;
    this.uri[s] = r.uri;
    // The rows of a document come one after another (a load reads them in URI order, a write
    // adds them together): they share one copy of its URI and of its tags, and rows without
    // tags share one empty array, instead of a string and a typed array (with its buffer) each,
    // about 150 MB at 509,367 rows. The columns are never written in place.
    const prev = s > 0 ? s - 1 : -1;
    this.docUri[s] = r.docUri === r.uri ? r.uri : prev >= 0 && this.docUri[prev] === r.docUri ? this.docUri[prev]! : r.docUri;
    const tags = r.tags.length === 0 ? NO_TAGS : Int32Array.from(r.tags, (t) => dict.intern(t));
    this.tags[s] = prev >= 0 && sameCodes(this.tags[prev]!, tags) ? this.tags[prev]! : tags;
    this.contextType[s] = dict.intern(r.contextType);
    this.category[s] = dict.intern(r.category);
    this.level[s] = r.level;
    this.owner[s] = dict.intern(r.owner);
    this.peer[s] = dict.intern(r.peer);
    this.workspace[s] = dict.intern(r.workspace);
    this.subject[s] = dict.intern(r.subject);
    this.createdAt[s] = r.createdAt;
    this.updatedAt[s] = r.updatedAt;
    this.validFrom[s] = r.validFrom ?? NaN;
    this.validTo[s] = r.validTo ?? NaN;
    this.vectors.ensure(s + 1);
    if (r.vector) this.vectors.set(s, unit(r.vector));
    this.size = s + 1;
    return s;
  }

  /** Tombstone a slot. */
  kill(slot: number): void {
    if (this.live[slot]) {
      this.live[slot] = 0;
      this.dead++;
    }
  }

  /** Live rows. */
  get liveCount(): number {
    return this.size - this.dead;
  }

  /** True when the tail or the tombstones have grown past a sixteenth of the shard. */
  needsReorganize(): boolean {
    const tail = this.size - this.sortedUpTo;
    return (tail > 64 && tail * 16 > this.size) || (this.dead > 64 && this.dead * 16 > this.size);
  }

  /**
   * Rewrite every column (and the vectors) in URI order without tombstones.
   * @returns the new slot of each live row id
   */
  reorganize(): Map<number, number> {
    const slots: number[] = [];
    for (let s = 0; s < this.size; s++) if (this.live[s]) slots.push(s);
    const uri = this.uri;
    slots.sort((a, b) => (uri[a] < uri[b] ? -1 : uri[a] > uri[b] ? 1 : 0));
    const n = slots.length;
    const cap = Math.max(16, n);
    const pick = <T extends Int32Array | Float64Array | Float32Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as { new (n: number): T })(cap);
      for (let i = 0; i < n; i++) b[i] = a[slots[i]];
      return b;
    };
    const vectors = new VectorRows(this.dim, this.simd);
    vectors.ensure(n);
    for (let i = 0; i < n; i++) vectors.set(i, this.vectors.get(slots[i]));
    this.ids = pick(this.ids);
    this.live = pick(this.live);
    this.contextType = pick(this.contextType);
    this.category = pick(this.category);
    this.level = pick(this.level);
    this.owner = pick(this.owner);
    this.peer = pick(this.peer);
    this.workspace = pick(this.workspace);
    this.subject = pick(this.subject);
    this.createdAt = pick(this.createdAt);
    this.updatedAt = pick(this.updatedAt);
    this.validFrom = pick(this.validFrom);
    this.validTo = pick(this.validTo);
    this.uri = slots.map((s) => this.uri[s]);
    this.docUri = slots.map((s) => this.docUri[s]);
    this.tags = slots.map((s) => this.tags[s]);
    this.vectors = vectors;
    this.size = n;
    this.dead = 0;
    this.sortedUpTo = n;
    const where = new Map<number, number>();
    for (let i = 0; i < n; i++) where.set(this.ids[i], i);
    return where;
  }

  /** First sorted slot whose URI is ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.sortedUpTo;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.uri[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Sorted-part slot ranges (merged, ascending) holding the URIs under `prefixes` (path
   * semantics: the prefix itself and `prefix/…`). Tail slots are not included: see {@link tailUnder}.
   */
  rangesUnder(prefixes: string[]): SlotRange[] {
    const ranges: SlotRange[] = [];
    for (const raw of prefixes) {
      const p = raw.length > 'viking://'.length ? raw.replace(/\/+$/, '') : raw;
      if (p === 'viking://' || p === 'viking:/') {
        ranges.push([0, this.sortedUpTo]);
        continue;
      }
      // `p` itself, then the contiguous block `p/…`, that is [p + '/', p + '0').
      const at = this.lowerBound(p);
      if (at < this.sortedUpTo && this.uri[at] === p) ranges.push([at, at + 1]);
      const lo = this.lowerBound(p + '/');
      const hi = this.lowerBound(p + '0');
      if (hi > lo) ranges.push([lo, hi]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    const merged: SlotRange[] = [];
    for (const r of ranges) {
      const last = merged[merged.length - 1];
      if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
      else merged.push([r[0], r[1]]);
    }
    return merged;
  }

  /** Live tail slots whose URI is under one of `prefixes`. */
  tailUnder(prefixes: string[]): number[] {
    const out: number[] = [];
    for (let s = this.sortedUpTo; s < this.size; s++) {
      if (!this.live[s]) continue;
      const u = this.uri[s];
      for (const p of prefixes) {
        if (isUnderPrefix(u, p)) {
          out.push(s);
          break;
        }
      }
    }
    return out;
  }

  /** Copy of a slot's (unit-normalised) vector. */
  vector(slot: number): Float32Array {
    return this.vectors.get(slot);
  }
}

/**
 * In-memory mirror of the index's metadata and vectors, partitioned by account, used to run
 * the dense leg and every filter without touching SQLite. It is kept in step with the SQLite
 * file through the `vi_changes` log (see the adapter), so several adapters — in one process or
 * several — that share a file all see every committed write.
 */
export class ScanCache {
  readonly dict = new Dictionary();
  readonly shards = new Map<string, Shard>();
  readonly where = new Map<number, { shard: Shard; slot: number }>();
  /** Last change-log sequence applied. */
  lastSeq = 0;
  /** {@link setVector}'s unit vector before it is copied into the shard. */
  private readonly scratch: Float32Array;

  /** @param simd use the WebAssembly SIMD kernel for dot products when available */
  constructor(
    readonly dim: number,
    private readonly simd = true,
  ) {
    this.scratch = new Float32Array(dim);
  }

  /** Insert or replace a row (by id). */
  upsert(r: CacheRow): void {
    this.remove(r.id);
    let sh = this.shards.get(r.account);
    if (!sh) {
      sh = new Shard(r.account, this.dim, this.simd);
      this.shards.set(r.account, sh);
    }
    this.where.set(r.id, { shard: sh, slot: sh.add(r, this.dict) });
  }

  /**
   * Set the vector of row `id`, added without one (scaled to unit length, as `upsert` does).
   * @returns false when the cache holds no such row
   */
  setVector(id: number, v: Float32Array): boolean {
    const w = this.where.get(id);
    if (!w) return false;
    w.shard.vectors.set(w.slot, unit(v, this.scratch));
    return true;
  }

  /** Remove a row by id (no-op when absent). */
  remove(id: number): void {
    const w = this.where.get(id);
    if (!w) return;
    w.shard.kill(w.slot);
    this.where.delete(id);
  }

  /** Re-sort and compact the shards that need it (all of them with `force`). */
  reorganize(force = false): void {
    for (const [account, sh] of this.shards) {
      if (!force && !sh.needsReorganize()) continue;
      if (sh.liveCount === 0) {
        this.shards.delete(account);
        continue;
      }
      for (const [id, slot] of sh.reorganize()) this.where.set(id, { shard: sh, slot });
    }
  }

  /**
   * After a full load in URI order, mark each shard sorted. SQLite orders by UTF-8 bytes and
   * JavaScript by UTF-16 units, which disagree only around astral characters: a shard whose
   * URIs are not in JavaScript order is re-sorted instead.
   */
  adoptLoadOrder(): void {
    for (const sh of this.shards.values()) {
      let ordered = true;
      for (let i = 1; i < sh.size && ordered; i++) ordered = sh.uri[i - 1] < sh.uri[i];
      if (ordered) sh.sortedUpTo = sh.size;
      else for (const [id, slot] of sh.reorganize()) this.where.set(id, { shard: sh, slot });
    }
  }

  /** Drop everything (before a full reload). */
  clear(): void {
    this.shards.clear();
    this.where.clear();
    this.lastSeq = 0;
  }

  /** Live rows across shards. */
  get liveRows(): number {
    return this.where.size;
  }
}
