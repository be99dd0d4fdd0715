import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { Index } from 'usearch';
import { type AnnBuild, type AnnBuilder, newAnnIndex } from './ann-build';

/** Options of the dense ANN leg ({@link DenseAnn}). */
export interface AnnOptions {
  /**
   * Smallest number of rows in a search's scope for which the ANN index answers instead of the
   * exact scan (an account below it has no index at all: no build, no memory). Measured on the
   * bench's `docs` profile at 509,367 rows (100,000 documents, 256 dimensions, the 2-core
   * machine), a dense-only store search cost 10.5 ms by the int8 scan and 11.6 ms from the
   * index at `expansionSearch` 2048 (limit 10; 13.2 and 19.3 ms at gather's 120 rows): the scan
   * grows with the rows, the HNSW search about with their logarithm (2.84 ms at 52,482 rows,
   * 8.16 at 509,367 for the 40 nearest), so at the recall asked of it the index pays from about
   * 600,000 rows on. Below it the exact scan costs no more, and is exact. @default 600000
   */
  minRows: number;
  /** Candidates the ANN index returns per wanted row (they are filtered by scope, then re-scored exactly). @default 4 */
  oversample: number;
  /**
   * HNSW `ef` at search time (the candidates asked for, when more). @default 2048 — the
   * smallest of 512, 1024 and 2048 that found ≥ 0.98 of the exact top 10 at 509,367 rows (the
   * `docs` profile at 100,000 documents, int8 vectors, 24 links; the 40 nearest re-scored
   * exactly, ties counted), chosen on queries 0–99: 0.949, 0.966, 0.989; on the held-out
   * queries 100–199 0.963, 0.971, 0.984. f16 with 32 links: 0.953, 0.981, 0.991 on queries 0–99.
   */
  expansionSearch: number;
  /**
   * HNSW links per node. @default 24 — with the built-in lexical embedder's hashed vectors (many
   * near-equal distances) 16 links found 0.94 of the exact top 10 (ties counted) on the `docs`
   * profile with half-precision vectors, 32 links with `expansionAdd` 256 found 0.988. With int8
   * vectors (`quantization`), chosen on queries 0–99 of the `docs` profile and reported on the
   * held-out queries 100–199 (the 40 nearest re-scored exactly, as a search does): at 52,482
   * rows 24 links found 0.994 and built in 8.5 s on both cores, 32 links 0.994 in 10.1 s, 16
   * links 0.987 in 7.1 s, f16 with 32 links 0.996 in 13.7 s; at 509,367 rows (`ef` 512, queries
   * 0–99) 24 links 0.949 in 343 s, 32 links 0.966 in 505 s, f16 with 32 links 0.953 in 625 s.
   */
  connectivity: number;
  /** HNSW `ef` at construction (see `connectivity`). @default 256 */
  expansionAdd: number;
  /**
   * Time one background build step may hold the event loop, ms: rows are added in small groups
   * until it is spent, then the step yields (searches run between steps). At least one group
   * is added per step. @default 20
   */
  addStepMs: number;
  /** Rows added per group within a step. @default 8 */
  addBatch: number;
  /**
   * Precision of the vectors the index keeps (candidates are re-scored exactly either way).
   * @default 'i8' — a quarter of float32's memory and half of f16's; on the held-out queries of
   * `connectivity` it built in 0.62× the time of f16 with 32 links, searched in 0.52× (0.72 ms
   * against 1.39 ms p50 for the 40 nearest), and found 0.994 of the exact top 10 against 0.996.
   */
  quantization: 'f32' | 'f16' | 'i8';
  /**
   * Queued rows from which the background build runs in a thread of its own, on every core at a
   * lower priority, when at least as many rows are queued as the index holds (a new account's
   * index, or one rebuilt): the whole index is built there, then swapped in. The small steps on
   * the search thread (`addStepMs`) add some 760 rows a second on one core and hold the
   * searches up while they run; the thread adds three times as many. Where the file is in memory
   * or the worker entry is not built, the steps build it. @default 4096
   */
  offThreadRows: number;
}

