import type { EmbeddedDb } from './db';
import { blobVec, toCacheRow } from './rows';
import type { ScanCache } from './scan-cache';
import type { Statements } from './statements';
import { readVecChunks } from './vec-chunks';

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
export function syncCache(db: EmbeddedDb, st: Statements, c: ScanCache, memo: RowMemo, opts: SyncOptions = {}): SyncOutcome {
  return db.transaction((): SyncOutcome => {
    const pruned = Number((st.prunedThrough.get() as { value: string } | undefined)?.value ?? 0);
    if ((c.lastSeq === 0 && c.liveRows === 0) || c.lastSeq < pruned) {
      // First use, or this reader fell behind the pruned change log: load everything.
      c.clear();
      memo.clear();
      c.lastSeq = (st.maxSeq.get() as { s: number }).s;
      // The nodes first, in (account, uri) order, which is already each shard's sorted layout;
      // then the vectors into their rows' slots: from vec0's chunks where their layout is the
      // one known (`readVecChunks`: a statement over a few hundred rows, against about 10 µs a
      // row through the virtual table), else in one sequential scan of the table (a join would
      // cost a vec0 lookup per row). Nothing but the rows is held between the two reads.
      for (const r of st.allNodesSorted.iterate() as Iterable<Record<string, unknown>>) c.upsert(toCacheRow(r));
      const dim = c.dim;
      let filled = 0;
      const fill = (id: number, v: Float32Array): void => {
        if (c.setVector(id, v)) filled++;
      };
      const viaChunks =
        opts.chunks !== false &&
        readVecChunks(db, 'vi_vec', dim, ({ vectors, ids }) => {
          const all = vectorsOf(vectors);
          for (let i = 0; i < ids.length; i++) if (!Number.isNaN(ids[i]!)) fill(ids[i]!, all.subarray(i * dim, (i + 1) * dim));
        });
      if (!viaChunks) for (const [id, blob] of st.allVectors.iterate() as Iterable<[number, Buffer]>) fill(Number(id), vectorsOf(blob));
      // A node without a vector (writes store both in one transaction) stays out, as it always did.
      if (filled < c.where.size) {
        const withVector = new Set((db.prepare('SELECT rowid FROM vi_vec').raw().all() as Array<[number]>).map(([id]) => Number(id)));
        for (const id of [...c.where.keys()]) if (!withVector.has(id)) c.remove(id);
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

/** Options of {@link syncCache}. */
export interface SyncOptions {
  /** Read a full load's vectors from vec0's chunks where their layout is known (`readVecChunks`). @default true */
  chunks?: boolean;
}

/** What a sync did: reloaded every row, or replayed the changes of these row ids. */
export interface SyncOutcome {
  reloaded: boolean;
  /** Row ids written, rewritten or deleted since the last sync (empty after a reload). */
  changed: number[];
}

/** The float32 vectors in a blob: a view when it is 4-byte aligned, else a copy (`blobVec`). */
function vectorsOf(b: Uint8Array): Float32Array {
  return b.byteOffset % 4 === 0 ? new Float32Array(b.buffer, b.byteOffset, b.byteLength >> 2) : blobVec(b);
}
