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
      const vectors = new Map<number, Buffer>();
      for (const [id, blob] of st.allVectors.iterate() as Iterable<[number, Buffer]>) vectors.set(Number(id), blob);
      for (const r of st.allNodesSorted.iterate() as Iterable<Record<string, unknown>>) {
        const blob = vectors.get(r.id as number);
        if (blob) c.upsert(toCacheRow({ ...r, embedding: blob }));
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
