import { EventEmitter } from 'node:events';
import {
  AwaitDoneAbortedError,
  DEFAULT_BATCH_WAIT_MS,
  DEFAULT_MAX_BATCH,
  type BatchConsumeOptions,
  type BusMessage,
  type ConsumeOptions,
  type Consumer,
  type DeadLetter,
  type Delivery,
  type DoneNotice,
  type EventBus,
  type PublishOptions,
  type WriteReceipt,
} from '../ports/event-bus';
import { KeyedDispatcher, type KeyedDispatcherOptions, type TransportDelivery } from './keyed-dispatcher';
import { invalidSubject, subjectMatches } from './subjects';
import { InProcBusError } from '../ports/errors';

export { InProcBusError };

/** Options of {@link InProcEventBus}. */
export interface InProcEventBusOptions {
  /** Subjects the stream stores; publishing elsewhere fails, as without a JetStream stream. @default [">"] */
  subjects?: string[];
  /** A second publish of an id within this many ms is dropped. @default 120000 (JetStream's default) */
  duplicateWindowMs?: number;
  /** Messages kept in the stream; the oldest are dropped beyond it. @default 100000 */
  maxMessages?: number;
  /** Unacknowledged deliveries per durable before delivery pauses. @default 1000 */
  maxAckPending?: number;
  /** Dead letters kept for {@link InProcEventBus.deadLetters}. @default 10000 */
  maxDeadLetters?: number;
  /** Write receipts kept (the oldest are forgotten first). @default 100000 */
  maxReceipts?: number;
  /** Clock in ms (duplicate window). @default Date.now */
  now?: () => number;
}

interface Stored {
  seq: number;
  message: BusMessage;
}

interface Durable {
  name: string;
  subjects: string[];
  ackWaitMs: number;
  /** Next stream sequence to consider for a first delivery. */
  cursor: number;
  /** Unacked deliveries: seq → ack-wait timer. */
  pending: Map<number, NodeJS.Timeout>;
  /** Naks waiting out their delay: seq → timer. */
  delayed: Map<number, NodeJS.Timeout>;
  /** Deliveries made per unacked seq. */
  counts: Map<number, number>;
  /** Seqs due for redelivery, ascending. */
  redeliver: number[];
  pullers: KeyedDispatcher[];
  rr: number;
  pumpQueued: boolean;
}

const timer = (fn: () => void, ms: number): NodeJS.Timeout => {
  const t = setTimeout(fn, Math.max(0, ms));
  t.unref();
  return t;
};

/**
 * EventBus inside one process with JetStream's semantics: a bounded stream with sequence
 * numbers and duplicate-id dropping, durable consumers whose state survives a consumer stop,
 * explicit ack with ack-wait redelivery, and the same per-key dispatcher as the NATS adapter
 * (FIFO per key, retries on nak or handler error, dead letters after `maxDeliver` attempts).
 * Done notices go through an EventEmitter. Nothing survives the process.
 */
export class InProcEventBus implements EventBus {
  private readonly subjects: string[];
  private readonly duplicateWindowMs: number;
  private readonly maxMessages: number;
  private readonly maxAckPending: number;
  private readonly maxDeadLetters: number;
  private readonly maxReceipts: number;
  private readonly receipts = new Map<string, WriteReceipt>();
  private readonly now: () => number;
  private readonly log = new Map<number, Stored>();
  private readonly ids = new Map<string, number>();
  private readonly durables = new Map<string, Durable>();
  private readonly dead: DeadLetter[] = [];
  private readonly done = new EventEmitter();
  private readonly consumers = new Set<Consumer>();
  private readonly waiters = new Set<(err: Error) => void>();
  private lastSeq = 0;
  private closed = false;

  constructor(opts: InProcEventBusOptions = {}) {
    this.subjects = opts.subjects ?? ['>'];
    this.duplicateWindowMs = opts.duplicateWindowMs ?? 120_000;
    this.maxMessages = opts.maxMessages ?? 100_000;
    this.maxAckPending = opts.maxAckPending ?? 1000;
    this.maxDeadLetters = opts.maxDeadLetters ?? 10_000;
    this.maxReceipts = opts.maxReceipts ?? 100_000;
    this.now = opts.now ?? Date.now;
    this.done.setMaxListeners(0);
  }

