/**
 * TraceStore port (retrieve-contract "Traces"): one row per retrieve request, written when
 * `RETRIEVAL_TRACE_ENABLED` is on and read back by id. Adapters: NATS JetStream (production,
 * one subject per trace in a limits-retention stream) and the embedded SQLite file. One
 * contract suite (`./trace-store.contract.ts`) runs against both.
 */
import { InvalidTraceIdError } from '../ports/errors';

export { InvalidTraceIdError };

/** Trace ids: what fits a NATS subject token and a URL path segment. */
export const TRACE_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** One trace row. */
export interface TraceRow {
  /** Opaque id matching {@link TRACE_ID}; unique per request. */
  id: string;
  /** Tenant account the request ran for; only that account reads the row back. */
  account: string;
  /** When the request ran, ms since the epoch. */
  createdAt: number;
  /** The trace itself (query, parameters, stage timings, candidates, drops): JSON-serialisable. */
  data: Record<string, unknown>;
}

/** The port. */
export interface TraceStore {
  /**
   * Store one row. Idempotent by id: writing the same id again keeps one row.
   * @throws InvalidTraceIdError for a malformed id (before anything is written)
   */
  append(row: TraceRow): Promise<void>;
  /**
   * The row with `id` written for `account`, or null when it is missing, expired, or belongs
   * to another account (existence is never revealed across tenants).
   * @throws InvalidTraceIdError for a malformed id
   */
  get(id: string, account: string): Promise<TraceRow | null>;
  /** Readiness probe (never throws). */
  ping(): Promise<boolean>;
  /** Release what the adapter owns (never the connection or file handle it was given). */
  close(): Promise<void>;
}

/** Throw {@link InvalidTraceIdError} unless `id` matches {@link TRACE_ID}. */
export function checkTraceId(id: string): void {
  if (typeof id !== 'string' || !TRACE_ID.test(id)) throw new InvalidTraceIdError(String(id));
}

/** Default retention of trace rows: 7 days in ms. */
export const DEFAULT_TRACE_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
