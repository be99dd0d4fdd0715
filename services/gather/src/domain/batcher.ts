/**
 * Micro-batching: the retrieval calls one context request launches together (a bucketed
 * request makes about ten) are collected into one batch, so the store runs one
 * `search(queries[])` and shares work across it (one dense scan per query vector, one lexical
 * lookup per text, one payload read).
 */

/** Runs one batch; must resolve with exactly one output per input, in input order. */
export type BatchRunner<I, O> = (items: I[]) => Promise<O[]>;

/** Options of a {@link MicroBatcher}. */
export interface MicroBatcherOptions {
  /**
   * Items per batch at most; a batch that reaches it is flushed at once. @default 256
   */
  maxBatch?: number;
  /**
   * Schedules a flush of everything added so far. The default, `setImmediate`, runs after the
   * current macrotask and its microtasks, i.e. after every call the caller launched together
   * (including those launched from `await`-continuations of the same tick).
   */
  schedule?: (flush: () => void) => void;
}

interface Pending<I, O> {
  item: I;
  resolve: (o: O) => void;
  reject: (e: unknown) => void;
}

/** Thrown to every caller of a batch whose runner returned the wrong number of outputs. */
export class BatchShapeError extends Error {
  override readonly name = 'BatchShapeError';
}

/**
 * Collects `add` calls and runs them as batches. A failed batch rejects every call in it with
 * the runner's error.
 */
export class MicroBatcher<I, O> {
  private pending: Array<Pending<I, O>> = [];
  private scheduled = false;
  private readonly maxBatch: number;
  private readonly schedule: (flush: () => void) => void;
  /** Sizes of the batches run so far, in order (observability and tests). */
  readonly batchSizes: number[] = [];

  constructor(
    private readonly run: BatchRunner<I, O>,
    opts: MicroBatcherOptions = {},
  ) {
    this.maxBatch = Math.max(1, Math.floor(opts.maxBatch ?? 256));
    this.schedule = opts.schedule ?? ((f) => void setImmediate(f));
  }

  /** Queue one item; resolves with its output once its batch has run. */
  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) {
        this.flush();
        return;
      }
      if (!this.scheduled) {
        this.scheduled = true;
        this.schedule(() => {
          this.scheduled = false;
          this.flush();
        });
      }
    });
  }

  /** Run everything queued now (no-op when nothing is queued). */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.batchSizes.push(batch.length);
    let started: Promise<O[]>;
    try {
      started = this.run(batch.map((p) => p.item));
    } catch (e) {
      started = Promise.reject(e);
    }
    started.then(
      (outs) => {
        if (!Array.isArray(outs) || outs.length !== batch.length) {
          const err = new BatchShapeError(`batch of ${batch.length} produced ${Array.isArray(outs) ? outs.length : typeof outs} results`);
          for (const p of batch) p.reject(err);
          return;
        }
        batch.forEach((p, i) => p.resolve(outs[i]));
      },
      (err: unknown) => {
        for (const p of batch) p.reject(err);
      },
    );
  }
}
