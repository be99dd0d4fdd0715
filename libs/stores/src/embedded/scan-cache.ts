import { Dictionary, type FilterColumns, isUnderPrefix } from './filter';

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
  vector: Float32Array;
}

/** Rows per vector chunk: chunks never move, so growing the shard never copies vectors. */
const CHUNK_BITS = 10;
const CHUNK = 1 << CHUNK_BITS;

function grow<T extends Int32Array | Float64Array | Float32Array | Uint8Array>(a: T, n: number): T {
  const b = new (a.constructor as { new (n: number): T })(n);
  b.set(a);
  return b;
}

/**
 * All rows of one account, columnar, in slot order (append-only; deletes leave tombstones).
 * `order` holds the live slots sorted by URI at the last sort, so a URI-prefix target is a
 * binary-searched range; slots appended since (`tail`) are checked one by one until the next
 * sort. Vectors sit in fixed chunks of {@link CHUNK} rows.
 */
export class Shard implements FilterColumns {
  size = 0;
  dead = 0;
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
  /** 1 / ‖v‖ per slot (0 for a zero vector), so a dot product becomes a cosine. */
  invNorm = new Float32Array(16);
  chunks: Float32Array[] = [];
  order = new Int32Array(0);
  sortedUpTo = 0;

  constructor(readonly dim: number) {}

  /** Append a row; @returns its slot */
  add(r: CacheRow, dict: Dictionary): number {
    const s = this.size;
    if (s === this.ids.length) {
      const n = s * 2;
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
      this.invNorm = grow(this.invNorm, n);
    }
    this.ids[s] = r.id;
    this.live[s] = 1;
    this.uri[s] = r.uri;
    this.docUri[s] = r.docUri;
    this.contextType[s] = dict.intern(r.contextType);
    this.category[s] = dict.intern(r.category);
    this.level[s] = r.level;
    this.owner[s] = dict.intern(r.owner);
    this.peer[s] = dict.intern(r.peer);
    this.workspace[s] = dict.intern(r.workspace);
    this.subject[s] = dict.intern(r.subject);
    this.tags[s] = Int32Array.from(r.tags, (t) => dict.intern(t));
    this.createdAt[s] = r.createdAt;
    this.updatedAt[s] = r.updatedAt;
    this.validFrom[s] = r.validFrom ?? NaN;
    this.validTo[s] = r.validTo ?? NaN;
    const ci = s >> CHUNK_BITS;
    if (ci === this.chunks.length) this.chunks.push(new Float32Array(CHUNK * this.dim));
    const off = (s & (CHUNK - 1)) * this.dim;
    this.chunks[ci].set(r.vector, off);
    let n2 = 0;
    for (let i = 0; i < r.vector.length; i++) n2 += r.vector[i] * r.vector[i];
    this.invNorm[s] = n2 > 0 ? 1 / Math.sqrt(n2) : 0;
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

  /** Re-sort when the unsorted tail has grown past a sixteenth of the shard (amortised O(log n) per insert). */
  maybeSort(): void {
    const tail = this.size - this.sortedUpTo;
    if (tail > 64 && tail * 16 > this.size) this.sort();
  }

  /** Sort the live slots by URI into `order`. */
  sort(): void {
    const slots: number[] = [];
    for (let s = 0; s < this.size; s++) if (this.live[s]) slots.push(s);
    const uri = this.uri;
    slots.sort((a, b) => (uri[a] < uri[b] ? -1 : uri[a] > uri[b] ? 1 : 0));
    this.order = Int32Array.from(slots);
    this.sortedUpTo = this.size;
  }

  /** First index in `order` whose URI is ≥ `key`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.order.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.uri[this.order[mid]] < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Visit every live slot whose URI is under one of `prefixes` (path semantics), each once.
   * Sorted slots come from binary-searched ranges; tail slots are tested directly.
   */
  forEachUnder(prefixes: string[], fn: (slot: number) => void): void {
    const ranges: Array<[number, number]> = [];
    for (const raw of prefixes) {
      const p = raw.length > 'viking://'.length ? raw.replace(/\/+$/, '') : raw;
      if (p === 'viking://' || p === 'viking:/') {
        ranges.push([0, this.order.length]);
        continue;
      }
      // `p` itself, then the contiguous block `p/…` (that is, [p + '/', p + '0')).
      const at = this.lowerBound(p);
      if (at < this.order.length && this.uri[this.order[at]] === p) ranges.push([at, at + 1]);
      ranges.push([this.lowerBound(p + '/'), this.lowerBound(p + '0')]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    let pos = 0;
    for (const [lo, hi] of ranges) {
      for (let i = Math.max(lo, pos); i < hi; i++) {
        const s = this.order[i];
        if (this.live[s]) fn(s);
      }
      pos = Math.max(pos, hi);
    }
    for (let s = this.sortedUpTo; s < this.size; s++) {
      if (!this.live[s]) continue;
      const u = this.uri[s];
      for (const p of prefixes) {
        if (isUnderPrefix(u, p)) {
          fn(s);
          break;
        }
      }
    }
  }

  /** Dot product of slot's vector with `q` (length `dim`). */
  dot(slot: number, q: Float32Array): number {
    const v = this.chunks[slot >> CHUNK_BITS];
    const off = (slot & (CHUNK - 1)) * this.dim;
    const d = this.dim;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    let j = 0;
    // Four accumulators break the dependency chain so V8 can pipeline the multiplies.
    for (; j + 3 < d; j += 4) {
      a0 += v[off + j] * q[j];
      a1 += v[off + j + 1] * q[j + 1];
      a2 += v[off + j + 2] * q[j + 2];
      a3 += v[off + j + 3] * q[j + 3];
    }
    for (; j < d; j++) a0 += v[off + j] * q[j];
    return a0 + a1 + a2 + a3;
  }

  /** Copy of a slot's vector. */
  vector(slot: number): Float32Array {
    const off = (slot & (CHUNK - 1)) * this.dim;
    return this.chunks[slot >> CHUNK_BITS].slice(off, off + this.dim);
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

  constructor(readonly dim: number) {}

  /** Insert or replace a row (by id). */
  upsert(r: CacheRow): void {
    this.remove(r.id);
    let sh = this.shards.get(r.account);
    if (!sh) {
      sh = new Shard(this.dim);
      this.shards.set(r.account, sh);
    }
    this.where.set(r.id, { shard: sh, slot: sh.add(r, this.dict) });
  }

  /** Remove a row by id (no-op when absent). */
  remove(id: number): void {
    const w = this.where.get(id);
    if (!w) return;
    w.shard.kill(w.slot);
    this.where.delete(id);
  }

  /** Tombstones across shards (the adapter reloads from SQLite when they dominate). */
  get deadRows(): number {
    let n = 0;
    for (const s of this.shards.values()) n += s.dead;
    return n;
  }

  /** Live rows across shards. */
  get liveRows(): number {
    return this.where.size;
  }
}
