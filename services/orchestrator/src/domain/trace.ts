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
import { common } from '@ctxmesh/proto';

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

/** A candidate passage as the trace records it. */
export interface TraceCandidate {
  /** Passage URI. */
  uri: string;
  /** Document URI. */
  doc_uri: string;
  /** Score after the stages that ran (the rerank score when rerank ran). */
  score: number;
  /** Score gather gave it (search relevance, or the link's relevance for graph assist). */
  search_score: number;
  /** `search` or `graph_assist`. */
  source: 'search' | 'graph_assist';
  /** Cross-encoder score, when rerank scored it. */
  rerank_score: number | null;
}

/** A dropped passage. */
export interface TraceDrop {
  /** Passage URI. */
  uri: string;
  /** Passage id when it had one (token_budget drops), else null. */
  id: string | null;
  /** Why. */
  reason: DropReason;
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
