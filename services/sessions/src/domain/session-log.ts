/**
 * `SessionLog`: the sessions domain behind the RPCs of §3.3, as one object the handlers hold.
 * It reads the log through the `SessionStore` port, projects it (cached per session and head in
 * this process), plans every change as pure data, and commits each change as ONE atomic
 * mutation that compares the snapshot's head and generation. No gRPC, Redis or SQLite type
 * appears here.
 *
 * This class only wires; each call lives in its own file:
 *
 * | call                                   | file          |
 * |----------------------------------------|---------------|
 * | AppendEvents                           | `append.ts`   |
 * | Compress                               | `compress.ts` |
 * | RecoverOverflow, ReportAgentStatus     | `recovery.ts` |
 * | AppendMessages, GetSearchContext       | `capture.ts`  |
 * | ProjectSurface, ListCompressibleRanges, Decompress, SearchContext, GetStatus | `reads.ts` |
 *
 * and what callers send is checked in `inputs.ts`. Read calls never write, so they never move
 * the generation (§3.5 invariant 12).
 */
import { randomUUID } from 'node:crypto';
import type { SessionKey, SessionStore } from '@ctxmesh/stores';
import type { AppendEventsResult } from './append';
import { appendEvents } from './append';
import type { AppendMessagesResult, SearchContextResult } from './capture';
import { appendMessages, getSearchContext } from './capture';
import type { CompressResult } from './compress';
import { compress } from './compress';
import { resolveMaxOverflowRetries } from './config';
import type { DecompressPage } from './decompress';
import type { LogDeps } from './deps';
import type { LogEvent } from './events';
import { IdempotencyRecords } from './idempotency';
import type {
  AgentStatusInput,
  AppendEventsInput,
  CompressInput,
  DecompressInput,
  ProjectSurfaceInput,
  RecoverOverflowInput,
  SearchContextInput,
  SearchContextRequestInput,
} from './inputs';
import { LogCache } from './log-cache';
import type { SessionView } from './projection';
import type { ListRangesResult, ProjectSurfaceResult, SessionStatus } from './reads';
import { decompress, getStatus, listCompressibleRanges, projectSurface, searchContext } from './reads';
import type { RecoverOverflowResult } from './recovery';
import { recoverOverflow, reportAgentStatus } from './recovery';
import type { SearchHit } from './search';
import type { RankEstimator } from './tokens';
import { defaultRankEstimator } from './tokens';

/** Options of {@link SessionLog}. */
export interface SessionLogOptions {
  /** The store. */
  store: SessionStore;
  /**
   * Overflow retry budget per agent: a non-negative integer; 0 disables recovery.
   * Validated here, so a bad deployment value fails at startup.
   * @default 1
   */
  maxOverflowRetries?: unknown;
  /** Clock, ms since the epoch. @default Date.now */
  clock?: () => number;
  /** Id generator for blocks, prunes and session epochs. @default crypto.randomUUID */
  newId?: () => string;
  /** Rank estimator. @default defaultRankEstimator */
  rankEstimator?: RankEstimator;
  /** Sessions whose parsed log and projection stay cached in this process. @default 256 */
  cacheSessions?: number;
}

/** The sessions domain. One instance per process; safe for concurrent calls. */
export class SessionLog {
  /** The resolved overflow retry budget maximum. */
  readonly maxOverflowRetries: number;
  private readonly deps: LogDeps;

  /** @throws ConfigError when `maxOverflowRetries` is negative or not an integer */
  constructor(opts: SessionLogOptions) {
    this.maxOverflowRetries = resolveMaxOverflowRetries(opts.maxOverflowRetries);
    this.deps = {
      store: opts.store,
      log: new LogCache(opts.store, opts.rankEstimator ?? defaultRankEstimator, Math.max(1, opts.cacheSessions ?? 256)),
      idem: new IdempotencyRecords(opts.store),
      clock: opts.clock ?? Date.now,
      newId: opts.newId ?? randomUUID,
      maxOverflowRetries: this.maxOverflowRetries,
    };
  }

  /** Build a view of arbitrary events (memoised node facts). Exposed for tests and benchmarks. */
  viewOf(events: readonly LogEvent[], head = events.length - 1): SessionView {
    return this.deps.log.viewOf(events, head);
  }

  // ---------------------------------------------------------------------------------------
  // Writes

  /** AppendEvents (`append.ts`). */
  appendEvents(key: SessionKey, input: AppendEventsInput): Promise<AppendEventsResult> {
    return appendEvents(this.deps, key, input);
  }

  /** Compress (`compress.ts`). */
  compress(key: SessionKey, input: CompressInput): Promise<CompressResult> {
    return compress(this.deps, key, input);
  }

  /** RecoverOverflow, the state machine of §3.4 (`recovery.ts`). */
  recoverOverflow(key: SessionKey, input: RecoverOverflowInput): Promise<RecoverOverflowResult> {
    return recoverOverflow(this.deps, key, input);
  }

  /** ReportAgentStatus: `idle` resets the agent's overflow budget (`recovery.ts`). */
  reportAgentStatus(key: SessionKey, input: AgentStatusInput): Promise<{ budget: { used: number; max: number } }> {
    return reportAgentStatus(this.deps, key, input);
  }

  /** AppendMessages, the plugins' capture hooks (`capture.ts`). */
  appendMessages(key: SessionKey, input: { messages: unknown }): Promise<AppendMessagesResult> {
    return appendMessages(this.deps, key, input);
  }

  /** GetSearchContext, get-or-create (`capture.ts`). */
  getSearchContext(key: SessionKey, input: SearchContextRequestInput = {}): Promise<SearchContextResult> {
    return getSearchContext(this.deps, key, input);
  }

  // ---------------------------------------------------------------------------------------
  // Reads (`reads.ts`: never write, never move the generation)

  /** ProjectSurface. */
  projectSurface(key: SessionKey, input: ProjectSurfaceInput = {}): Promise<ProjectSurfaceResult> {
    return projectSurface(this.deps, key, input);
  }

  /** ListCompressibleRanges, oldest first. @param input.preserveRecent default 5 */
  listCompressibleRanges(key: SessionKey, input: { preserveRecent?: number } = {}): Promise<ListRangesResult> {
    return listCompressibleRanges(this.deps, key, input);
  }

  /** Decompress (read-only, paged). */
  decompress(key: SessionKey, input: DecompressInput): Promise<DecompressPage> {
    return decompress(this.deps, key, input);
  }

  /** SearchContext over blocks and hidden originals. */
  searchContext(key: SessionKey, input: SearchContextInput): Promise<{ hits: SearchHit[] }> {
    return searchContext(this.deps, key, input);
  }

  /** GetStatus: head, generation, blocks, live checkpoints, budgets, claims. */
  getStatus(key: SessionKey): Promise<SessionStatus> {
    return getStatus(this.deps, key);
  }
}