/** Default {@link AnnOptions}. */
export const DEFAULT_ANN_OPTIONS: Readonly<AnnOptions> = Object.freeze({
  minRows: 600_000,
  oversample: 4,
  expansionSearch: 2048,
  connectivity: 24,
  expansionAdd: 256,
  addStepMs: 20,
  addBatch: 8,
  quantization: 'i8',
  offThreadRows: 4096,
});

/** What the sidecar of a saved index records: the change-log sequence its rows are current to. */
interface AnnMeta {
  version: 1;
  dimension: number;
  connectivity: number;
  quantization: string;
  seq: number;
  count: number;
}

/** A vector source for the background builder: the row's unit vector, or null when it is gone. */
export type VectorOf = (id: number) => Float32Array | null;

/**
 * The approximate dense leg of one account: an HNSW index (`usearch`, prebuilt N-API binary,
 * cosine metric, int8 vectors by default) keyed by row id, persisted beside the SQLite file.
 *
 * Maintenance follows the scan cache: rows the change log reports changed are removed from the
 * index and queued; queued rows are added in the background in small steps. A search uses the
 * index only when the rows in its scope are many ({@link AnnOptions.minRows}); its candidates
 * are filtered by the search's scope and re-scored exactly from the scan cache's vectors, and
 * the queued rows (not in the index yet) are scanned exactly — so a write is searchable at
 * once, and a score is always the exact cosine. A search whose scope the candidates do not fill
 * falls back to the exact scan.
 *
 * The saved file (`<db>.ann-<account>.usearch` and a `.json` sidecar with the change-log
 * sequence it is current to) is loaded at the first search; the changes since are replayed. A
 * file whose sequence the change log no longer reaches is rebuilt.
 */
export class DenseAnn {
  private index: Index;
  /** Rows changed or new since the index was last current, to add. */
  readonly pending = new Set<number>();
  /** Rows in the index. */
  private readonly inIndex = new Set<number>();
  /** Change-log sequence the index plus `pending` are current to. */
  seq = 0;
  private building = false;
  private closed = false;
  /** The build running in a thread of its own, and the rows changed since it was asked for. */
  private away: { build: AnnBuild; changed: Set<number> } | null = null;

  /**
   * @param path file of the saved index (null: in memory only)
   * @param offThread builds an index of the given rows into a file off this thread (see
   *   {@link AnnOptions.offThreadRows}); null: every build runs here, in small steps
   */
  constructor(
    readonly dimension: number,
    private readonly path: string | null,
    readonly opts: AnnOptions = DEFAULT_ANN_OPTIONS,
    private offThread: ((ids: Int32Array, out: string) => AnnBuild) | null = null,
  ) {
    this.index = this.fresh();
  }

  private fresh(): Index {
    return newAnnIndex(this.dimension, this.opts);
  }

  /**
   * Load the saved index when there is one current to a change-log sequence ≥ `prunedThrough`
   * (the caller then replays the changes since {@link seq}). @returns whether one was loaded
   */
  load(prunedThrough: number, ids: Iterable<number>): boolean {
    if (!this.path || !existsSync(this.path) || !existsSync(this.path + '.json')) return false;
    try {
      const meta = JSON.parse(readFileSync(this.path + '.json', 'utf8')) as AnnMeta;
      if (meta.version !== 1 || meta.dimension !== this.dimension || meta.connectivity !== this.opts.connectivity || meta.quantization !== this.opts.quantization || meta.seq < prunedThrough) return false;
      const index = this.fresh();
      index.load(this.path);
      if (index.size() !== meta.count) return false;
      this.index = index;
      this.seq = meta.seq;
      // The saved rows are those the file holds; which ids they are is what the caller knows.
      for (const id of ids) if (index.contains(BigInt(id))) this.inIndex.add(id);
      return true;
    } catch {
      return false;
    }
  }

