import type { BusMessage, Delivery } from '../ports/event-bus';

/** One (re)delivery as a transport (JetStream or the in-process stream) hands it over. */
export interface TransportDelivery {
  /** The message. */
  message: BusMessage;
  /** Stream sequence. */
  seq: number;
  /** The transport's delivery count (1 = first delivery). */
  deliveryCount: number;
  /** Acknowledge to the transport. */
  ack(): Promise<void>;
  /** Hand the message back to the transport, to be redelivered after `delayMs`. */
  nak(delayMs: number): Promise<void>;
  /** Reset the transport's ack-wait timer. */
  working(): Promise<void>;
}

/** Options of {@link KeyedDispatcher}. */
export interface KeyedDispatcherOptions {
  /** Attempts before a message is dead-lettered. */
  maxDeliver: number;
  /** The transport's ack wait in ms: bounds one handler attempt and an unsettled hand-back. */
  ackWaitMs: number;
  /** Handler calls running at once (batches, in batch mode). */
  concurrency: number;
  /** Base retry delay in ms (doubles per attempt, capped at {@link MAX_RETRY_DELAY_MS}). */
  retryDelayMs: number;
  /** Publish a dead letter durably (the dispatcher acks the original afterwards). */
  deadLetter(d: TransportDelivery, error: string, attempts: number): Promise<void>;
  /** Where failures of the bus itself go (transport ack/nak/dead-letter errors). */
  onError?(err: unknown, seq: number): void;
}

/** How a dispatcher in batch mode forms its batches. */
export interface BatchOptions {
  /** Most messages handed to the handler in one call (at most one per key, in stream order). */
  maxBatch: number;
  /**
   * How long a batch that is not full may wait for more messages, ms from the moment its oldest
   * message became ready; 0 hands over what is ready as soon as a handler slot is free.
   */
  maxWaitMs: number;
}

/** Upper bound of the retry back-off, ms. */
export const MAX_RETRY_DELAY_MS = 30_000;

type State = 'queued' | 'running' | 'retry-wait' | 'unsettled';

interface Item {
  seq: number;
  key: string;
  /** Latest transport handle (a redelivery of a held message replaces it). */
  td: TransportDelivery;
  /** Retries done here after a nak or handler error (the transport did not count them). */
  localRetries: number;
  state: State;
  timer?: NodeJS.Timeout;
  /** When the item last became ready to run (queued), ms (performance.now). */
  readyAt: number;
}

/** One message of a running handler call: its delivery, and how the call's end settles it. */
interface Control {
  item: Item;
  delivery: Delivery;
  /** True once ack, nak or deadLetter was called. */
  settled(): boolean;
  /** The handler threw (for the whole call): retry the message, or dead-letter it on its last attempt. */
  fail(err: unknown): Promise<void>;
  /** The handler returned without settling it: hold its key until it is settled or its ack wait ends. */
  handBack(): void;
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  return String(err);
}

/**
 * Per-key ordered dispatch on top of an at-least-once transport. Messages are queued per key
 * in stream-sequence order and only a key's head message runs, so one key's messages reach the
 * handler one at a time and in order, while different keys run concurrently.
 *
 * In batch mode (`maxBatch` > 1) the handler is given several keys' head messages at once, in
 * stream order: whatever is ready when a handler slot frees up, up to `maxBatch`, after waiting
 * at most `maxWaitMs` for a batch to fill. Each message of a batch is settled on its own; a
 * handler that throws fails every message it had not settled (each retries, or dead-letters on
 * its last attempt, on its own).
 *
 * Retries of a nak or handler error happen here, in place, rather than through the transport:
 * the message keeps its key's head (a transport redelivery could let a later message of the key
 * overtake it), and its ack-wait timer is kept alive meanwhile. Messages waiting behind their
 * key are kept alive the same way. A message handed back unsettled blocks its key until it is
 * settled, redelivered, or its ack wait ends (the transport then redelivers it).
 */
export class KeyedDispatcher {
  private readonly queues = new Map<string, Item[]>();
  private readonly bySeq = new Map<number, Item>();
  private readonly inflight = new Set<Promise<void>>();
  private readonly heartbeat: NodeJS.Timeout;
  private readonly maxBatch: number;
  private readonly maxWaitMs: number;
  /** Armed while a batch that is not full waits for more messages. */
  private fillTimer: NodeJS.Timeout | null = null;
  private running = 0;
  private stopped = false;

  private readonly handler: (ds: Delivery[]) => Promise<void>;

