/**
 * Stage admission (DESIGN §4, retrieve-contract "Stages"): mandatory legs always run;
 * an optional stage is declared once ({@link OptionalStage}: its fuse and the rules that keep it
 * from being entered) and runs only when no rule holds and the remaining time budget covers its
 * expected cost (a running estimate of its recent latency) plus a reserve for rendering. A
 * skipped stage is never entered and is named in the answer; an admitted stage gets its own
 * timeout clamped to what remains and degrades (never fails the request) on error or timeout.
 */
import { common } from '@ctxmesh/proto';
import { Budget, Code, CtxError, isCode } from '@ctxmesh/rpc';

/**
 * Why a stage table kept an optional stage from being entered: not asked for, not set up,
 * nothing for it to work on, or (the digest) no entries to write it from.
 */
export type SkipReason = 'NOT_REQUESTED' | 'NOT_CONFIGURED' | 'NOTHING_TO_DO' | 'NO_ENTRIES';

/**
 * Reasons of optional stages that were not entered (or answered that they are not set up)
 * without the request losing anything it asked for: these are never "degraded". A digest
 * skipped for `NO_ENTRIES` is: the request asked for one and got none.
 */
export const BENIGN_SKIP_REASONS: readonly string[] = ['NOT_CONFIGURED', 'NOT_REQUESTED', 'NOTHING_TO_DO'];

/**
 * An optional stage, declared once in its pipeline's stage table: its name, its fuse, and the
 * rules checked in order before it runs — the first that holds is recorded as the skip reason
 * and the stage is not entered. `F` is what the rules read (the request, the settings, what
 * earlier stages produced).
 */
export interface OptionalStage<F> {
  /** Stage name, as stats, telemetry and metrics show it. */
  readonly name: string;
  /** The stage's own timeout in ms (clamped further to what the budgets leave). */
  readonly fuseMs: (facts: F) => number;
  /** Skip rules in order: `[reason, holds]`. */
  readonly skipWhen: ReadonlyArray<readonly [reason: SkipReason, holds: (facts: F) => boolean]>;
}

/**
 * Thrown by an optional stage's body when the downstream says the stage is not set up (a
 * rewrite service answering `off`): the stage is recorded as skipped with `reason`, not as a
 * failure.
 */
export class StageNotRunError extends Error {
  override readonly name = 'StageNotRunError';
  constructor(
    /** Skip reason, e.g. `NOT_CONFIGURED`. */
    readonly reason: string,
    message = `stage not run: ${reason}`,
  ) {
    super(message);
  }
}

/**
 * Expected cost (ms) of each optional stage before it has ever run: its configured timeout, so
 * a short time budget never calls a stage it knows nothing about; once the stage has run, the
 * running estimate takes over.
 */
export function stagePriors(timeouts: {
  /** Query expansion fuse (context mode). */
  expansionTimeoutMs: number;
  /** Digest rewrite fuse (context mode). */
  rewriteTimeoutMs: number;
  /** Retrieve query rewrite timeout. */
  queryRewriteTimeoutMs: number;
  /** Cross-encoder rerank timeout. */
  rerankTimeoutMs: number;
  /** Graph assist timeout. */
  graphAssistTimeoutMs: number;
}): Record<string, number> {
  return {
    query_expansion: timeouts.expansionTimeoutMs,
    rewrite: timeouts.rewriteTimeoutMs,
    query_rewrite: timeouts.queryRewriteTimeoutMs,
    rerank: timeouts.rerankTimeoutMs,
    graph_assist: timeouts.graphAssistTimeoutMs,
  };
}

/** The first of a stage's skip rules that holds for `facts`, or null when the stage may run. */
export function skipReasonOf<F>(spec: OptionalStage<F>, facts: F): SkipReason | null {
  return spec.skipWhen.find(([, holds]) => holds(facts))?.[0] ?? null;
}

/** Why an optional stage did not contribute. */
export type StageOutcome = 'ok' | 'skipped' | 'failed' | 'timeout';