  /** Rows in the index (queued ones not counted). */
  get size(): number {
    return this.inIndex.size;
  }

  /** A row changed (written, rewritten or deleted): out of the index, and queued when it still exists. */
  changed(id: number, exists: boolean): void {
    this.away?.changed.add(id);
    if (this.inIndex.delete(id)) this.index.remove(BigInt(id));
    if (exists) this.pending.add(id);
    else this.pending.delete(id);
  }

  /** Forget everything (the scan cache reloads). */
  reset(): void {
    this.index = this.fresh();
    this.inIndex.clear();
    this.pending.clear();
    this.seq = 0;
  }

  /**
   * Nearest rows by cosine (approximate), best first.
   * @param unitQuery a unit-length query vector
   */
  search(unitQuery: Float32Array, k: number): number[] {
    if (this.inIndex.size === 0 || !(k > 0)) return [];
    const m = this.index.search(unitQuery, Math.min(k, this.index.size()), 1);
    return Array.from(m.keys, (key) => Number(key));
  }

  /**
   * Add queued rows in the background, in steps of at most `addStepMs` (one step per event-loop
   * turn, so searches interleave), and save the index when the queue drains. Does nothing while
   * a build runs.
   * @param vectorOf the current unit vector of a row (null: gone)
   * @param seqNow the change-log sequence the queue is current to
   */
  drain(vectorOf: VectorOf, seqNow: () => number): void {
    if (this.building || this.closed || this.pending.size === 0) return;
    this.building = true;
    if (this.offThread && this.path && this.pending.size >= this.opts.offThreadRows && this.pending.size >= this.inIndex.size) {
      this.buildAway(this.offThread, this.path, vectorOf, seqNow);
      return;
    }
    const addGroup = (): void => {
      const ids: number[] = [];
      const vecs: Float32Array[] = [];
      for (const id of this.pending) {
        this.pending.delete(id);
        const v = vectorOf(id);
        if (!v) continue;
        ids.push(id);
        vecs.push(v);
        if (ids.length >= this.opts.addBatch) break;
      }
      if (ids.length === 0) return;
      const flat = new Float32Array(ids.length * this.dimension);
      vecs.forEach((v, i) => flat.set(v, i * this.dimension));
      this.index.add(BigUint64Array.from(ids, (id) => BigInt(id)), flat, 1);
      for (const id of ids) this.inIndex.add(id);
    };
    const step = (): void => {
      if (this.closed) {
        this.building = false;
        return;
      }
      const until = performance.now() + this.opts.addStepMs;
      do addGroup();
      while (this.pending.size > 0 && performance.now() < until);
      if (this.pending.size > 0) {
        setImmediate(step);
        return;
      }
      this.building = false;
      this.save(seqNow());
    };
    setImmediate(step);
  }

  /**
   * Build the whole index (the rows in it and the queued ones) in a thread of its own, then swap
   * it in. Meanwhile the old index stays as it was kept (searches scan while so many rows are
   * queued), and every row changed since the build was asked for is noted: after the swap it is
   * taken out of the new index (its vector there may be stale) and stays queued when it exists.
   * A build that fails leaves the rows queued, and the small steps here build them.
   */
  private buildAway(offThread: (ids: Int32Array, out: string) => AnnBuild, path: string, vectorOf: VectorOf, seqNow: () => number): void {
    const ids = Int32Array.from(new Set([...this.inIndex, ...this.pending]));
    const out = `${path}.build-${process.pid}`;
    const build = offThread(ids, out);
    const away = { build, changed: new Set<number>() };
    this.away = away;
    const settle = (): void => {
      this.away = null;
      this.building = false;
    };
    const fallBack = (): void => {
      // Built here instead, in small steps, from now on.
      this.offThread = null;
      this.drain(vectorOf, seqNow);
    };
    build.done.then(
      (added) => {
        settle();
        if (this.closed) {
          rmSync(out, { force: true });
          return;
        }
        const index = this.fresh();
        try {
          index.load(out);
        } catch {
          fallBack();
          return;
        } finally {
          rmSync(out, { force: true });
        }
        this.index = index;
        this.inIndex.clear();
        for (const id of added) {
          if (away.changed.has(id)) {
            index.remove(BigInt(id));
            continue;
          }
          this.inIndex.add(id);
          this.pending.delete(id);
        }
        if (this.pending.size > 0) this.drain(vectorOf, seqNow);
        else this.save(seqNow());
      },
      () => {
        settle();
        fallBack();
      },
    );
  }

