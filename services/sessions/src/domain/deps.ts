/** What every call of the session log runs against; `SessionLog` builds it once. */
import type { SessionStore } from '@ctxmesh/stores';
import type { IdempotencyRecords } from './idempotency';
import type { LogCache } from './log-cache';

/** The dependencies of the calls in `append.ts`, `compress.ts`, `recovery.ts`, `capture.ts` and `reads.ts`. */
export interface LogDeps {
  /** The store every change is committed to, as one atomic mutation. */
  store: SessionStore;
  /** Loads (and caches) the views the calls plan against. */
  log: LogCache;
  /** The answers of Compress and RecoverOverflow by request id. */
  idem: IdempotencyRecords;
  /** Clock, ms since the epoch. */
  clock: () => number;
  /** Id generator for blocks, prunes and session epochs. */
  newId: () => string;
  /** The overflow retry budget per agent (0 disables recovery). */
  maxOverflowRetries: number;
}