  /** {@inheritDoc EventBus.publish} */
  async publish(message: BusMessage, _opts?: PublishOptions): Promise<boolean> {
    if (this.closed) throw new InProcBusError('bus is closed');
    const bad = invalidSubject(message.subject);
    if (bad !== null) throw new InProcBusError(bad);
    if (!this.subjects.some((f) => subjectMatches(f, message.subject))) {
      throw new InProcBusError(`no stream stores subject "${message.subject}"`);
    }
    const now = this.now();
    // ids is in publish order, so expired ids are all at its front.
    for (const [id, at] of this.ids) {
      if (now - at < this.duplicateWindowMs) break;
      this.ids.delete(id);
    }
    if (this.ids.has(message.id)) return false;
    this.ids.set(message.id, now);
    const seq = ++this.lastSeq;
    this.log.set(seq, { seq, message: { ...message, data: message.data.slice() } });
    if (this.log.size > this.maxMessages) this.log.delete(this.log.keys().next().value!);
    for (const d of this.durables.values()) this.schedulePump(d);
    return true;
  }

  /** {@inheritDoc EventBus.consume} */
  async consume(opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer> {
    return this.subscribe(opts, (o) => new KeyedDispatcher(handler, o));
  }

  /** {@inheritDoc EventBus.consumeBatches} */
  async consumeBatches(opts: BatchConsumeOptions, handler: (batch: Delivery[]) => Promise<void>): Promise<Consumer> {
    const batch = { maxBatch: opts.maxBatch ?? DEFAULT_MAX_BATCH, maxWaitMs: opts.maxWaitMs ?? DEFAULT_BATCH_WAIT_MS };
    return this.subscribe({ ...opts, concurrency: opts.concurrency ?? 1 }, (o) => new KeyedDispatcher(handler, o, batch));
  }

  private async subscribe(opts: ConsumeOptions, makeDispatcher: (o: KeyedDispatcherOptions) => KeyedDispatcher): Promise<Consumer> {
    if (this.closed) throw new InProcBusError('bus is closed');
    let d = this.durables.get(opts.durable);
    if (d === undefined) {
      d = {
        name: opts.durable,
        subjects: opts.subjects,
        ackWaitMs: opts.ackWaitMs,
        cursor: 1,
        pending: new Map(),
        delayed: new Map(),
        counts: new Map(),
        redeliver: [],
        pullers: [],
        rr: 0,
        pumpQueued: false,
      };
      this.durables.set(opts.durable, d);
    } else {
      // Like a JetStream consumer update: the durable keeps its position and pending set.
      d.subjects = opts.subjects;
      d.ackWaitMs = opts.ackWaitMs;
    }
    const durable = d;
    const dispatcher = makeDispatcher({
      maxDeliver: opts.maxDeliver,
      ackWaitMs: opts.ackWaitMs,
      concurrency: opts.concurrency ?? 8,
      retryDelayMs: opts.retryDelayMs ?? 1000,
      deadLetter: async (td, error, attempts) => {
        this.dead.push({ message: td.message, seq: td.seq, error, attempts });
        if (this.dead.length > this.maxDeadLetters) this.dead.shift();
      },
    });
    durable.pullers.push(dispatcher);
    let stopped: Promise<void> | null = null;
    const consumer: Consumer = {
      stop: () => {
        stopped ??= (async () => {
          const i = durable.pullers.indexOf(dispatcher);
          if (i >= 0) durable.pullers.splice(i, 1);
          await dispatcher.stop();
          this.consumers.delete(consumer);
          this.schedulePump(durable);
        })();
        return stopped;
      },
    };
    this.consumers.add(consumer);
    this.schedulePump(durable);
    return consumer;
  }

  /** {@inheritDoc EventBus.notifyDone} */
  async notifyDone(notice: DoneNotice): Promise<void> {
    if (this.closed) throw new InProcBusError('bus is closed');
    this.done.emit(`done:${notice.id}`, { ...notice });
  }

  /** {@inheritDoc EventBus.awaitDone} */
  awaitDone(id: string, signal: AbortSignal): { done: Promise<DoneNotice>; cancel(): void } {
    const event = `done:${id}`;
    let cancel: () => void = () => undefined;
    const done = new Promise<DoneNotice>((resolve, reject) => {
      const cleanup = (): void => {
        this.done.off(event, onDone);
        signal.removeEventListener('abort', onAbort);
        this.waiters.delete(fail);
      };
      const onDone = (n: DoneNotice): void => {
        cleanup();
        resolve(n);
      };
      const fail = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const onAbort = (): void => fail(new AwaitDoneAbortedError(id, signal.reason));
      cancel = () => fail(new AwaitDoneAbortedError(id, 'cancelled'));
      if (signal.aborted) return onAbort();
      this.done.on(event, onDone);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(fail);
    });
    // A cancelled wait nobody awaits must not surface as an unhandled rejection.
    done.catch(() => undefined);
    return { done, cancel: () => cancel() };
  }

  /** {@inheritDoc EventBus.deadLetters} */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    return this.dead.slice(Math.max(0, this.dead.length - limit));
  }

