/**
 * Retrieval traces (retrieve-contract "Traces"): with `RETRIEVAL_TRACE_ENABLED` on, every
 * retrieve writes one row — query, parameters, stage timings, candidates with scores, what was
 * dropped and why — and answers its id; `GetTrace` reads it back for the same account: for the
 * user who made the request, or an admin of the account.
 *
 * The orchestrator only needs this small port; `@ctxmesh/stores` `TraceStore` (NATS JetStream
 * or the embedded SQLite file) satisfies it.
 */
import { randomUUID } from 'node:crypto';
import { common, orchestrator } from '@ctxmesh/proto';

/** One stored trace row. */
export interface TraceRecord {
  /** Trace id (letters, digits, `_`, `-`; at most 64). */
  id: string;
  /** Account of the request; only it reads the row back. */
  account: string;
  /** When the request ran, ms since the epoch. */
  createdAt: number;
  /** The trace (JSON-serialisable). */
  data: Record<string, unknown>;
}

/** Where traces go and come from. */
export interface TraceSink {
  /** Store one row (idempotent by id). */
  append(row: TraceRecord): Promise<void>;
  /** The row with `id` of `account`, or null (missing, expired, or another account's). */
  get(id: string, account: string): Promise<TraceRecord | null>;
}

/** Ids a trace may have (what the stores accept). */
export const TRACE_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Whether a caller may read a trace row of their own account: an admin or root reads every
 * trace of the account; an ordinary user only the traces of their own requests (a trace holds
 * the query and the private URIs it found, with their scores).
 * @param row a row already read for the caller's account
 */
export function mayReadTrace(row: Pick<TraceRecord, 'data'>, caller: { userId: string; role: common.Role }): boolean {
  if (caller.role === common.Role.ROLE_ADMIN || caller.role === common.Role.ROLE_ROOT) return true;
  return caller.userId !== '' && row.data.user === caller.userId;
}

/** A fresh trace id: `tr_` + 32 hex digits. */
export function newTraceId(): string {
  return `tr_${randomUUID().replace(/-/g, '')}`;
}

/** Why a candidate passage is not in the answer. */
export type DropReason = 'max_per_document' | 'top_k' | 'token_budget';

/** A dropped passage. */
export interface TraceDrop {
  /** Passage URI. */
  uri: string;
  /** Passage id when it had one (token_budget drops), else null. */
  id: string | null;
  /** Why. */
  reason: DropReason;
}

/** camelCase → snake_case: the proto field name of a JSON name (`plannedQueries` → `planned_queries`). */
const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

function snakeKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(snakeKeys);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [snake(k), snakeKeys(x)]));
  return v;
}

/**
 * A trace as the stores keep it: its proto3 JSON with the proto field names (`trace_id`,
 * `planned_queries`…), which is what rows have always looked like. ts-proto's `toJSON` writes
 * the camelCase JSON names and has no option for the field names, hence the key rename here.
 */
export function traceToStored(t: orchestrator.RetrievalTrace): Record<string, unknown> {
  return snakeKeys(orchestrator.RetrievalTrace.toJSON(t)) as Record<string, unknown>;
}

/**
 * A stored row as the trace message. Rows written before the trace was a message (kept for the
 * store's retention, 7 days by default) have `created_at` and `params.as_of` as ISO text: the
 * row's own `createdAt` and the parsed instant stand in for them.
 */
export function traceFromStored(row: TraceRecord): orchestrator.RetrievalTrace {
  const t = orchestrator.RetrievalTrace.fromJSON(row.data);
  const legacyAsOf = (row.data.params as { as_of?: unknown } | undefined)?.as_of;
  if (t.params && t.params.asOfMs === undefined && typeof legacyAsOf === 'string') t.params.asOfMs = Date.parse(legacyAsOf);
  return { ...t, createdAtMs: row.createdAt };
}

/**
 * Race a trace write against `ms`: observability must not hold a request hostage.
 * @returns true when the write finished in time and succeeded
 */
export async function writeWithin(sink: TraceSink, row: TraceRecord, ms: number, onError: (err: unknown) => void): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(1, ms));
    timer.unref();
  });
  try {
    return await Promise.race([
      sink.append(row).then(
        () => true,
        (err: unknown) => {
          onError(err);
          return false;
        },
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
