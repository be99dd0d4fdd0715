import type { EmbeddedDb } from './db';
import type { LexicalIndex } from './lexical-index';

/** How the embedded index merges its lexical tail in the background ({@link MergeScheduler}). */
export interface TailMergeOptions {
  /**
   * Pending rows at which a merge starts while writes go on (a larger merge costs less per row:
   * a merge's cost is mostly per term it touches, and a term's tail grows with the merge). On
   * the docs bench profile's ingest (five records a document) 16,384 against 4,096 took the
   * gateway's `wait:true` writes at concurrency 16 from ~195 to ~250 docs/s. @default 16384
   */
  mergeAt: number;
  /**
   * Pending rows at which writes wait for the merge: bounds the tail's memory (about 1 KB per
   * pending row of a few hundred terms, in every process that reads the file) and its share of a
   * query's work. @default 32768
   */
  maxPending: number;
  /** Time one merge step may hold the event loop, ms (plus its commit, and a WAL checkpoint when the commit triggers one). @default 20 */
  stepMs: number;
  /** Quiet time after the last write before every pending row is merged, ms. @default 200 */
  idleMs: number;
}

/** Defaults of {@link TailMergeOptions}. */
export const DEFAULT_TAIL_MERGE: Readonly<TailMergeOptions> = Object.freeze({ mergeAt: 16_384, maxPending: 32_768, stepMs: 20, idleMs: 200 });

/** Back-off after a step found the write lock taken by another connection, or failed, ms. */
const RETRY_MS = 50;

/**
 * Runs the lexical tail's merge ({@link LexicalIndex.mergeStep}) in steps of at most
 * `stepMs` between other work: while writes go on, a merge of every pending row starts once
 * `mergeAt` rows are pending (one step per turn of the event loop, so searches and writes run
 * between steps); when writes pause for `idleMs`, or when {@link drain} asks, every pending row
 * is merged. Steps never wait for the write lock: another connection holding it postpones the
 * step. Background steps' timers are unreferenced, so they never keep a process alive; a drain
 * ({@link drain}) does until it is done.
 */
export class MergeScheduler {
  private timer: { kind: 'now'; h: NodeJS.Immediate } | { kind: 'later'; h: NodeJS.Timeout } | null = null;
  private lastWrite = -Infinity;
  private closed = false;
  private drainers: Array<{ resolve: () => void; reject: (err: unknown) => void }> = [];

  constructor(
    private readonly db: EmbeddedDb,
    private readonly lex: LexicalIndex,
    private readonly opts: TailMergeOptions,
  ) {}

  /** A write committed: merge in the background when enough rows are pending, and the rest once writes pause. */
  wrote(): void {
    this.lastWrite = performance.now();
    if (this.timer?.kind !== 'now') this.schedule(0);
  }

  /** Whether a write should wait for the merge: the tail holds `maxPending` rows. */
  full(): boolean {
    return !this.closed && this.lex.pendingRows() >= this.opts.maxPending;
  }

  /**
   * Run one merge step now (for a write that waits on a full tail).
   * @returns false when it could not (the write lock is taken, or the step failed): the caller
   *   should write anyway rather than wait forever
   */
  stepNow(): boolean {
    return this.step(1) !== 'failed';
  }

  /** Merge every pending row, in steps between other work; resolves when the tail is empty. */
  drain(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.drainers.push({ resolve, reject });
      // Scheduled again, so the timer keeps the process alive while the drain runs.
      this.schedule(0);
    });
  }

  /** Stop: no step runs after this; drains in progress resolve. */
  close(): void {
    this.closed = true;
    this.cancel();
    for (const d of this.drainers.splice(0)) d.resolve();
  }

  private cancel(): void {
    if (this.timer?.kind === 'now') clearImmediate(this.timer.h);
    else if (this.timer?.kind === 'later') clearTimeout(this.timer.h);
    this.timer = null;
  }

  private schedule(delayMs: number): void {
    this.cancel();
    if (this.closed) return;
    // Background merging never keeps the process alive; a drain someone awaits does.
    const background = this.drainers.length === 0;
    if (delayMs <= 0) {
      const h = setImmediate(() => this.tick());
      if (background) h.unref();
      this.timer = { kind: 'now', h };
    } else {
      // Node fires a longer timeout at once (it takes at most 2³¹ − 1 ms).
      const h = setTimeout(() => this.tick(), Math.min(delayMs, 2 ** 31 - 1));
      if (background) h.unref();
      this.timer = { kind: 'later', h };
    }
  }

  /** One step with the write lock not waited for: 'more', 'done', or 'failed' (lock taken, or an error). */
  private step(minRows: number): 'more' | 'done' | 'failed' {
    const wait = this.db.pragma('busy_timeout', { simple: true }) as number;
    this.db.pragma('busy_timeout = 0');
    try {
      return this.lex.mergeStep({ budgetMs: this.opts.stepMs, minRows }) ? 'more' : 'done';
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') for (const d of this.drainers.splice(0)) d.reject(err);
      return 'failed';
    } finally {
      this.db.pragma(`busy_timeout = ${wait}`);
    }
  }

  private tick(): void {
    this.timer = null;
    if (this.closed || !this.db.open) return;
    const sinceWrite = performance.now() - this.lastWrite;
    const idle = this.drainers.length > 0 || sinceWrite >= this.opts.idleMs;
    const r = this.step(idle ? 1 : this.opts.mergeAt);
    if (r === 'more') this.schedule(0);
    else if (r === 'failed') this.schedule(RETRY_MS);
    else if (idle) for (const d of this.drainers.splice(0)) d.resolve();
    // Below `mergeAt` while writes go on: the rest is merged once they pause.
    else if (this.lex.pendingRows() > 0) this.schedule(this.opts.idleMs - sinceWrite);
  }
}
