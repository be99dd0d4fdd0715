/**
 * The ingest consumer: `ctxmesh.ingest.>` under the durable `indexer`, explicit ack, in batches
 * (`EventBus.consumeBatches`: up to `batchSize` messages, one per URI, waiting at most
 * `batchWaitMs` for a batch to fill).
 *
 * Per batch: decode and validate each `indexer.WriteOp`; apply the batch's writes together
 * (`Applier.applyBatch`: shared embedder calls, one store write; large writes one at a time on
 * their own); then, per write, announce the outcome (`notifyDone`, so a gateway waiting with
 * `wait:true` answers) and ack — only after the write has landed, so `wait:true` still answers
 * once that write is searchable. Final answers are never retried: a malformed message is
 * dead-lettered with its error (poison), a refused write (`create` on an existing URI →
 * ALREADY_EXISTS) is announced and acked. Anything else (store or embedder down) is transient:
 * that write alone is nak'd with back-off, and after `maxDeliver` attempts dead-lettered with
 * its failure announced; its neighbours in the batch are settled on their own.
 */
import type { indexer } from '@ctxmesh/proto';
import type { Consumer, Delivery, DoneNotice, EventBus, WriteReceipt } from '@ctxmesh/stores';
import { ingestBatchSize, ingestEvents } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import type { Applier, ApplyResult, BatchOutcome } from '../domain/apply';
import type { WriteStatusBook } from '../domain/status';
import { MalformedWriteError, decodeWriteOp, validateWrite, type ValidWrite } from '../domain/write';

/** Durable consumer name. */
export const INGEST_DURABLE = 'indexer';
/** Subjects of the ingest stream the indexer consumes. */
export const INGEST_SUBJECTS = ['ctxmesh.ingest.>'];
/** Upper bound of the nak back-off, ms (as the bus caps its own). */
const MAX_BACKOFF_MS = 30_000;
/** Keys whose last applied sequence is remembered. */
const SEQ_MEMORY = 50_000;
/**
 * A write whose content has at least this many UTF-16 units (1 Mi) is large: large writes are
 * applied one at a time, so the memory of a burst of big documents is one document's
 * (a 16 MiB write cost ~630 MB; four at once peaked at 1.78 GB).
 */
export const LARGE_WRITE_CHARS = 1024 * 1024;

/** A delivery whose write was decoded, validated and is not a stale redelivery. */
interface Admitted {
  d: Delivery;
  write: ValidWrite;
  /** Ordering key (the message's, else the write's URI). */
  key: string;
}

/** A one-at-a-time gate (FIFO). */
class Gate {
  private tail: Promise<void> = Promise.resolve();

  /** Run `fn` after every earlier `run` has settled. */
  run<T>(fn: () => Promise<T>): Promise<T> {
    const out = this.tail.then(fn);
    this.tail = out.then(
      () => undefined,
      () => undefined,
    );
    return out;
  }
}

/** Options of {@link IngestConsumer.start}. */
export interface IngestConsumerOptions {
  /** Durable name. @default "indexer" */
  durable?: string;
  /** Subjects. @default ["ctxmesh.ingest.>"] */
  subjects?: string[];
  /** Attempts before a transiently failing write is dead-lettered. */
  maxDeliver: number;
  /** Ack wait, ms: an unacked delivery (a crashed indexer) is redelivered after it. */
  ackWaitMs: number;
  /** Batches applied at once (each holds at most one write per URI). @default 1 */
  concurrency?: number;
  /** Most writes in one batch. @default 64 */
  batchSize?: number;
  /** How long a batch that is not full waits for more writes, ms. @default 10 */
  batchWaitMs?: number;
  /** First retry delay after a transient failure, ms; doubles per attempt up to 30 s. @default 1000 */
  retryDelayMs?: number;
}

/** Dependencies of the consumer. */
export interface IngestConsumerDeps {
  bus: EventBus;
  applier: Applier;
  book: WriteStatusBook;
  log: Logger;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

/** Done notice of an apply result. */
export function noticeOf(id: string, r: ApplyResult): DoneNotice {
  return r.status === 'applied'
    ? { id, status: 'applied', contentHash: r.contentHash, nodes: r.nodes }
    : { id, status: 'failed', reason: r.reason ?? 'FAILED', message: r.message ?? '', nodes: 0 };
}

/** A running ingest consumer. */
export class IngestConsumer {
  private readonly lastSeq = new Map<string, number>();
  private readonly largeWrites = new Gate();
  private consumer: Consumer | null = null;

  private constructor(
    private readonly deps: IngestConsumerDeps,
    private readonly opts: IngestConsumerOptions,
  ) {}

