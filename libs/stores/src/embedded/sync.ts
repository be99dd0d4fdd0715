import type { EmbeddedDb } from './db';
import { toCacheRow } from './rows';
import type { ScanCache } from './scan-cache';
import type { Statements } from './statements';

/** What else a reader keeps per row id, told when rows change under it. */
export interface RowMemo {
  /** Forget everything (the cache was reloaded). */
  clear(): void;
  /** Forget these row ids (changed or deleted). */
  forget(ids: readonly number[]): void;
}

/**
 * Bring the scan cache up to the last committed write of any connection (a consistent snapshot,
 * one read transaction): replay `vi_changes` since the cache's last sequence number, or reload
 * every row when this reader is new or fell behind the pruned change log.
 */
export function syncCache(db: EmbeddedDb, st: Statements, c: ScanCache, memo: RowMemo): SyncOutcome {
  return db.transaction((): SyncOutcome => {
    const pruned = Number((st.prunedThrough.get() as { value: string } | undefined)?.value ?? 0);
    if ((c.lastSeq === 0 && c.liveRows === 0) || c.lastSeq < pruned) {
      // First use, or this reader fell behind the pruned change log: load everything.
      c.clear();
      memo.clear();
      c.lastSeq = (st.maxSeq.get() as { s: number }).s;
      // vec0 is read in one sequential scan (a join would cost a vec0 lookup per row), and the
      // nodes in (account, uri) order, which is already each shard's sorted layout.
      // The blobs are packed together until the nodes are read: held as half a million separate
      // buffers they left their size in freed but unreturned heap after the load (about 420 MB
      // of resident memory at 509,367 rows); packed memory is given back as soon as it is read.
      const packed = new PackedBlobs();
      try {
        for (const [id, blob] of st.allVectors.iterate() as Iterable<[number, Buffer]>) packed.add(Number(id), blob);
        for (const r of st.allNodesSorted.iterate() as Iterable<Record<string, unknown>>) {
          const blob = packed.get(r.id as number);
          if (blob) c.upsert(toCacheRow({ ...r, embedding: blob }));
        }
      } finally {
        packed.release();
      }
      c.adoptLoadOrder();
      return { reloaded: true, changed: [] };
    }
    const changes = st.changesSince.all(c.lastSeq) as Array<{ seq: number; node_id: number }>;
    if (changes.length === 0) return { reloaded: false, changed: [] };
    const ids = [...new Set(changes.map((ch) => ch.node_id))];
    for (const id of ids) c.remove(id);
    // SQLite may hand a deleted row's id to the next insert, so a changed id's bag is stale.
    memo.forget(ids);
    for (const r of st.cacheRowsByIds.all(JSON.stringify(ids)) as Array<Record<string, unknown>>) c.upsert(toCacheRow(r));
    c.lastSeq = changes[changes.length - 1].seq;
    c.reorganize();
    return { reloaded: false, changed: ids };
  })();
}

/** What a sync did: reloaded every row, or replayed the changes of these row ids. */
export interface SyncOutcome {
  reloaded: boolean;
  /** Row ids written, rewritten or deleted since the last sync (empty after a reload). */
  changed: number[];
}

/** An ArrayBuffer that grows in place and gives its memory back when shrunk (ES2024; Node 20 has it). */
interface ResizableBuffer extends ArrayBuffer {
  resize(byteLength: number): void;
}
const Resizable = ArrayBuffer as unknown as new (byteLength: number, opts: { maxByteLength: number }) => ResizableBuffer;

/** Largest chunk of {@link PackedBlobs}, bytes (V8 refuses a larger maximum). */
const CHUNK_MAX = 2 ** 30;

/**
 * Blobs by row id, packed back to back into resizable buffers of up to 1 GiB that grow in place
 * and are given back to the system at once by {@link release} (see {@link syncCache}).
 */
export class PackedBlobs {
  private readonly chunks: Array<{ buf: ResizableBuffer; used: number }> = [];
  private readonly at = new Map<number, { chunk: number; offset: number; length: number }>();

  add(id: number, blob: Uint8Array): void {
    let c = this.chunks[this.chunks.length - 1];
    if (!c || c.used + blob.length > CHUNK_MAX) {
      c = { buf: new Resizable(0, { maxByteLength: Math.max(CHUNK_MAX, blob.length) }), used: 0 };
      this.chunks.push(c);
    }
    if (c.used + blob.length > c.buf.byteLength) c.buf.resize(Math.min(Math.max(CHUNK_MAX, blob.length), Math.max(1 << 16, 2 * c.buf.byteLength, c.used + blob.length)));
    new Uint8Array(c.buf, c.used, blob.length).set(blob);
    this.at.set(id, { chunk: this.chunks.length - 1, offset: c.used, length: blob.length });
    c.used += blob.length;
  }

  /** The blob of `id` (a view into the packed memory, valid until {@link release}), or undefined. */
  get(id: number): Buffer | undefined {
    const a = this.at.get(id);
    return a ? Buffer.from(this.chunks[a.chunk]!.buf, a.offset, a.length) : undefined;
  }

  /** Give the memory back now (not at the next full collection) and forget every blob. */
  release(): void {
    for (const c of this.chunks) c.buf.resize(0);
    this.chunks.length = 0;
    this.at.clear();
  }
}