  /**
   * Add every queued row now, in chunks of `chunk` rows on `threads` native threads (the
   * explicit build before serving: `prepareDense`), yielding to the event loop between chunks;
   * then save. The background {@link drain} adds a few rows per step on one thread, so that
   * searches interleave; a search meanwhile scans while many rows are queued.
   * @param threads native threads for usearch's add @default the machine's parallelism
   */
  async buildNow(vectorOf: VectorOf, seqNow: () => number, threads = availableParallelism(), chunk = 2048): Promise<void> {
    // A build in a thread of its own holds every queued row already: it is waited for.
    while (this.away && !this.closed) await new Promise((r) => setTimeout(r, 50));
    while (!this.closed && this.pending.size > 0) {
      const ids: number[] = [];
      const flat = new Float32Array(Math.min(chunk, this.pending.size) * this.dimension);
      for (const id of this.pending) {
        if (ids.length >= chunk) break;
        this.pending.delete(id);
        const v = vectorOf(id);
        if (!v) continue;
        flat.set(v, ids.length * this.dimension);
        ids.push(id);
      }
      if (ids.length > 0) {
        this.index.add(BigUint64Array.from(ids, (id) => BigInt(id)), flat.subarray(0, ids.length * this.dimension), Math.max(1, threads));
        for (const id of ids) this.inIndex.add(id);
      }
      await new Promise((r) => setImmediate(r));
    }
    if (!this.closed && !this.building) this.save(seqNow());
  }

  /** Write the index and its sidecar (atomically: a temporary file, then a rename). */
  save(seq: number): void {
    this.seq = seq;
    if (!this.path || this.pending.size > 0) return;
    try {
      const tmp = `${this.path}.tmp-${process.pid}`;
      this.index.save(tmp);
      renameSync(tmp, this.path);
      const meta: AnnMeta = { version: 1, dimension: this.dimension, connectivity: this.opts.connectivity, quantization: this.opts.quantization, seq, count: this.index.size() };
      writeFileSync(`${this.path}.json.tmp`, JSON.stringify(meta));
      renameSync(`${this.path}.json.tmp`, `${this.path}.json`);
    } catch {
      // A failed save only costs a rebuild at the next start.
      rmSync(`${this.path}.json`, { force: true });
    }
  }

  /** Stop background work (the index stays usable). */
  close(): void {
    this.closed = true;
    this.away?.build.cancel();
  }