  /**
   * @param handler the consumer's handler: one delivery per call, or (batch mode) a batch
   * @param opts limits, and how to publish a dead letter
   * @param batch batch mode: how batches are formed
   */
  constructor(handler: (d: Delivery) => Promise<void>, opts: KeyedDispatcherOptions);
  constructor(handler: (ds: Delivery[]) => Promise<void>, opts: KeyedDispatcherOptions, batch: BatchOptions);
  constructor(
    handler: ((d: Delivery) => Promise<void>) | ((ds: Delivery[]) => Promise<void>),
    private readonly opts: KeyedDispatcherOptions,
    batch?: BatchOptions,
  ) {
    if (batch) {
      this.handler = handler as (ds: Delivery[]) => Promise<void>;
      this.maxBatch = Math.max(1, Math.floor(batch.maxBatch));
      this.maxWaitMs = Math.max(0, batch.maxWaitMs);
    } else {
      const one = handler as (d: Delivery) => Promise<void>;
      this.handler = (ds) => one(ds[0]!);
      this.maxBatch = 1;
      this.maxWaitMs = 0;
    }
    this.heartbeat = setInterval(() => this.keepAlive(), Math.max(10, Math.floor(opts.ackWaitMs / 3)));
    this.heartbeat.unref();
  }

  /** Messages held (queued, running, waiting to retry, or handed back unsettled). */
  get size(): number {
    return this.bySeq.size;
  }

  /** Accept a (re)delivery from the transport. After {@link stop} it is handed straight back. */
  push(td: TransportDelivery): void {
    if (this.stopped) {
      void this.guard(td.seq, td.nak(0));
      return;
    }
    const held = this.bySeq.get(td.seq);
    if (held !== undefined) {
      // The transport redelivered a message we still hold (its ack wait ran out): keep one copy,
      // settle through the newest handle, and run it again if it had been handed back unsettled.
      held.td = td;
      if (held.state === 'unsettled') {
        clearTimeout(held.timer);
        this.ready(held);
        this.schedule();
      }
      return;
    }
    const item: Item = { seq: td.seq, key: td.message.key, td, localRetries: 0, state: 'queued', readyAt: performance.now() };
    this.bySeq.set(item.seq, item);
    const q = this.queues.get(item.key);
    if (q === undefined) this.queues.set(item.key, [item]);
    else {
      // Sorted insert: after a crash, redeliveries may arrive behind newer first deliveries.
      let i = q.length;
      while (i > 0 && q[i - 1]!.seq > item.seq && q[i - 1]!.state === 'queued') i--;
      q.splice(i, 0, item);
    }
    this.schedule();
  }

  /**
   * Stop: wait for running handlers, then hand held messages back to the transport for prompt
   * redelivery, in sequence order. A key whose head a handler returned unsettled is left alone,
   * head and followers, to the ack wait (exactly as if this consumer had crashed): the head's
   * wait ends first, so the transport still redelivers that key in order.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    if (this.fillTimer !== null) clearTimeout(this.fillTimer);
    this.fillTimer = null;
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
    for (const q of this.queues.values()) {
      for (const item of q) clearTimeout(item.timer);
      if (q[0]?.state === 'unsettled') continue;
      for (const item of q) void this.guard(item.seq, item.td.nak(0));
    }
    this.bySeq.clear();
    this.queues.clear();
  }

  private ready(item: Item): void {
    item.state = 'queued';
    item.readyAt = performance.now();
  }

  /** Heads of keys that are ready to run, oldest stream sequence first, at most `limit`. */
  private readyHeads(limit: number): Item[] {
    const heads: Item[] = [];
    let first: Item | undefined;
    for (const q of this.queues.values()) {
      const head = q[0];
      if (head === undefined || head.state !== 'queued') continue;
      heads.push(head);
      if (first === undefined || head.seq < first.seq) first = head;
    }
    if (first === undefined) return [];
    if (limit === 1) return [first];
    heads.sort((a, b) => a.seq - b.seq);
    return heads.length > limit ? heads.slice(0, limit) : heads;
  }

  private schedule(): void {
    if (this.stopped) return;
    while (this.running < this.opts.concurrency) {
      const batch = this.readyHeads(this.maxBatch);
      if (batch.length === 0) return;
      if (batch.length < this.maxBatch && this.maxWaitMs > 0) {
        // Not full: give it until its oldest message has waited maxWaitMs.
        let oldest = Infinity;
        for (const it of batch) oldest = Math.min(oldest, it.readyAt);
        const due = oldest + this.maxWaitMs - performance.now();
        if (due > 0) {
          if (this.fillTimer === null) {
            this.fillTimer = setTimeout(() => {
              this.fillTimer = null;
              this.schedule();
            }, Math.ceil(due));
          }
          return;
        }
      }
      this.start(batch);
    }
  }