  /** {@inheritDoc EventBus.deadLetterCount} */
  async deadLetterCount(): Promise<number> {
    return this.dead.length;
  }

  /** {@inheritDoc EventBus.putReceipt} */
  async putReceipt(receipt: WriteReceipt, opts: { ifAbsent?: boolean } = {}): Promise<void> {
    if (receipt.id === '') return;
    if (opts.ifAbsent && this.receipts.has(receipt.id)) return;
    this.receipts.delete(receipt.id);
    this.receipts.set(receipt.id, { ...receipt });
    if (this.receipts.size > this.maxReceipts) this.receipts.delete(this.receipts.keys().next().value!);
  }

  /** {@inheritDoc EventBus.getReceipt} */
  async getReceipt(id: string): Promise<WriteReceipt | null> {
    const r = this.receipts.get(id);
    return r === undefined ? null : { ...r };
  }

  /** {@inheritDoc EventBus.ping} */
  async ping(): Promise<boolean> {
    return !this.closed;
  }

  /** Stop every consumer (running handlers finish), clear timers and fail pending waits. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((c) => c.stop()));
    for (const d of this.durables.values()) {
      for (const t of d.pending.values()) clearTimeout(t);
      for (const t of d.delayed.values()) clearTimeout(t);
      d.pending.clear();
      d.delayed.clear();
    }
    for (const fail of [...this.waiters]) fail(new InProcBusError('bus closed'));
  }

  private schedulePump(d: Durable): void {
    if (d.pumpQueued || this.closed) return;
    d.pumpQueued = true;
    // Deferred so a handler that publishes or settles synchronously never re-enters the loop.
    queueMicrotask(() => {
      d.pumpQueued = false;
      this.pump(d);
    });
  }

  private pump(d: Durable): void {
    while (!this.closed && d.pullers.length > 0 && d.pending.size < this.maxAckPending) {
      const seq = d.redeliver.shift() ?? this.nextFresh(d);
      if (seq === undefined) return;
      const stored = this.log.get(seq);
      if (stored === undefined) {
        d.counts.delete(seq); // dropped by the stream limit
        continue;
      }
      this.deliver(d, stored);
    }
  }

  private nextFresh(d: Durable): number | undefined {
    while (d.cursor <= this.lastSeq) {
      const seq = d.cursor++;
      const stored = this.log.get(seq);
      if (stored !== undefined && d.subjects.some((f) => subjectMatches(f, stored.message.subject))) return seq;
    }
    return undefined;
  }

  private deliver(d: Durable, stored: Stored): void {
    const seq = stored.seq;
    const count = (d.counts.get(seq) ?? 0) + 1;
    d.counts.set(seq, count);
    d.pending.set(seq, timer(() => this.expire(d, seq), d.ackWaitMs));
    const td: TransportDelivery = {
      message: stored.message,
      seq,
      deliveryCount: count,
      ack: async () => this.ack(d, seq),
      nak: async (delayMs) => this.nak(d, seq, delayMs),
      working: async () => this.working(d, seq),
    };
    const puller = d.pullers[d.rr++ % d.pullers.length]!;
    puller.push(td);
  }

  private ack(d: Durable, seq: number): void {
    clearTimeout(d.pending.get(seq));
    d.pending.delete(seq);
    clearTimeout(d.delayed.get(seq));
    d.delayed.delete(seq);
    d.counts.delete(seq);
    const i = d.redeliver.indexOf(seq);
    if (i >= 0) d.redeliver.splice(i, 1);
    this.schedulePump(d);
  }

  private nak(d: Durable, seq: number, delayMs: number): void {
    if (!d.pending.has(seq)) return;
    clearTimeout(d.pending.get(seq));
    d.pending.delete(seq);
    if (delayMs <= 0) this.requeue(d, seq);
    else
      d.delayed.set(
        seq,
        timer(() => {
          d.delayed.delete(seq);
          this.requeue(d, seq);
        }, delayMs),
      );
    this.schedulePump(d);
  }

  private working(d: Durable, seq: number): void {
    const t = d.pending.get(seq);
    if (t === undefined) return;
    clearTimeout(t);
    d.pending.set(seq, timer(() => this.expire(d, seq), d.ackWaitMs));
  }

  private expire(d: Durable, seq: number): void {
    if (!d.pending.has(seq)) return;
    d.pending.delete(seq);
    this.requeue(d, seq);
  }

  private requeue(d: Durable, seq: number): void {
    if (d.redeliver.includes(seq)) return;
    let i = d.redeliver.length;
    while (i > 0 && d.redeliver[i - 1]! > seq) i--;
    d.redeliver.splice(i, 0, seq);
    this.schedulePump(d);
  }
}
