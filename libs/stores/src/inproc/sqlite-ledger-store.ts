import type Database from 'better-sqlite3';
import {
  DEFAULT_LEDGER_TTL_MS,
  encodeLedgerRecord,
  parseLedgerRecord,
  type LedgerEntry,
  type LedgerKey,
  type LedgerStore,
  type LedgerTurn,
} from '../ports/ledger-store';

/** Options of {@link SqliteLedgerStore}. */
export interface SqliteLedgerStoreOptions {
  /**
   * Idle lifetime of a ledger in ms: every beginTurn/record/putRaw pushes the expiry this far
   * into the future, like the Redis adapter's key TTL.
   * @default 604800000 (7 days)
   */
  ttlMs?: number;
  /** Clock in ms since epoch (tests). @default Date.now */
  now?: () => number;
  /**
   * Sweep every expired ledger once per this many beginTurn calls, so abandoned sessions do not
   * accumulate. 0 disables the automatic sweep ({@link SqliteLedgerStore.purgeExpired} still works).
   * @default 256
   */
  sweepEvery?: number;
}

interface SessionRow {
  clock: number;
  expires_at: number;
  next_ord: number;
}

interface RecordRow {
  uri: string;
  raw: string;
  ord: number;
}

/**
 * Which stored records survive a write (context-contract §7 eviction): usable records with
 * `lo ≤ turn ≤ hi`, then the `max` with the highest turn, ties kept in write order (`ord`).
 * @returns URIs to delete
 */