/** Record of one stage, in run order. */
export interface StageRecord {
  /** Stage name, e.g. `gather`, `rerank`. */
  stage: string;
  /** Outcome. */
  outcome: StageOutcome;
  /** Wall time in ms (0 when skipped). */
  ms: number;
  /** When the stage started (or was skipped), ms since the request started. */
  startMs: number;
  /** Reason of a skip or failure, e.g. `BUDGET_EXHAUSTED`, `NOT_CONFIGURED`. */
  reason: string;
  /** True for optional stages. */
  optional: boolean;
}

/**
 * Rolling latency estimate per stage: the 90th percentile of the last `window` runs, or a
 * configured prior before any run. Shared by all requests of one orchestrator.
 */
export class LatencyEstimator {
  private readonly samples = new Map<string, number[]>();

  constructor(
    private readonly priors: Record<string, number>,
    private readonly window = 50,
  ) {}

  /** Expected cost of `stage` in ms. */
  expectedMs(stage: string): number {
    const s = this.samples.get(stage);
    if (!s || s.length === 0) return this.priors[stage] ?? 0;
    const sorted = [...s].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.9))];
  }

  /** Record a run of `stage` that took `ms` (timeouts record their full clamp). */
  record(stage: string, ms: number): void {
    let s = this.samples.get(stage);
    if (!s) this.samples.set(stage, (s = []));
    s.push(ms);
    if (s.length > this.window) s.shift();
  }
}

/** Options of a StageRunner. */
export interface StageRunnerOptions {
  /** Deadline budget of the request (aborts). */
  budget: Budget;
  /** Whole-request time budget in ms for admission (null = none: admit by configuration only). */
  timeBudgetMs: number | null;
  /** Latency estimates. */
  estimator: LatencyEstimator;
  /** Time kept back for the mandatory legs after an optional stage, in ms. */
  reserveMs: number;
  /** Clock in ms (tests). */
  now?: () => number;
  /** Metrics hook. */
  observe?: (r: StageRecord) => void;
}

/** Runs a request's stages, keeping their records. */
export class StageRunner {
  /** Records in run order. */
  readonly records: StageRecord[] = [];
  private readonly started: number;
  private readonly now: () => number;

  constructor(private readonly opts: StageRunnerOptions) {
    this.now = opts.now ?? (() => performance.now());
    this.started = this.now();
  }

  /** Milliseconds since the request started. */
  elapsedMs(): number {
    return this.now() - this.started;
  }

  /** Time budget left in ms (Infinity without a time budget). */
  remainingTimeMs(): number {
    return this.opts.timeBudgetMs === null ? Infinity : this.opts.timeBudgetMs - this.elapsedMs();
  }

  /** Run a mandatory leg under the request budget; its errors propagate. */
  async mandatory<T>(stage: string, run: (budget: Budget) => Promise<T>): Promise<T> {
    const t0 = this.now();
    try {
      const out = await run(this.opts.budget);
      this.push({ stage, outcome: 'ok', ms: this.now() - t0, startMs: t0 - this.started, reason: '', optional: false });
      return out;
    } catch (err) {
      this.push({ stage, outcome: 'failed', ms: this.now() - t0, startMs: t0 - this.started, reason: reasonOf(err), optional: false });
      throw err;
    } finally {
      this.opts.estimator.record(stage, this.now() - t0);
    }
  }

  /** Record an optional stage that was not entered because it is not configured or not asked for. */
  notRun(stage: string, reason: string): void {
    this.push({ stage, outcome: 'skipped', ms: 0, startMs: this.elapsedMs(), reason, optional: true });
  }

  /**
   * Run a declared optional stage: skipped with the first of its rules that holds for `facts`,
   * else admitted by {@link optional} under its fuse.
   * @returns the stage's value, or undefined when skipped, failed or timed out
   */
  async stage<F, T>(spec: OptionalStage<F>, facts: F, run: (budget: Budget, timeoutMs: number) => Promise<T>): Promise<T | undefined> {
    const reason = skipReasonOf(spec, facts);
    if (reason !== null) {
      this.notRun(spec.name, reason);
      return undefined;
    }
    return this.optional(spec.name, spec.fuseMs(facts), run);
  }

