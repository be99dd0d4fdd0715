import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { headers, nanos, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { KeyedDispatcher, type KeyedDispatcherOptions, type TransportDelivery } from '../inproc/keyed-dispatcher';
import { subjectMatches } from '../inproc/subjects';
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
import { BusUnavailableError } from '../ports/errors';

/** Options of {@link NatsEventBus}. */
export interface NatsEventBusOptions {
  /** JetStream stream name, e.g. `CTXMESH_INGEST`. */
  stream: string;
  /** Subjects the stream stores, e.g. `["ctxmesh.ingest.>"]`. */
  subjects: string[];
  /**
   * Dead-letter subject, e.g. `ctxmesh.dlq.ingest`. It lives in its own stream
   * `<stream>_DLQ`, so dead letters are durable but never consumed as ingest.
   */
  deadLetterSubject: string;
  /** Core NATS prefix of done notices: a notice for id X goes to `<prefix>.<base64url(X)>`. */
  doneSubjectPrefix: string;
  /** A second publish of an id within this window is dropped by the server. @default 120000 ms */
  duplicateWindowMs?: number;
  /** Messages older than this are discarded (both streams); 0 keeps them. @default 604800000 ms (7 days) */
  maxAgeMs?: number;
  /** Stream storage. @default "file" */
  storage?: 'file' | 'memory';
  /** Stream replicas (clustered servers). @default 1 */
  replicas?: number;
  /** Timeout of JetStream API requests and publish acks when the caller gives none, ms. @default 5000 */
  requestTimeoutMs?: number;
  /** Unacknowledged messages a durable may have outstanding. @default 1000 */
  maxAckPending?: number;
  /** Messages pulled per batch. @default 64 */
  pullBatch?: number;
  /** Bytes the write-receipt bucket (`<stream>_RECEIPTS`) may hold; the oldest go first. @default 268435456 (256 MiB) */
  maxReceiptBytes?: number;
  /** Failures of the bus itself (acks, pulls, dead-letter publishes). @default ignored */
  onError?: (err: unknown, context: string) => void;
}

/** KV key of a write id: base64url is within the key alphabet whatever the id holds. */
function receiptKey(id: string): string {
  return `w.${Buffer.from(id).toString('base64url')}`;
}

/** Header carrying the ordering key (URI-encoded, so any key fits in a header). */
const KEY_HEADER = 'Ctxmesh-Key';
/** Header set by JetStream clients for duplicate detection. */
const MSG_ID_HEADER = 'Nats-Msg-Id';

interface DeadLetterWire {
  subject: string;
  id: string;
  key: string;
  seq: number;
  attempts: number;
  error: string;
  data: string;
}

interface Running {
  stop(): Promise<void>;
}

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split('.').map((p) => Number.parseInt(p, 10));
  return a > major || (a === major && b >= minor);
}

function sameList(a: readonly string[] | undefined, b: readonly string[]): boolean {
  return a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);
}