export function ledgerEvictions(rows: RecordRow[], lo: number, hi: number, max: number): string[] {
  const doomed: string[] = [];
  const keep: Array<{ uri: string; turn: number; ord: number }> = [];
  for (const row of rows) {
    const rec = parseLedgerRecord(row.raw);
    if (rec === null || rec.turn < lo || rec.turn > hi) doomed.push(row.uri);
    else keep.push({ uri: row.uri, turn: rec.turn, ord: row.ord });
  }
  if (keep.length > max) {
    // Total order (turn desc, first written first, then URI) so both adapters agree exactly.
    keep.sort((a, b) => b.turn - a.turn || a.ord - b.ord || (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
    for (const k of keep.slice(Math.max(0, max))) doomed.push(k.uri);
  }
  return doomed;
}

/**
 * LedgerStore on the embedded SQLite file (`better-sqlite3`). Every operation is one
 * IMMEDIATE transaction, so it is atomic against other connections to the same file as well as
 * within the process (better-sqlite3 is synchronous). Tables: `ledger_session` (clock, expiry,
 * write-order counter) and `ledger_record` (one row per URI, raw JSON text).
 */
export class SqliteLedgerStore implements LedgerStore {
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly sweepEvery: number;
  private begins = 0;
  private readonly stmts: ReturnType<SqliteLedgerStore['prepare']>;
  private readonly beginTx: (key: LedgerKey) => LedgerTurn;
  private readonly recordTx: (key: LedgerKey, turn: number, lo: number, entries: LedgerEntry[], max: number) => void;
  private readonly putRawTx: (key: LedgerKey, uri: string, raw: string) => void;

  /**
   * @param db an open handle (e.g. from `openEmbeddedDb`, or `new Database(':memory:')` in
   *   tests); the caller owns it, {@link close} leaves it open
   */
  constructor(
    private readonly db: Database.Database,
    opts: SqliteLedgerStoreOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? DEFAULT_LEDGER_TTL_MS;
    this.now = opts.now ?? Date.now;
    this.sweepEvery = opts.sweepEvery ?? 256;
    db.exec(`
      CREATE TABLE IF NOT EXISTS ledger_session (
        account TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL,
        clock INTEGER NOT NULL, expires_at INTEGER NOT NULL, next_ord INTEGER NOT NULL,
        PRIMARY KEY (account, user, session)
      ) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS ledger_session_expiry ON ledger_session (expires_at);
      CREATE TABLE IF NOT EXISTS ledger_record (
        account TEXT NOT NULL, user TEXT NOT NULL, session TEXT NOT NULL,
        uri TEXT NOT NULL, raw TEXT NOT NULL, ord INTEGER NOT NULL,
        PRIMARY KEY (account, user, session, uri)
      ) WITHOUT ROWID;
    `);
    this.stmts = this.prepare();
    this.beginTx = db.transaction((key: LedgerKey) => this.beginSync(key)).immediate;
    this.recordTx = db.transaction((key: LedgerKey, turn: number, lo: number, entries: LedgerEntry[], max: number) =>
      this.recordSync(key, turn, lo, entries, max),
    ).immediate;
    this.putRawTx = db.transaction((key: LedgerKey, uri: string, raw: string) => this.putRawSync(key, uri, raw)).immediate;
  }

  private prepare() {
    const db = this.db;
    const k = 'account = ? AND user = ? AND session = ?';
    return {
      getSession: db.prepare<[string, string, string], SessionRow>(`SELECT clock, expires_at, next_ord FROM ledger_session WHERE ${k}`),
      putSession: db.prepare<[string, string, string, number, number, number]>(
        `INSERT INTO ledger_session (account, user, session, clock, expires_at, next_ord) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account, user, session) DO UPDATE SET clock = excluded.clock, expires_at = excluded.expires_at, next_ord = excluded.next_ord`,
      ),
      dropSession: db.prepare<[string, string, string]>(`DELETE FROM ledger_session WHERE ${k}`),
      dropRecords: db.prepare<[string, string, string]>(`DELETE FROM ledger_record WHERE ${k}`),
      records: db.prepare<[string, string, string], RecordRow>(`SELECT uri, raw, ord FROM ledger_record WHERE ${k} ORDER BY ord`),
      getOrd: db.prepare<[string, string, string, string], { ord: number }>(`SELECT ord FROM ledger_record WHERE ${k} AND uri = ?`),
      putRecord: db.prepare<[string, string, string, string, string, number]>(
        `INSERT INTO ledger_record (account, user, session, uri, raw, ord) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (account, user, session, uri) DO UPDATE SET raw = excluded.raw`,
      ),
      dropRecord: db.prepare<[string, string, string, string]>(`DELETE FROM ledger_record WHERE ${k} AND uri = ?`),
      sweepRecords: db.prepare<[number]>(
        `DELETE FROM ledger_record WHERE (account, user, session) IN
           (SELECT account, user, session FROM ledger_session WHERE expires_at <= ?)`,
      ),
      sweepSessions: db.prepare<[number]>(`DELETE FROM ledger_session WHERE expires_at <= ?`),
    };
  }

  /** Load the live session row, dropping an expired ledger first (it counts as missing). */
  private live(key: LedgerKey, now: number): SessionRow | undefined {
    const args = [key.account, key.user, key.sessionId] as const;
    const row = this.stmts.getSession.get(...args);
    if (row !== undefined && row.expires_at <= now) {
      this.stmts.dropRecords.run(...args);
      this.stmts.dropSession.run(...args);
      return undefined;
    }
    return row;
  }

  private beginSync(key: LedgerKey): LedgerTurn {
    const now = this.now();
    const args = [key.account, key.user, key.sessionId] as const;
    const row = this.live(key, now);
    const records: Record<string, string> = Object.create(null) as Record<string, string>;
    if (row !== undefined) for (const r of this.stmts.records.all(...args)) records[r.uri] = r.raw;
    const clock = row?.clock ?? 0;
    this.stmts.putSession.run(...args, clock + 1, now + this.ttlMs, row?.next_ord ?? 0);
    return { turn: clock, fresh: row === undefined, records };
  }

  private recordSync(key: LedgerKey, turn: number, lo: number, entries: LedgerEntry[], max: number): void {
    const now = this.now();
    const args = [key.account, key.user, key.sessionId] as const;
    const row = this.live(key, now);
    const clock = row?.clock ?? 0;
    let nextOrd = row?.next_ord ?? 0;
    for (const e of entries) {
      const existing = this.stmts.getOrd.get(...args, e.uri);
      // An upsert keeps the record's original write position, like a JSON object's key order.
      this.stmts.putRecord.run(...args, e.uri, encodeLedgerRecord(turn, e.detail), existing?.ord ?? nextOrd++);
    }
    const head = Math.max(turn, clock - 1);
    for (const uri of ledgerEvictions(this.stmts.records.all(...args), lo, head, max)) this.stmts.dropRecord.run(...args, uri);
    this.stmts.putSession.run(...args, Math.max(clock, turn + 1), now + this.ttlMs, nextOrd);
  }

  private putRawSync(key: LedgerKey, uri: string, raw: string): void {
    const now = this.now();
    const args = [key.account, key.user, key.sessionId] as const;
    const row = this.live(key, now);
    let nextOrd = row?.next_ord ?? 0;
    const existing = this.stmts.getOrd.get(...args, uri);
    this.stmts.putRecord.run(...args, uri, raw, existing?.ord ?? nextOrd++);
    this.stmts.putSession.run(...args, row?.clock ?? 0, now + this.ttlMs, nextOrd);
  }

  /** {@inheritDoc LedgerStore.beginTurn} */
  async beginTurn(key: LedgerKey): Promise<LedgerTurn> {
    const turn = this.beginTx(key);
    if (this.sweepEvery > 0 && ++this.begins % this.sweepEvery === 0) this.purgeExpired();
    return turn;
  }

  /** {@inheritDoc LedgerStore.record} */
  async record(key: LedgerKey, turn: number, dedupTurns: number, entries: LedgerEntry[], maxEntries: number): Promise<void> {
    this.recordTx(key, turn, turn - 4 * dedupTurns, entries, maxEntries);
  }

  /** {@inheritDoc LedgerStore.putRaw} */
  async putRaw(key: LedgerKey, uri: string, raw: string): Promise<void> {
    this.putRawTx(key, uri, raw);
  }

  /**
   * Delete every expired ledger now.
   * @returns number of ledgers removed
   */
  purgeExpired(): number {
    const now = this.now();
    return this.db.transaction(() => {
      this.stmts.sweepRecords.run(now);
      return this.stmts.sweepSessions.run(now).changes;
    }).immediate();
  }

  /** {@inheritDoc LedgerStore.ping} */
  async ping(): Promise<boolean> {
    try {
      this.db.prepare('SELECT 1').get();
      return true;
    } catch {
      return false;
    }
  }

  /** Nothing to release: the database handle belongs to the caller. */
  async close(): Promise<void> {}
}
