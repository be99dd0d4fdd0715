/**
 * EventBus port: the ingest stream (writes and deletes) and trace rows. Adapters: NATS
 * JetStream (durable stream, explicit ack, redelivery, dead letters) and an in-process
 * queue with the same semantics inside one process.
 */
import { AwaitDoneAbortedError } from './errors';

export { AwaitDoneAbortedError };

/** A message as published. */
export interface BusMessage {
  /** Subject, e.g. `ctxmesh.ingest.write`. */
  subject: string;
  /** Message id: a second publish with the same id is dropped. */
  id: string;
  /** Payload bytes. */
  data: Uint8Array;
  /** Ordering key: messages with one key are delivered in publish order (the URI). */
  key: string;
}

/**
 * A delivery to a consumer. Exactly one settle call counts (later ones are no-ops).
 * Messages of one key reach the handler one at a time, in stream order: while a message is
 * being handled, waiting for a nak's retry, or handed back unsettled (until its ack wait ends),
 * later messages of its key wait. If neither ack, nak nor deadLetter is called and the handler
 * does not throw, the message stays unacked and is redelivered after the ack wait (this is what
 * a crashed consumer looks like). Handlers should still skip a message whose `seq` is not above
 * the last one they applied for its key: after a crash the transport may redeliver.
 */
export interface Delivery {
  /** The message. */
  message: BusMessage;
  /** Stream sequence (monotonic per stream). */
  seq: number;
  /** 1 on first delivery, then 2, 3… (counts transport redeliveries and nak retries). */
  attempt: number;
  /** Acknowledge: the message is done. */
  ack(): Promise<void>;
  /**
   * Negative-acknowledge: handle this message again after `delayMs` (default: the consumer's
   * `retryDelayMs`), keeping its key's order. On the `maxDeliver`-th attempt it dead-letters.
   */
  nak(delayMs?: number): Promise<void>;
  /** Give up: publish to the dead-letter subject with the error, then ack. */
  deadLetter(error: string): Promise<void>;
}

/** A message that was given up on, as kept on the dead-letter subject. */
export interface DeadLetter {
  /** The original message. */
  message: BusMessage;
  /** Stream sequence of the original message. */
  seq: number;
  /** Why: the handler's error text, or the reason the bus gave up. */
  error: string;
  /** Attempts made. */
  attempts: number;
}

/** Outcome notification published after a message is handled (for `wait:true`). */
export interface DoneNotice {
  /** Message id. */
  id: string;
  /** applied or failed. */
  status: 'applied' | 'failed';
  /** Content hash of the indexed version (applied). */
  contentHash?: string;
  /** Error reason (failed), e.g. ALREADY_EXISTS. */
  reason?: string;
  /** Error message (failed). */
  message?: string;
  /** Extra result fields. */
  nodes?: number;
}

/**
 * What the bus remembers of one write, for a caller who did not wait (`wait:false`) and polls
 * (`GET /api/v1/content/status`): the publisher records it `queued`, the consumer `applied` or
 * `failed` (refused, malformed, or dead-lettered after its retries). Kept for the stream's
 * retention (NATS: a KV bucket beside the stream; in process: a bounded map).
 */
export interface WriteReceipt {
  /** Write id (the bus message id). */
  id: string;
  /** Where the write is. */
  state: 'queued' | 'applied' | 'failed';
  /** Node URI. */
  uri: string;
  /** Writer's account: only it may read the receipt. */
  account: string;
  /** Writer's user: an ordinary user reads only their own receipts. */
  user: string;
  /** Failure reason (failed), e.g. UNAVAILABLE, INVALID_ARGUMENT, ALREADY_EXISTS. */
  reason?: string;
  /** Failure message (failed). */
  message?: string;
  /** Version hash (applied). */
  contentHash?: string;
  /** When this state was recorded, ms since epoch. */
  atMs: number;
}