function isNotFound(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

/**
 * EventBus on NATS JetStream (`@nats-io/jetstream` v3).
 *
 * - The stream and its dead-letter stream are created or updated idempotently by {@link create}.
 * - `publish` sets the message id (`Nats-Msg-Id`): the server drops a repeat within the
 *   duplicate window and reports it, which `publish` returns as `false`.
 * - `consume` uses a durable pull consumer with explicit ack and `ack_wait`; unacked messages
 *   are redelivered by the server. Delivery goes through the per-key dispatcher: one message per
 *   key at a time in stream order; nak and handler errors retry in place (the ack-wait timer is
 *   kept alive with `working()`), and after `maxDeliver` attempts the message is published to the
 *   dead-letter subject with its error and acked. The server's own `max_deliver` is unlimited so
 *   a poison message always reaches the dead-letter subject instead of being silently parked.
 * - Done notices use core NATS; `awaitDone` subscribes on the same connection as `publish`, so
 *   a waiter created before publishing cannot miss its notice.
 *
 * The connection belongs to the caller: {@link close} stops consumers, not the connection.
 */
export class NatsEventBus implements EventBus {
  private readonly running = new Set<Running>();
  private readonly waits = new Set<(err: Error) => void>();
  private readonly timeoutMs: number;
  private closed = false;
  /** The shared flush of the notices published in this turn (see {@link notifyDone}). */
  private pendingFlush: Promise<void> | null = null;
  /** False from a `disconnect` status until the next `reconnect`: publishes then fail at once. */
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly opts: NatsEventBusOptions,
    private readonly receipts: KV,
  ) {
    this.timeoutMs = opts.requestTimeoutMs ?? 5000;
    void this.watchConnection();
  }

  /** Follow the connection's status, so a publish during an outage fails fast (see {@link publish}). */
  private async watchConnection(): Promise<void> {
    try {
      for await (const st of this.nc.status()) {
        if (st.type === 'disconnect' || st.type === 'close') this.connected = false;
        else if (st.type === 'reconnect') this.connected = true;
      }
    } catch (err) {
      this.opts.onError?.(err, 'connection status');
    }
  }

  /** Name of the dead-letter stream for a stream name. */
  static deadLetterStream(stream: string): string {
    return `${stream}_DLQ`;
  }

  /** Name of the write-receipt KV bucket for a stream name. */
  static receiptBucket(stream: string): string {
    return `${stream}_RECEIPTS`;
  }

  /** Every JetStream stream a bus on `stream` creates (the stream, its dead letters, its receipt bucket), e.g. to delete them. */
  static streamsOf(stream: string): string[] {
    return [stream, NatsEventBus.deadLetterStream(stream), `KV_${NatsEventBus.receiptBucket(stream)}`];
  }

  /**
   * Connect the bus to JetStream and create or update its two streams.
   * @param nc an open connection (e.g. from `@ctxmesh/runtime` `connectNats`)
   * @throws when JetStream is not enabled or a stream cannot be created within the timeout
   */
  static async create(nc: NatsConnection, opts: NatsEventBusOptions): Promise<NatsEventBus> {
    const timeout = opts.requestTimeoutMs ?? 5000;
    const jsm = await jetstreamManager(nc, { timeout });
    const js = jetstream(nc, { timeout });
    // Receipts live as long as the messages they describe (the stream's max age).
    const receipts = await new Kvm(js).create(NatsEventBus.receiptBucket(opts.stream), {
      history: 1,
      ttl: opts.maxAgeMs ?? 7 * 24 * 3600 * 1000,
      max_bytes: opts.maxReceiptBytes ?? 256 * 1024 * 1024,
      storage: opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
      replicas: opts.replicas ?? 1,
    });
    const bus = new NatsEventBus(nc, js, jsm, opts, receipts);
    await bus.ensureStream(opts.stream, opts.subjects);
    await bus.ensureStream(NatsEventBus.deadLetterStream(opts.stream), [opts.deadLetterSubject]);
    return bus;
  }

  private async ensureStream(name: string, subjects: string[]): Promise<void> {
    const want: Partial<StreamConfig> = {
      subjects,
      duplicate_window: nanos(this.opts.duplicateWindowMs ?? 120_000),
      max_age: nanos(this.opts.maxAgeMs ?? 7 * 24 * 3600 * 1000),
    };
    let current;
    try {
      current = await this.jsm.streams.info(name);
    } catch (err) {
      if (!isNotFound(err, JetStreamApiCodes.StreamNotFound)) throw err;
    }
    if (current === undefined) {
      try {
        await this.jsm.streams.add({
          name,
          ...want,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          storage: this.opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
          num_replicas: this.opts.replicas ?? 1,
        });
        return;
      } catch (err) {
        // Another process created it between our info and add: fall through to an update.
        current = await this.jsm.streams.info(name).catch(() => {
          throw err;
        });
      }
    }
    const c = current.config;
    if (!sameList(c.subjects, subjects) || c.duplicate_window !== want.duplicate_window || c.max_age !== want.max_age) {
      await this.jsm.streams.update(name, { ...c, ...want });
    }
  }

  /**
   * {@inheritDoc EventBus.publish}
   *
   * Fails at once while the connection is down (a disconnect, until nats.js reconnects on its
   * own), and waits for the stream's ack at most the request timeout even when the caller's
   * budget is longer: a write the bus cannot take is a fast 503, not a request budget spent
   * waiting for a server that is gone.
   * @throws BusUnavailableError while disconnected
   */
  async publish(message: BusMessage, opts: PublishOptions = {}): Promise<boolean> {
    if (this.closed || !this.connected || this.nc.isClosed()) throw new BusUnavailableError('NATS is not connected');
    const h = headers();
    h.set(KEY_HEADER, encodeURIComponent(message.key));
    const ack = await this.js.publish(message.subject, message.data, {
      msgID: message.id,
      headers: h,
      timeout: Math.max(1, Math.min(opts.timeoutMs ?? this.timeoutMs, this.timeoutMs)),
    });
    return !ack.duplicate;
  }

  /** {@inheritDoc EventBus.consume} */
  async consume(opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer> {
    return this.subscribe(opts, this.opts.pullBatch ?? 64, (o) => new KeyedDispatcher(handler, o));
  }

  /**
   * {@inheritDoc EventBus.consumeBatches}
   *
   * The pull consumer asks the server for at least `maxBatch` messages at a time, so a burst
   * reaches the dispatcher in as few pulls as the batches it forms.
   */
  async consumeBatches(opts: BatchConsumeOptions, handler: (batch: Delivery[]) => Promise<void>): Promise<Consumer> {
    const batch = { maxBatch: opts.maxBatch ?? DEFAULT_MAX_BATCH, maxWaitMs: opts.maxWaitMs ?? DEFAULT_BATCH_WAIT_MS };
    const pull = Math.max(this.opts.pullBatch ?? 64, 2 * batch.maxBatch);
    return this.subscribe({ ...opts, concurrency: opts.concurrency ?? 1 }, pull, (o) => new KeyedDispatcher(handler, o, batch));
  }

  private async subscribe(opts: ConsumeOptions, pullBatch: number, makeDispatcher: (o: KeyedDispatcherOptions) => KeyedDispatcher): Promise<Consumer> {
    const stream = this.opts.stream;
    // filter_subjects needs nats-server 2.10; on older servers a multi-subject durable reads the
    // whole stream and acks what it does not want (each durable has its own ack state).
    const serverFilters = opts.subjects.length === 1 || versionAtLeast(this.nc.info?.version ?? '0.0', 2, 10);
    const filter: Partial<ConsumerConfig> = !serverFilters
      ? {}
      : opts.subjects.length === 1
        ? { filter_subject: opts.subjects[0] }
        : { filter_subjects: opts.subjects };
    const config: Partial<ConsumerConfig> = {
      durable_name: opts.durable,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      ack_wait: nanos(opts.ackWaitMs),
      max_deliver: -1,
      max_ack_pending: this.opts.maxAckPending ?? 1000,
      ...filter,
    };
    try {
      await this.jsm.consumers.info(stream, opts.durable);
      await this.jsm.consumers.update(stream, opts.durable, config);
    } catch (err) {
      if (!isNotFound(err, JetStreamApiCodes.ConsumerNotFound)) throw err;
      await this.jsm.consumers.add(stream, config);
    }
    const onError = this.opts.onError;
    const dispatcher = makeDispatcher({
      maxDeliver: opts.maxDeliver,
      ackWaitMs: opts.ackWaitMs,
      concurrency: opts.concurrency ?? 8,
      retryDelayMs: opts.retryDelayMs ?? 1000,
      deadLetter: (td, error, attempts) => this.publishDeadLetter(td, error, attempts),
      onError: (err, seq) => onError?.(err, `${opts.durable} seq ${seq}`),
    });
    const consumer = await this.js.consumers.get(stream, opts.durable);
    const messages: ConsumerMessages = await consumer.consume({ max_messages: pullBatch });
    const wanted = (subject: string): boolean => serverFilters || opts.subjects.some((f) => subjectMatches(f, subject));
    const pump = (async () => {
      try {
        for await (const m of messages) {
          if (!wanted(m.subject)) m.ack();
          else dispatcher.push(this.toTransport(m));
        }
      } catch (err) {
        onError?.(err, `${opts.durable} pull`);
      }
    })();
    let stopping: Promise<void> | null = null;
    const run: Running = {
      stop: () => {
        stopping ??= (async () => {
          await messages.close().catch((err: unknown) => onError?.(err, `${opts.durable} close`));
          await pump;
          await dispatcher.stop();
          this.running.delete(run);
        })();
        return stopping;
      },
    };
    this.running.add(run);
    return { stop: () => run.stop() };
  }

  private toTransport(m: JsMsg): TransportDelivery {
    const key = m.headers?.get(KEY_HEADER);
    return {
      message: {
        subject: m.subject,
        id: m.headers?.get(MSG_ID_HEADER) ?? '',
        key: key ? decodeURIComponent(key) : '',
        data: m.data,
      },
      seq: m.seq,
      deliveryCount: m.info.deliveryCount,
      ack: async () => {
        await m.ackAck({ timeout: this.timeoutMs });
      },
      nak: async (delayMs) => m.nak(delayMs > 0 ? delayMs : undefined),
      working: async () => m.working(),
    };
  }

  private async publishDeadLetter(td: TransportDelivery, error: string, attempts: number): Promise<void> {
    const wire: DeadLetterWire = {
      subject: td.message.subject,
      id: td.message.id,
      key: td.message.key,
      seq: td.seq,
      attempts,
      error,
      data: Buffer.from(td.message.data).toString('base64'),
    };
    // The id makes a repeat (the ack after it was lost, then a redelivery) a server-side duplicate.
    await this.js.publish(this.opts.deadLetterSubject, JSON.stringify(wire), {
      msgID: `dlq:${this.opts.stream}:${td.seq}`,
      timeout: this.timeoutMs,
    });
  }

  private doneSubject(id: string): string {
    return `${this.opts.doneSubjectPrefix}.${id === '' ? '_' : Buffer.from(id).toString('base64url')}`;
  }

  /**
   * {@inheritDoc EventBus.notifyDone}
   *
   * Resolves once the server has the notice (a PING round trip after it); notices published in
   * one turn of the event loop (a batch's) share that round trip instead of one each.
   */
  async notifyDone(notice: DoneNotice): Promise<void> {
    this.nc.publish(this.doneSubject(notice.id), JSON.stringify(notice));
    await this.flushSoon();
  }

  /** One flush for everything published before the next microtask checkpoint. */
  private flushSoon(): Promise<void> {
    this.pendingFlush ??= new Promise<void>((resolve, reject) => {
      queueMicrotask(() => {
        this.pendingFlush = null;
        this.nc.flush().then(resolve, reject);
      });
    });
    return this.pendingFlush;
  }

  /** {@inheritDoc EventBus.awaitDone} */
  awaitDone(id: string, signal: AbortSignal): { done: Promise<DoneNotice>; cancel(): void } {
    let cancel: () => void = () => undefined;
    const done = new Promise<DoneNotice>((resolve, reject) => {
      let sub: Subscription | undefined;
      const cleanup = (): void => {
        sub?.unsubscribe();
        signal.removeEventListener('abort', onAbort);
        this.waits.delete(fail);
      };
      const fail = (err: Error): void => {
        cleanup();
        reject(err);
      };
      const onAbort = (): void => fail(new AwaitDoneAbortedError(id, signal.reason));
      cancel = () => fail(new AwaitDoneAbortedError(id, 'cancelled'));
      if (signal.aborted) return onAbort();
      sub = this.nc.subscribe(this.doneSubject(id), {
        max: 1,
        callback: (err, msg) => {
          if (err !== null) return fail(err);
          try {
            const notice = msg.json<DoneNotice>();
            cleanup();
            resolve(notice);
          } catch (e) {
            fail(e as Error);
          }
        },
      });
      signal.addEventListener('abort', onAbort, { once: true });
      this.waits.add(fail);
    });
    // A cancelled wait nobody awaits must not surface as an unhandled rejection.
    done.catch(() => undefined);
    return { done, cancel: () => cancel() };
  }

  /** {@inheritDoc EventBus.deadLetters} */
  async deadLetters(limit = 100): Promise<DeadLetter[]> {
    const name = NatsEventBus.deadLetterStream(this.opts.stream);
    const { state } = await this.jsm.streams.info(name);
    const out: DeadLetter[] = [];
    for (let seq = state.last_seq; seq >= state.first_seq && seq > 0 && out.length < limit; seq--) {
      const sm = await this.jsm.streams.getMessage(name, { seq }).catch((err: unknown) => {
        if (isNotFound(err, JetStreamApiCodes.NoMessageFound)) return null; // deleted by a limit
        throw err;
      });
      if (sm === null) continue;
      const w = sm.json<DeadLetterWire>();
      out.push({
        message: { subject: w.subject, id: w.id, key: w.key, data: new Uint8Array(Buffer.from(w.data, 'base64')) },
        seq: w.seq,
        error: w.error,
        attempts: w.attempts,
      });
    }
    return out.reverse();
  }

  /** {@inheritDoc EventBus.deadLetterCount} */
  async deadLetterCount(): Promise<number> {
    const { state } = await this.jsm.streams.info(NatsEventBus.deadLetterStream(this.opts.stream));
    return state.messages;
  }

  /** {@inheritDoc EventBus.putReceipt} */
  async putReceipt(receipt: WriteReceipt, opts: { ifAbsent?: boolean } = {}): Promise<void> {
    if (receipt.id === '') return;
    const key = receiptKey(receipt.id);
    const data = JSON.stringify(receipt);
    if (!opts.ifAbsent) {
      await this.receipts.put(key, data);
      return;
    }
    try {
      await this.receipts.create(key, data);
    } catch (err) {
      // "wrong last sequence": a receipt exists (the consumer settled first); keep it.
      const exists =
        err instanceof JetStreamApiError &&
        (err.code === JetStreamApiCodes.StreamWrongLastSequence || err.code === JetStreamApiCodes.StreamWrongLastSequenceUnknown);
      if (!exists) throw err;
    }
  }

  /** {@inheritDoc EventBus.getReceipt} */
  async getReceipt(id: string): Promise<WriteReceipt | null> {
    if (id === '') return null;
    const e = await this.receipts.get(receiptKey(id));
    if (e === null || e.operation !== 'PUT' || e.length === 0) return null;
    return e.json<WriteReceipt>();
  }

  /** Readiness: the connection is open and the stream answers within the request timeout. */
  async ping(): Promise<boolean> {
    if (this.closed || !this.connected || this.nc.isClosed()) return false;
    try {
      await this.jsm.streams.info(this.opts.stream);
      return true;
    } catch {
      return false;
    }
  }

  /** Stop every consumer (running handlers finish) and fail pending waits; the connection stays open. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.running].map((r) => r.stop()));
    for (const fail of [...this.waits]) fail(new Error('event bus closed'));
  }
}