  /** Subscribe the durable and start handling deliveries. */
  static async start(deps: IngestConsumerDeps, opts: IngestConsumerOptions): Promise<IngestConsumer> {
    const c = new IngestConsumer(deps, opts);
    c.consumer = await deps.bus.consumeBatches(
      {
        durable: opts.durable ?? INGEST_DURABLE,
        subjects: opts.subjects ?? INGEST_SUBJECTS,
        maxDeliver: opts.maxDeliver,
        ackWaitMs: opts.ackWaitMs,
        concurrency: opts.concurrency,
        retryDelayMs: opts.retryDelayMs,
        maxBatch: opts.batchSize,
        maxWaitMs: opts.batchWaitMs,
      },
      (ds) => c.handleBatch(ds),
    );
    return c;
  }

  /** Stop taking deliveries; in-flight writes finish (and are acked) first. */
  async stop(): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
  }

  /**
   * Handle a batch of deliveries (at most one per key): the small writes are applied together,
   * each large one on its own and one at a time; every delivery is then settled on its own.
   * Exposed for the bus; never throws for a write's own failure.
   */
  async handleBatch(ds: readonly Delivery[]): Promise<void> {
    const admitted = await Promise.allSettled(ds.map((d) => this.admit(d)));
    const small: Admitted[] = [];
    const large: Admitted[] = [];
    const failed: Array<Promise<void>> = [];
    admitted.forEach((a, i) => {
      if (a.status === 'rejected') failed.push(this.retryOrGiveUp(ds[i]!, a.reason));
      else if (a.value !== null) (a.value.write.content.length >= LARGE_WRITE_CHARS ? large : small).push(a.value);
    });
    const together = async (): Promise<void> => {
      if (small.length === 0) return;
      ingestBatchSize.observe(small.length);
      const outcomes = await this.deps.applier.applyBatch(small.map((a) => a.write));
      // Every outcome announced first, then every delivery settled in one go, so a bus that
      // talks to a server sends the batch's notices, and then its acks, together.
      const settles = await Promise.allSettled(small.map((a, i) => this.decide(a, outcomes[i]!)));
      await this.all(settles.map((r) => (r.status === 'fulfilled' ? r.value() : Promise.reject(r.reason))));
    };
    await this.all([together(), ...large.map((a) => this.applyAlone(a)), ...failed]);
  }

  /** Wait for every promise; a failure (the bus refusing an ack or a nak) is logged, never thrown, so it cannot unsettle a neighbour. */
  private async all(ps: ReadonlyArray<Promise<void>>): Promise<void> {
    for (const r of await Promise.allSettled(ps)) {
      if (r.status === 'rejected') this.deps.log.warn({ err: r.reason }, 'settling an ingest delivery failed; the bus redelivers it');
    }
  }

  /** A delivery that could not even be read (not a malformed write: an unexpected error): retry it, or give up on its last attempt. */
  private async retryOrGiveUp(d: Delivery, err: unknown): Promise<void> {
    this.deps.log.error({ err, seq: d.seq }, 'ingest delivery could not be read');
    if (d.attempt >= this.opts.maxDeliver) await d.deadLetter(errorText(err));
    else await d.nak(Math.min((this.opts.retryDelayMs ?? 1000) * 2 ** (d.attempt - 1), MAX_BACKOFF_MS));
  }

  /** Handle one delivery (exposed for the bus; never throws for a write's own failure). */
  async handle(d: Delivery): Promise<void> {
    const a = await this.admit(d);
    if (a !== null) await this.applyAlone(a);
  }

  /**
   * Decode and validate a delivery. A malformed one is dead-lettered, and a redelivery of a write
   * already applied is acked: both are settled here (null).
   */
  private async admit(d: Delivery): Promise<Admitted | null> {
    let write: ValidWrite;
    try {
      const op = decodeWriteOp(d.message.data);
      try {
        write = validateWrite(op, d.message.id);
      } catch (err) {
        await this.poison(d, op.writeId || d.message.id, err, op);
        return null;
      }
    } catch (err) {
      await this.poison(d, d.message.id, err);
      return null;
    }

    const key = d.message.key || write.uri;
    const last = this.lastSeq.get(key);
    if (last !== undefined && d.seq <= last) {
      // A transport redelivery of a write this process already applied, after later writes
      // of the URI: applying it again would roll the node back.
      ingestEvents.labels('duplicate').inc();
      this.deps.log.debug({ seq: d.seq, key }, 'skipping a write already applied');
      await d.ack();
      return null;
    }
    this.deps.book.pending(write.writeId);
    return { d, write, key };
  }

  /** Apply one write on its own (a large one after every earlier large one), then settle it. */
  private async applyAlone(a: Admitted): Promise<void> {
    const w = a.write;
    let outcome: BatchOutcome;
    try {
      const result = w.content.length >= LARGE_WRITE_CHARS ? await this.largeWrites.run(() => this.deps.applier.apply(w)) : await this.deps.applier.apply(w);
      outcome = { status: 'fulfilled', value: result };
    } catch (err) {
      outcome = { status: 'rejected', reason: err };
    }
    await this.settle(a, outcome);
  }