  /** Resolves once nothing is queued and no build step runs (or the index is closed). */
  async idle(): Promise<void> {
    while (!this.closed && (this.building || this.pending.size > 0)) await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rows, change log and vectors the {@link AnnSet} keeps its indexes current with. */
export interface AnnSource {
  /** Shards by account. */
  shards: ReadonlyMap<string, { account: string; liveCount: number; size: number; ids: Int32Array; live: Uint8Array }>;
  /** Where a live row is. */
  where: ReadonlyMap<number, { shard: { account: string }; slot: number }>;
  /** The change-log sequence the rows are current to. */
  lastSeq(): number;
  /** The change log's pruned-through sequence. */
  prunedThrough(): number;
  /** Row ids changed since a sequence. */
  changedSince(seq: number): number[];
  /** A live row's unit vector. */
  vectorOf(id: number): Float32Array | null;
}

/**
 * One {@link DenseAnn} per account large enough for it, created at the first search of that
 * account (loading its saved index, or building one in the background), kept current by the
 * scan cache's syncs.
 */
export class AnnSet {
  private readonly anns = new Map<string, DenseAnn>();
  /** Accounts below `minRows` whose saved files were looked for (see {@link of}). */
  private readonly swept = new Set<string>();

  /** @param basePath the SQLite file's path (null: nothing persisted) */
  constructor(
    private readonly dimension: number,
    private readonly basePath: string | null,
    private readonly src: AnnSource,
    readonly opts: AnnOptions = DEFAULT_ANN_OPTIONS,
    private readonly builder: AnnBuilder | null = null,
  ) {}

  /** The index of an account, when it has at least `minRows` rows (created on first call). */
  of(account: string): DenseAnn | null {
    const shard = this.src.shards.get(account);
    if (!shard) return null;
    if (shard.liveCount < this.opts.minRows) {
      // A file saved when the account was larger, or under a lower threshold (before 600,000
      // rows it was 100,000), is never loaded while the account stays this small: it is removed
      // once, at the account's first search, rather than left on disk (about 250 MB at 500k rows).
      if (!this.swept.has(account)) {
        this.swept.add(account);
        const path = this.pathOf(account);
        if (path) for (const f of [path, `${path}.json`]) rmSync(f, { force: true });
      }
      return null;
    }
    let ann = this.anns.get(account);
    if (ann) return ann;
    const path = this.pathOf(account);
    const { builder, basePath, dimension } = this;
    ann = new DenseAnn(dimension, path, this.opts, builder && basePath ? (ids, out) => builder({ dbPath: basePath, out, dimension, params: this.opts, ids }) : null);
    const live: number[] = [];
    for (let s = 0; s < shard.size; s++) if (shard.live[s]) live.push(shard.ids[s]!);
    if (ann.load(this.src.prunedThrough(), live)) {
      // Replay what changed since the file was saved.
      for (const id of this.src.changedSince(ann.seq)) ann.changed(id, this.src.where.get(id)?.shard.account === account);
    } else {
      for (const id of live) ann.pending.add(id);
    }
    this.anns.set(account, ann);
    ann.drain((id) => this.src.vectorOf(id), () => this.src.lastSeq());
    return ann;
  }

  /** The saved index of an account (null: nothing persisted). */
  private pathOf(account: string): string | null {
    return this.basePath ? `${this.basePath}.ann-${Buffer.from(account, 'utf8').toString('hex')}.usearch` : null;
  }

  /** After a sync: the rows it replayed changed; after a reload every index starts over. */
  synced(reloaded: boolean, changed: readonly number[]): void {
    if (reloaded) {
      for (const a of this.anns.values()) a.close();
      this.anns.clear();
      return;
    }
    if (changed.length === 0) return;
    for (const [account, ann] of this.anns) {
      for (const id of changed) ann.changed(id, this.src.where.get(id)?.shard.account === account);
      ann.drain((id) => this.src.vectorOf(id), () => this.src.lastSeq());
    }
  }

  /** Rows queued for the indexes that exist (accounts below `minRows` have none and queue nothing). */
  pendingRows(): number {
    let n = 0;
    for (const a of this.anns.values()) n += a.pending.size;
    return n;
  }

  /**
   * Create the index of every account large enough and build it now on every core
   * ({@link DenseAnn.buildNow}); resolve once they are all built.
   */
  async prepare(): Promise<void> {
    const anns = [...this.src.shards.keys()].map((a) => this.of(a)).filter((a): a is DenseAnn => a !== null);
    for (const a of anns) await a.buildNow((id) => this.src.vectorOf(id), () => this.src.lastSeq());
    await Promise.all(anns.map((a) => a.idle()));
  }

  /** Stop background work. */
  close(): void {
    for (const a of this.anns.values()) a.close();
    this.anns.clear();
  }
}
