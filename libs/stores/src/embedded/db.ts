import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';

/** An open better-sqlite3 handle, shared by every embedded adapter (vector index, ledger, sessions). */
export type EmbeddedDb = Database.Database;

/** Options for {@link openEmbeddedDb}. */
export interface OpenEmbeddedDbOptions {
  /**
   * Page-cache size in KiB (SQLite `cache_size` with a negative value).
   * @default 65536 (64 MiB) — large enough to keep a 100k-node index's hot pages resident.
   */
  cacheKiB?: number;
  /**
   * Memory-mapped I/O size in bytes (`mmap_size`); 0 disables it. Mapped pages count in the
   * process's resident set, once per connection that touched them, and the mesh holds two
   * connections (the main thread's and the search thread's): with 256 MiB each, `npm start` on
   * the bench's `docs` profile after 300 context requests and load windows held 1,228 MiB
   * resident against 869 MiB without (10,000 documents), and 1,756 against 1,513 MiB at
   * 100,000 (after 300 requests). The cost, paired on one host, was a 1.028× median context
   * latency at 10,000 documents and the same requests/s at concurrency 16: reads go through
   * the page cache (`cacheKiB`) and the operating system's.
   * @default 0
   */
  mmapBytes?: number;
  /**
   * Milliseconds a writer waits on a locked database before failing with SQLITE_BUSY.
   * @default 5000
   */
  busyTimeoutMs?: number;
}

/**
 * Open (or create) the embedded ctxmesh SQLite file with `sqlite-vec` loaded and pragmas tuned
 * for a read-mostly, single-process store:
 * - `journal_mode=WAL` (readers never block the writer; ignored for `:memory:`),
 * - `synchronous=NORMAL` (durable across process crashes; a power loss may drop the last commits),
 * - `foreign_keys=ON`, `temp_store=MEMORY`, a large page cache and no mmap (see `mmapBytes`).
 *
 * Each adapter sharing the handle creates its own tables (`CREATE TABLE IF NOT EXISTS`).
 * @param path file path, or `':memory:'` for a private in-memory database (tests)
 * @returns the open handle; the caller owns it and closes it with `db.close()`
 */
export function openEmbeddedDb(path: string, opts: OpenEmbeddedDbOptions = {}): EmbeddedDb {
  const db = new Database(path, { timeout: opts.busyTimeoutMs ?? 5000 });
  try {
    sqliteVec.load(db);
    if (path !== ':memory:' && path !== '') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma('temp_store = MEMORY');
    db.pragma(`cache_size = ${-Math.max(1024, Math.floor(opts.cacheKiB ?? 65536))}`);
    db.pragma(`mmap_size = ${Math.max(0, Math.floor(opts.mmapBytes ?? 0))}`);
  } catch (err) {
    db.close();
    throw err;
  }
  return db;
}

/** sqlite-vec version string of an open handle (e.g. "v0.1.9"); proves the extension is loaded. */
export function vecVersion(db: EmbeddedDb): string {
  return (db.prepare('select vec_version() as v').get() as { v: string }).v;
}
