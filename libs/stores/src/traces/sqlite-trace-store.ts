/**
 * TraceStore on the embedded SQLite file (the `npm start` default): one table, rows older
 * than the retention are invisible at once and deleted in small batches as new rows arrive.
 */
import type Database from 'better-sqlite3';
import type { EmbeddedDb } from '../embedded/db';
import { checkTraceId, DEFAULT_TRACE_MAX_AGE_MS, type TraceRow, type TraceStore } from './trace-store';

/** Options of {@link SqliteTraceStore}. */
export interface SqliteTraceStoreOptions {
  /** Rows older than this are neither returned nor kept, ms. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /** Clock, ms since the epoch (tests). @default Date.now */
  now?: () => number;
  /** Expired rows are deleted once every this many appends. @default 200 */
  pruneEvery?: number;
}

/**
 * TraceStore over a shared embedded handle (`openEmbeddedDb`). The caller owns the handle;
 * {@link close} only stops using it.
 */
export class SqliteTraceStore implements TraceStore {
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  private readonly pruneEvery: number;
  private appends = 0;
  private closed = false;
  private readonly st: Record<'insert' | 'byId' | 'prune', Database.Statement<unknown[]>>;

  constructor(
    private readonly db: EmbeddedDb,
    opts: SqliteTraceStoreOptions = {},
  ) {
    this.maxAgeMs = Math.max(1, opts.maxAgeMs ?? DEFAULT_TRACE_MAX_AGE_MS);
    this.now = opts.now ?? Date.now;
    this.pruneEvery = Math.max(1, Math.floor(opts.pruneEvery ?? 200));
    db.exec(`CREATE TABLE IF NOT EXISTS trace_rows (
      id TEXT PRIMARY KEY,
      account TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      data TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS trace_rows_created ON trace_rows(created_at);`);
    this.st = {
      // A repeated id keeps the first row: a request writes its trace once.
      insert: db.prepare('INSERT OR IGNORE INTO trace_rows(id, account, created_at, data) VALUES (?, ?, ?, ?)'),
      byId: db.prepare('SELECT id, account, created_at, data FROM trace_rows WHERE id = ? AND account = ? AND created_at >= ?'),
      // Bounded batches keep one append from stalling on a large backlog.
      prune: db.prepare('DELETE FROM trace_rows WHERE id IN (SELECT id FROM trace_rows WHERE created_at < ? LIMIT 1000)'),
    };
  }

  /** {@inheritDoc TraceStore.append} */
  async append(row: TraceRow): Promise<void> {
    this.assertOpen();
    checkTraceId(row.id);
    this.st.insert.run(row.id, row.account, Math.floor(row.createdAt), JSON.stringify(row.data));
    if (++this.appends % this.pruneEvery === 0) this.st.prune.run(this.now() - this.maxAgeMs);
  }

  /** {@inheritDoc TraceStore.get} */
  async get(id: string, account: string): Promise<TraceRow | null> {
    this.assertOpen();
    checkTraceId(id);
    const r = this.st.byId.get(id, account, this.now() - this.maxAgeMs) as { id: string; account: string; created_at: number; data: string } | undefined;
    if (!r) return null;
    return { id: r.id, account: r.account, createdAt: r.created_at, data: JSON.parse(r.data) as Record<string, unknown> };
  }

  /** {@inheritDoc TraceStore.ping} */
  async ping(): Promise<boolean> {
    if (this.closed || !this.db.open) return false;
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  /** {@inheritDoc TraceStore.close} */
  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('SqliteTraceStore is closed');
  }
}
