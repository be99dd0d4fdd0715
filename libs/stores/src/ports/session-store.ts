/**
 * SessionStore port: the append-only session log and its cached projections
 * (overflow-recovery §3.2). The log is the truth; the surface list, the ledger hash, the retry
 * budgets and the idempotency records are caches or side records that the sessions domain
 * derives from the log and hands to the store inside one mutation.
 *
 * Adapters: Redis (every key of a session in ONE hash slot; every mutation ONE Lua script that
 * checks `head` and `generation` before writing) and the embedded SQLite file (the same checks
 * inside one IMMEDIATE transaction). Both adapters pass the same contract suite.
 *
 * The port speaks raw event JSON strings: the store never interprets an event, so the stored
 * bytes are exactly the bytes the domain produced, and no store type leaks into the domain.
 */

/** Key of a session. */
export interface SessionKey {
  /** Account. */
  account: string;
  /** User. */
  user: string;
  /** Session id. */
  sessionId: string;
}

/** Session metadata (the `meta` hash). */
export interface SessionMeta {
  /** Seq of the last event; -1 for a session with no events. */
  head: number;
  /** Surface replace generation: +1 for every replace operation ever applied. */
  generation: number;
  /** Id of the claim estimator the session's claims were priced with. */
  estimatorId: string;
  /** Creation time, ms since the epoch. */
  createdAt: number;
  /**
   * Random id minted when the session is created. A process-local cache compares it to tell
   * a recreated session (same key, new log) from a grown one.
   */
  epoch: string;
}

/** A consistent read of the metadata and the log tail. */
export interface SessionSnapshot {
  /** Metadata at the time of the read. */
  meta: SessionMeta;
  /** Raw event JSON for seqs `afterSeq + 1 .. meta.head`, in seq order. */
  events: string[];
}

/**
 * One surface operation, applied in order to the cached surface list.
 * - `push`: a new message node at the end.
 * - `replace`: the positional span from `startSeq` to `endSeq` (inclusive) becomes the single
 *   node `seq`; `count` is the span length, checked by the adapter as a consistency guard.
 */
export type SurfaceOp =
  | { op: 'push'; seq: number }
  | { op: 'replace'; startSeq: number; endSeq: number; seq: number; count: number };

/** Charge one unit of an agent's overflow retry budget inside a mutation. */
export interface BudgetCharge {
  /** Agent id. */
  agentId: string;
  /** The budget maximum; the mutation fails with `budget_spent` when `used >= max`. */
  max: number;
  /** Time to live of the budget record, in seconds (refreshed by the charge). */
  ttlSeconds: number;
}

/** An idempotency record written with a mutation (or on its own). */
export interface IdempotencyRecord {
  /** The caller's request id. */
  requestId: string;
  /** The cached response (opaque text; the domain stores JSON). */
  value: string;
  /** Time to live, in seconds. */
  ttlSeconds: number;
}

/** One atomic change of a session. Either everything in it lands or nothing does. */
export interface SessionMutation {
  /** Compare-and-set: the head and generation of the snapshot the mutation was computed from. */
  expect: { head: number; generation: number };
  /** Raw event JSON to append; seqs `expect.head + 1 ..` are assigned in order. */
  events: string[];
  /** Surface operations, in order (for the cached surface list). */
  surfaceOps: SurfaceOp[];
  /** The generation after the mutation (must be `expect.generation + number of replaces`). */
  generation: number;
  /** Ledger cache entries to write: block id → block JSON. */
  ledger?: Record<string, string>;
  /** Charge an agent's retry budget (atomically checked against `max`). */
  budgetCharge?: BudgetCharge;
  /** Delete these agents' retry budgets (progress resets them). */
  budgetResets?: string[];
  /** Write an idempotency record; the mutation fails with `duplicate` if one exists. */
  idempotency?: IdempotencyRecord;
  /** Metadata used only when the mutation creates the session (`expect.head == -1`). */
  create?: { estimatorId: string; createdAt: number; epoch: string };
}

/** Outcome of {@link SessionStore.commit}. */
export type CommitResult =
  | { status: 'ok'; head: number; generation: number }
  /** The session changed since the snapshot (or does not exist when `create` was absent). */
  | { status: 'stale'; head: number; generation: number }
  /** The budget charged by the mutation was already spent; nothing was written. */
  | { status: 'budget_spent'; used: number }
  /** An idempotency record for the request id exists; nothing was written. */
  | { status: 'duplicate'; value: string };

/** An agent's overflow retry budget record. */
export interface BudgetRecord {
  /** Agent id. */
  agentId: string;
  /** Retries used. */
  used: number;
  /** The maximum recorded with the last charge. */
  max: number;
  /** Generation written by the last charge. */
  lastGeneration: number;
}

/** The port. */
export interface SessionStore {
  /**
   * Read the metadata and the events after `afterSeq` in one consistent read.
   * @param afterSeq the caller already holds seqs `0..afterSeq`; -1 reads the whole log
   * @returns null when the session does not exist
   */
  snapshot(key: SessionKey, afterSeq: number): Promise<SessionSnapshot | null>;
  /** Apply one mutation atomically after the compare-and-set on head and generation. */
  commit(key: SessionKey, mutation: SessionMutation): Promise<CommitResult>;
  /** The cached surface list (seqs in order); empty for an unknown session. */
  readSurface(key: SessionKey): Promise<number[]>;
  /** The cached ledger: block id → block JSON. */
  readLedger(key: SessionKey): Promise<Record<string, string>>;
  /** An agent's live budget record, or null when absent or expired. */
  readBudget(key: SessionKey, agentId: string): Promise<BudgetRecord | null>;
  /** Every live budget record of the session, ordered by agent id. */
  listBudgets(key: SessionKey): Promise<BudgetRecord[]>;
  /** Delete an agent's budget (the idle reset). Deleting an absent budget is a no-op. */
  resetBudget(key: SessionKey, agentId: string): Promise<void>;
  /** The live idempotency record value for a request id, or null. */
  getIdempotent(key: SessionKey, requestId: string): Promise<string | null>;
  /**
   * Write an idempotency record unless one exists.
   * @returns null when written, else the existing value (which is kept)
   */
  putIdempotent(key: SessionKey, record: IdempotencyRecord): Promise<string | null>;
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Release resources. */
  close(): Promise<void>;
}