  /**
   * Settle one delivery from its write's outcome: applied or refused → record, announce, ack;
   * failed → nak with back-off, or on the last attempt dead-letter and announce the failure.
   */
  private async settle(a: Admitted, outcome: BatchOutcome): Promise<void> {
    await (await this.decide(a, outcome))();
  }

  /**
   * {@link settle} up to the bus call that settles the delivery: record and announce the outcome,
   * and return that call (ack, nak or dead letter) for the caller to make.
   */
  private async decide({ d, write, key }: Admitted, outcome: BatchOutcome): Promise<() => Promise<void>> {
    const log = this.deps.log;
    if (outcome.status === 'rejected') {
      const err: unknown = outcome.reason;
      const text = errorText(err);
      if (d.attempt >= this.opts.maxDeliver) {
        ingestEvents.labels('dead_letter').inc();
        log.error({ err, uri: write.uri, writeId: write.writeId, attempt: d.attempt }, 'write failed on every attempt; dead-lettered');
        this.deps.book.settle(write.writeId, { state: 'failed', contentHash: '', nodes: 0, reason: 'UNAVAILABLE', message: text });
        await this.notify({ id: write.writeId, status: 'failed', reason: 'UNAVAILABLE', message: text, nodes: 0 }, write);
        return () => d.deadLetter(`failed after ${d.attempt} attempts: ${text}`);
      }
      ingestEvents.labels('retry').inc();
      log.warn({ err, uri: write.uri, writeId: write.writeId, attempt: d.attempt }, 'write failed; will retry');
      const base = this.opts.retryDelayMs ?? 1000;
      return () => d.nak(Math.min(base * 2 ** (d.attempt - 1), MAX_BACKOFF_MS));
    }

    const result = outcome.value;
    this.remember(key, d.seq);
    ingestEvents.labels(result.status).inc();
    this.deps.book.settle(write.writeId, {
      state: result.status,
      contentHash: result.contentHash,
      nodes: result.nodes,
      reason: result.reason ?? '',
      message: result.message ?? '',
    });
    // Announce before acking: if the ack is lost the write is redelivered and (being
    // idempotent) announced again, whereas a notice lost after an ack would leave a waiter hanging.
    await this.notify(noticeOf(write.writeId, result), write);
    return () => d.ack();
  }

  private async poison(d: Delivery, id: string, err: unknown, op?: indexer.WriteOp): Promise<void> {
    if (!(err instanceof MalformedWriteError)) throw err;
    ingestEvents.labels('poison').inc();
    this.deps.log.error({ err, seq: d.seq, subject: d.message.subject, field: err.field }, 'malformed write; dead-lettered');
    this.deps.book.settle(id, { state: 'failed', contentHash: '', nodes: 0, reason: 'INVALID_ARGUMENT', message: err.message });
    const who = { uri: op?.uri ?? '', account: op?.identity?.accountId ?? '', user: op?.identity?.userId ?? '' };
    await this.notify({ id, status: 'failed', reason: 'INVALID_ARGUMENT', message: err.message, nodes: 0 }, who);
    await d.deadLetter(err.message);
  }

  /**
   * Announce an outcome to a waiter (`wait:true`) and record it as the write's receipt (a
   * caller who did not wait polls it), before the message is acked or dead-lettered.
   */
  private async notify(n: DoneNotice, w: Pick<ValidWrite, 'uri' | 'account' | 'user'>): Promise<void> {
    if (n.id === '') return;
    const receipt: WriteReceipt = {
      id: n.id,
      state: n.status,
      uri: w.uri,
      account: w.account,
      user: w.user ?? '',
      ...(n.status === 'applied' ? { contentHash: n.contentHash ?? '' } : { reason: n.reason ?? '', message: n.message ?? '' }),
      atMs: Date.now(),
    };
    const bus = this.deps.bus;
    const [sent, kept] = await Promise.allSettled([Promise.resolve().then(() => bus.notifyDone(n)), Promise.resolve().then(() => bus.putReceipt(receipt))]);
    if (sent.status === 'rejected') this.deps.log.warn({ err: sent.reason, id: n.id }, 'done notice not sent');
    if (kept.status === 'rejected') this.deps.log.warn({ err: kept.reason, id: n.id }, 'write receipt not recorded');
  }

  private remember(key: string, seq: number): void {
    this.lastSeq.delete(key);
    this.lastSeq.set(key, seq);
    if (this.lastSeq.size > SEQ_MEMORY) this.lastSeq.delete(this.lastSeq.keys().next().value!);
  }
}
