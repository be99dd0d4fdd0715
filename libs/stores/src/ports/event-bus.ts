/**
 * EventBus port: the ingest stream (writes and deletes) and trace rows. Adapters: NATS
 * JetStream (durable stream, explicit ack, redelivery, dead letters) and an in-process
 * queue with the same semantics inside one process.
 */

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

/** A delivery to a consumer. */
export interface Delivery {
  /** The message. */
  message: BusMessage;
  /** Stream sequence (monotonic per stream). */
  seq: number;
  /** 1 on first delivery, then 2, 3… */
  attempt: number;
  /** Acknowledge: the message is done. */
  ack(): Promise<void>;
  /** Negative-acknowledge: redeliver after `delayMs`. */
  nak(delayMs?: number): Promise<void>;
  /** Give up: publish to the dead-letter subject with the error, then ack. */
  deadLetter(error: string): Promise<void>;
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
}

/** A running consumer. */
export interface Consumer {
  /** Stop consuming (in-flight handlers finish). */
  stop(): Promise<void>;
}

/** The port. */
export interface EventBus {
  /** Publish durably; resolves once the stream has it. @returns false when dropped as a duplicate id */
  publish(message: BusMessage): Promise<boolean>;
  /** Consume with explicit ack; handler errors nak. */
  consume(opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer>;
  /** Announce that a message was handled. */
  notifyDone(notice: DoneNotice): Promise<void>;
  /**
   * Wait for the done notice of a message id. Subscribe before publishing to not miss it.
   * @returns a handle whose `done` resolves with the notice or rejects on timeout/abort
   */
  awaitDone(id: string, signal: AbortSignal): { done: Promise<DoneNotice>; cancel(): void };
  /** Dead letters seen on the dead-letter subject (newest last), for operators and tests. */
  deadLetters(limit?: number): Promise<Array<{ message: BusMessage; error: string; attempts: number }>>;
  /** Readiness probe. */
  ping(): Promise<boolean>;
  /** Drain and close. */
  close(): Promise<void>;
}