  private start(items: Item[]): void {
    for (const item of items) item.state = 'running';
    this.running++;
    const p = this.run(items).finally(() => {
      this.running--;
      this.inflight.delete(p);
      this.schedule();
    });
    this.inflight.add(p);
  }

  private async run(items: Item[]): Promise<void> {
    const controls: Control[] = [];
    const expired: Array<Promise<void>> = [];
    for (const item of items) {
      const attempt = item.td.deliveryCount + item.localRetries;
      if (attempt > this.opts.maxDeliver) {
        // Delivered more often than allowed without being settled: the consumer died (or ran past
        // the ack wait) on every try, so the handler never got to report an error.
        expired.push(this.guard(item.seq, this.deadLetter(item, `delivered ${attempt - 1} times without being settled`, attempt)));
      } else controls.push(this.control(item, attempt));
    }
    await Promise.all(expired);
    if (controls.length === 0) return;
    try {
      await this.handler(controls.map((c) => c.delivery));
      for (const c of controls) if (!c.settled()) c.handBack();
    } catch (err) {
      await Promise.all(controls.map((c) => c.fail(err)));
    }
  }

  private async deadLetter(item: Item, error: string, attempt: number): Promise<void> {
    try {
      await this.opts.deadLetter(item.td, error, attempt);
      await item.td.ack();
    } finally {
      this.finish(item);
    }
  }

  /** The delivery of one running message and what the end of its handler call does to it. */
  private control(item: Item, attempt: number): Control {
    let settled = false;
    const claim = (): boolean => {
      if (settled) return false;
      settled = true;
      return true;
    };
    const retry = (delayMs: number): void => {
      if (attempt >= this.opts.maxDeliver) {
        void this.guard(item.seq, this.deadLetter(item, `gave up after ${attempt} attempts`, attempt));
        return;
      }
      item.localRetries++;
      item.state = 'retry-wait';
      item.timer = setTimeout(() => {
        this.ready(item);
        this.schedule();
      }, Math.max(0, delayMs));
    };
    const delivery: Delivery = {
      message: item.td.message,
      seq: item.seq,
      attempt,
      ack: async () => {
        if (!claim()) return;
        try {
          await item.td.ack();
        } finally {
          this.finish(item);
        }
      },
      nak: async (delayMs?: number) => {
        if (!claim()) return;
        retry(delayMs ?? this.opts.retryDelayMs);
      },
      deadLetter: async (error: string) => {
        if (!claim()) return;
        await this.deadLetter(item, error, attempt);
      },
    };
    return {
      item,
      delivery,
      settled: () => settled,
      fail: async (err: unknown) => {
        if (!claim()) return;
        if (attempt >= this.opts.maxDeliver) await this.guard(item.seq, this.deadLetter(item, errorText(err), attempt));
        else retry(Math.min(this.opts.retryDelayMs * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS));
      },
      handBack: () => {
        // Handed back unsettled: the handler may still settle later; until then, or until the
        // transport's ack wait ends and it redelivers, the key stays blocked.
        item.state = 'unsettled';
        item.timer = setTimeout(() => this.finish(item), this.opts.ackWaitMs);
      },
    };
  }

  /** Forget a message (settled, or left to the transport) and let its key move on. */
  private finish(item: Item): void {
    clearTimeout(item.timer);
    if (this.bySeq.get(item.seq) !== item) return;
    this.bySeq.delete(item.seq);
    const q = this.queues.get(item.key);
    if (q !== undefined) {
      const i = q.indexOf(item);
      if (i >= 0) q.splice(i, 1);
      if (q.length === 0) this.queues.delete(item.key);
      else if (i === 0 && q[0]!.state === 'queued') q[0]!.readyAt = performance.now();
    }
    this.schedule();
  }

  private keepAlive(): void {
    for (const item of this.bySeq.values()) {
      if (item.state === 'queued' || item.state === 'retry-wait') void this.guard(item.seq, item.td.working());
    }
  }

  /** Settle a bus call, reporting (not throwing) its failure; never rejects. */
  private guard(seq: number, p: Promise<void>): Promise<void> {
    return p.catch((err: unknown) => this.opts.onError?.(err, seq));
  }
}
