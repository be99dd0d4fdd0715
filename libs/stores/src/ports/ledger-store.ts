/**
 * LedgerStore port: the per-session recall ledger (context-contract §7). Adapters: Redis
 * (one hash per session with a TTL; atomic Lua updates) and the embedded SQLite file.
 *
 * The record-coercion rule lives here, next to the port, because two sides must agree on it:
 * the ledger domain (which URIs are cooled) and every adapter's eviction (which records a write
 * keeps). The Redis adapter mirrors {@link coerceLedgerRecord} in Lua and the contract suite
 * checks both against the same table.
 */

/**
 * A stored record as read: the JSON text of `{"turn": <int>, "detail": "<tier>"}` exactly as
 * written (possibly malformed, e.g. by an older writer or a repair): parse it with
 * {@link parseLedgerRecord}.
 */
export type RawLedgerRecord = string;

/** A usable record after coercion (context-contract §7). */
export interface LedgerRecord {
  /** Turn (request clock) at which the entry was served; may be negative or ahead of the clock. */
  turn: number;
  /** Served tier as stored; any JSON value (only `"uri"` has a meaning: it never cools). */
  detail: unknown;
}

/** Snapshot returned when a turn begins. */
export interface LedgerTurn {
  /** The clock of this request (number of earlier context requests of the session). */
  turn: number;
  /** True when the session had no ledger before this call (nothing stored, or it expired). */
  fresh: boolean;
  /**
   * Stored records by node URI, raw (to be coerced by the domain). A null-prototype object, so
   * any URI is a safe key.
   */
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

/** One entry to record: a node URI and the tier it was served at. */
export interface LedgerEntry {
  /** Node URI. */
  uri: string;
  /** Served tier (`uri`, `abstract`, `overview`, `full`). */
  detail: string;
}

/** Records kept per session after a write (context-contract §7). */
export const LEDGER_MAX_ENTRIES = 500;

/** Default idle lifetime of a session's ledger in every adapter: 7 days, in ms. */
export const DEFAULT_LEDGER_TTL_MS = 7 * 24 * 3600 * 1000;

/** The port. */
export interface LedgerStore {
  /**
   * Atomically read the records and advance the clock by one; returns the pre-increment clock
   * (0 for a session without a ledger) and refreshes the ledger's TTL.
   */
  beginTurn(key: LedgerKey): Promise<LedgerTurn>;
  /**
   * Atomically upsert `{turn, detail}` for each URI, then evict: keep only usable records
   * (see {@link coerceLedgerRecord}) with `turn − 4·dedupTurns ≤ record.turn ≤ head`, then at
   * most `maxEntries` of them by highest turn (ties: the record first written wins).
   *
   * `head` is `max(turn, latest clock handed out by beginTurn)`. In a sequential session it
   * equals `turn`, which is §7's rule; with concurrent requests of one session it keeps a later
   * request's records when an earlier request writes last, so no record is lost. Records above
   * `head` (left by a ledger that expired and was rebuilt, or by a repair) are dropped.
   * Also raises the stored clock to at least `turn + 1` and refreshes the TTL.
   */
  record(
    key: LedgerKey,
    turn: number,
    dedupTurns: number,
    entries: LedgerEntry[],
    maxEntries: number,
  ): Promise<void>;
  /** Raw access for tests and repair: write one raw field (creates the ledger when missing). */
  putRaw(key: LedgerKey, uri: string, raw: string): Promise<void>;
  /** Readiness probe: true when the store answers; never throws. */
  ping(): Promise<boolean>;
  /** Release resources owned by the adapter (an injected client or database stays open). */
  close(): Promise<void>;
}

const ASCII_WS = /^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g;
const INT_TEXT = /^[+-]?\d(?:_?\d)*$/;

/**
 * Convert a record's `turn` like Python's `int()` does on a JSON value: absent → 0; a finite
 * number is truncated toward zero (`9.7` → 9); booleans are 1/0; a string of decimal digits with
 * optional sign, surrounding whitespace and single underscores between digits converts
 * (`"9"` → 9, `" -3 "` → −3); anything else (`"x"`, `"9.7"`, null, lists, objects) fails.
 * Whitespace is the ASCII set, which the Redis Lua mirror can match exactly.
 * @returns the integer, or null when the value does not convert
 */
export function coerceLedgerTurn(value: unknown): number | null {
  if (value === undefined) return 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) + 0 : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') {
    const s = value.replace(ASCII_WS, '');
    return INT_TEXT.test(s) ? Number(s.replace(/_/g, '')) + 0 : null;
  }
  return null;
}

/**
 * Coerce a decoded record (context-contract §7): usable iff it is a JSON object (not a list)
 * whose `turn` converts with {@link coerceLedgerTurn}.
 * @returns the usable record, or null
 */
export function coerceLedgerRecord(value: unknown): LedgerRecord | null {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const obj = value as Record<string, unknown>;
  const turn = coerceLedgerTurn(Object.prototype.hasOwnProperty.call(obj, 'turn') ? obj.turn : undefined);
  if (turn === null) return null;
  return { turn, detail: Object.prototype.hasOwnProperty.call(obj, 'detail') ? obj.detail : undefined };
}

/**
 * Parse and coerce one stored record. Strict JSON only (no `NaN`, hex or trailing text).
 * @returns the usable record, or null when the text is not JSON or the record is unusable
 */
export function parseLedgerRecord(raw: RawLedgerRecord): LedgerRecord | null {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  return coerceLedgerRecord(value);
}

/** The JSON text an adapter stores for a served entry. */
export function encodeLedgerRecord(turn: number, detail: string): RawLedgerRecord {
  return JSON.stringify({ turn, detail });
}