/** Consumer options. */
export interface ConsumeOptions {
  /** Durable consumer name. */
  durable: string;
  /** Subjects (wildcards allowed). */
  subjects: string[];
  /** Deliveries before a message goes to the dead-letter subject. */
  maxDeliver: number;
  /** Ack wait: redeliver when not acked in time. */
  ackWaitMs: number;
  /** Messages handled at once (always one per key). @default 8 */
  concurrency?: number;
  /**
   * Delay before a failed message is retried: `retryDelayMs · 2^(attempt−1)`, capped at 30 s;
   * also the default of `nak()`. @default 1000
   */
  retryDelayMs?: number;
}

/** Default most messages in one batch of {@link EventBus.consumeBatches}. */
export const DEFAULT_MAX_BATCH = 64;
/** Default wait for a batch to fill, ms ({@link BatchConsumeOptions.maxWaitMs}). */
export const DEFAULT_BATCH_WAIT_MS = 10;

/** Options of {@link EventBus.consumeBatches}. */
export interface BatchConsumeOptions extends ConsumeOptions {
  /**
   * Batches handled at once (overrides {@link ConsumeOptions.concurrency}, which counts handler
   * calls). @default 1
   */
  concurrency?: number;
  /** Most messages in one batch (at most one per key). @default 64 */
  maxBatch?: number;
  /**
   * How long a batch that is not full waits for more messages, ms from when its oldest message
   * became ready; 0 hands over whatever is ready as soon as a batch slot is free. @default 10
   */
  maxWaitMs?: number;
}

/** Publish options. */
export interface PublishOptions {
  /** Give up waiting for the stream's acknowledgement after this many ms (relative, NATS-style). */
  timeoutMs?: number;
}

/** A running consumer. */
export interface Consumer {
  /** Stop consuming (in-flight handlers finish). */
  stop(): Promise<void>;
}

/** The port. */
export interface EventBus {
  /**
   * Publish durably; resolves once the stream has it.
   * @returns false when dropped as a duplicate id (same id within the duplicate window)
   */
  publish(message: BusMessage, opts?: PublishOptions): Promise<boolean>;
  /**
   * Consume with explicit ack under a durable name (a second consumer of the same durable shares
   * its messages; a new one after a stop resumes where it left). Handler errors retry, then
   * dead-letter after `maxDeliver` attempts with the error text.
   */
  consume(opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer>;
  /**
   * {@link consume}, handing the handler batches: the head message of each of up to `maxBatch`
   * keys, in stream order, so a key's messages still reach the handler one at a time and in
   * order. Every delivery of a batch is settled on its own (ack, nak, deadLetter), exactly as a
   * delivery of {@link consume}; when the handler throws, each delivery it had not settled counts
   * as failed (retried, or dead-lettered on its last attempt) and the settled ones stay settled.
   */
  consumeBatches(opts: BatchConsumeOptions, handler: (batch: Delivery[]) => Promise<void>): Promise<Consumer>;
  /** Announce that a message was handled. */
  notifyDone(notice: DoneNotice): Promise<void>;
  /**
   * Wait for the done notice of a message id. Subscribe before publishing to not miss it.
   * @returns a handle whose `done` resolves with the notice, or rejects with
   *   {@link AwaitDoneAbortedError} when `signal` fires or `cancel()` is called
   */
  awaitDone(id: string, signal: AbortSignal): { done: Promise<DoneNotice>; cancel(): void };
  /** The last `limit` (default 100) dead letters, oldest first, for operators and tests. */
  deadLetters(limit?: number): Promise<DeadLetter[]>;
  /** Dead letters the bus holds now (the `ctxmesh_ingest_dead_letters` gauge). */
  deadLetterCount(): Promise<number>;
  /**
   * Record a write's state. With `ifAbsent`, only when the id has no receipt yet (a publisher's
   * `queued` never overwrites a consumer's faster `applied`). Ids that are "" are not kept.
   */
  putReceipt(receipt: WriteReceipt, opts?: { ifAbsent?: boolean }): Promise<void>;
  /** The receipt of a write id, or null when unknown (never recorded, or expired). */
  getReceipt(id: string): Promise<WriteReceipt | null>;
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Drain and close. */
  close(): Promise<void>;
}