  /**
   * Run an optional stage if it fits. `capMs` is the stage's own timeout (fuse); the
   * stage gets min(capMs, time left in the time budget, deadline − reserve).
   * @returns the stage's value, or undefined when skipped, failed or timed out
   */
  async optional<T>(stage: string, capMs: number, run: (budget: Budget, timeoutMs: number) => Promise<T>): Promise<T | undefined> {
    const expected = this.opts.estimator.expectedMs(stage);
    const timeLeft = this.remainingTimeMs();
    const deadlineLeft = this.opts.budget.remainingMs() - this.opts.reserveMs;
    const left = Math.min(timeLeft - this.opts.reserveMs, deadlineLeft);
    if (left <= 0 || expected > left) {
      this.push({ stage, outcome: 'skipped', ms: 0, startMs: this.elapsedMs(), reason: 'BUDGET_EXHAUSTED', optional: true });
      return undefined;
    }
    const timeoutMs = Math.max(1, Math.floor(Math.min(capMs, left)));
    const child = this.opts.budget.child(timeoutMs);
    const t0 = this.now();
    try {
      const out = await run(child, timeoutMs);
      const ms = this.now() - t0;
      this.opts.estimator.record(stage, ms);
      this.push({ stage, outcome: 'ok', ms, startMs: t0 - this.started, reason: '', optional: true });
      return out;
    } catch (err) {
      const ms = this.now() - t0;
      this.opts.estimator.record(stage, ms);
      if (err instanceof StageNotRunError) {
        this.push({ stage, outcome: 'skipped', ms: 0, startMs: t0 - this.started, reason: err.reason, optional: true });
        return undefined;
      }
      // The request's own deadline is not an optional stage's failure to absorb.
      if (this.opts.budget.exhausted) throw err;
      const timedOut = isCode(err, Code.DEADLINE_EXCEEDED) || child.remainingMs() <= 0;
      this.push({ stage, outcome: timedOut ? 'timeout' : 'failed', ms, startMs: t0 - this.started, reason: reasonOf(err), optional: true });
      return undefined;
    }
  }

  /** Names of optional stages that were skipped for budget or failed/timed out. */
  degraded(): string[] {
    return this.records.filter((r) => r.optional && r.outcome !== 'ok' && !BENIGN_SKIP_REASONS.includes(r.reason)).map((r) => r.stage);
  }

  /** Timings of the stages that ran (skipped ones are left out), ms rounded to 0.01, in run order. */
  measuredTimings(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.records) if (r.outcome !== 'skipped') out[r.stage] = Math.round(r.ms * 100) / 100;
    return out;
  }

  /** Stage timings keyed by stage name (ms, rounded to 0.01). */
  timings(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.records) out[r.stage] = Math.round(r.ms * 100) / 100;
    return out;
  }

  /** Records as proto StageResults. */
  toProto(): common.StageResult[] {
    return this.records.map((r) => ({
      stage: r.stage,
      status:
        r.outcome === 'ok'
          ? common.StageStatus.STAGE_STATUS_OK
          : r.outcome === 'skipped'
            ? common.StageStatus.STAGE_STATUS_SKIPPED
            : r.outcome === 'timeout'
              ? common.StageStatus.STAGE_STATUS_TIMEOUT
              : common.StageStatus.STAGE_STATUS_FAILED,
      durationMs: r.ms,
      reason: r.reason,
    }));
  }

  private push(r: StageRecord): void {
    this.records.push(r);
    this.opts.observe?.(r);
  }
}

function reasonOf(err: unknown): string {
  if (err && typeof err === 'object' && 'reason' in err && typeof (err as { reason: unknown }).reason === 'string') {
    return (err as { reason: string }).reason;
  }
  return err instanceof Error ? err.name : 'ERROR';
}

/**
 * The body of an optional stage whose downstream answers with a status: `ok` passes the
 * answer on, `off` means the stage is not set up (skipped, not degraded), `timeout` and
 * anything else are the stage's failure (degraded).
 */
export function statusOutcome<T extends { status: string }>(stage: string, r: T): T {
  if (r.status === 'ok') return r;
  if (r.status === 'off') throw new StageNotRunError('NOT_CONFIGURED', `${stage}: the rewrite service has it switched off`);
  if (r.status === 'timeout') throw new CtxError(Code.DEADLINE_EXCEEDED, 'STAGE_TIMEOUT', `${stage} timed out`);
  throw new CtxError(Code.UNAVAILABLE, 'STAGE_FAILED', `${stage} failed (${r.status})`);
}
