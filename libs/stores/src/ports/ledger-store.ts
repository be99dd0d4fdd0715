/**
 * LedgerStore port: the per-session recall ledger (context-contract §7). Adapters: Redis
 * (one hash per session with a TTL; atomic Lua updates) and the embedded SQLite file.
 */

/** A stored record as read (possibly malformed: coerced by the caller). */
export type RawLedgerRecord = unknown;

/** Snapshot returned when a turn begins. */
export interface LedgerTurn {
  /** The clock of this request (number of earlier context requests of the session). */
  turn: number;
  /** True when the session had no ledger before this call. */
  fresh: boolean;
  /** Stored records by node URI, raw (to be coerced by the domain). */
  records: Record<string, RawLedgerRecord>;
}

/** Key of a ledger: one per account, user and session. */
export interface LedgerKey {
  /** Account. */
  account: string;
  /** User. */
  user: string;
  /** Session id. */
  sessionId: string;
}

/** The port. */
export interface LedgerStore {
  /** Atomically read the records and advance the clock by one; returns the pre-increment clock. */
  beginTurn(key: LedgerKey): Promise<LedgerTurn>;
  /**
   * Atomically upsert `{turn, detail}` for each URI and evict: keep usable records with
   * `turn − 4·dedupTurns ≤ record.turn ≤ turn`, then at most `maxEntries` by highest turn.
   */
  record(
    key: LedgerKey,
    turn: number,
    dedupTurns: number,
    entries: Array<{ uri: string; detail: string }>,
    maxEntries: number,
  ): Promise<void>;
  /** Raw access for tests and repair: write one raw field. */
  putRaw(key: LedgerKey, uri: string, raw: string): Promise<void>;
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
