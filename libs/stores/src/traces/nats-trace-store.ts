/**
 * TraceStore on NATS JetStream: every trace is one message on its own subject
 * (`<prefix>.<id>`) of a limits-retention stream, so a read by id is one "last message by
 * subject" lookup and retention is the stream's `max_age`. The message id is the trace id, so a
 * retried publish within the duplicate window is dropped by the server.
 */
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { nanos, type NatsConnection } from '@nats-io/transport-node';
import { checkTraceId, DEFAULT_TRACE_MAX_AGE_MS, type TraceRow, type TraceStore } from './trace-store';

/** Options of {@link NatsTraceStore}. */
export interface NatsTraceStoreOptions {
  /** Stream name. @default "CTXMESH_TRACES" */
  stream?: string;
  /** Subject prefix; a trace with id X is stored on `<prefix>.X`. @default "ctxmesh.traces" */
  subjectPrefix?: string;
  /** Retention (stream `max_age`), ms. @default 604800000 (7 days) */
  maxAgeMs?: number;
  /** Stream storage. @default "file" */
  storage?: 'file' | 'memory';
  /** Stream replicas. @default 1 */
  replicas?: number;
  /** Timeout of JetStream API requests and publish acks, ms. @default 5000 */
  requestTimeoutMs?: number;
}

/** The wire form of a row (the row itself, as JSON). */
interface WireRow {
  id: string;
  account: string;
  createdAt: number;
  data: Record<string, unknown>;
}

/**
 * TraceStore on JetStream (`@nats-io/jetstream` v3). The stream is created or updated by
 * {@link create}; the connection belongs to the caller.
 */
export class NatsTraceStore implements TraceStore {
  private closed = false;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    /** Stream name in use. */
    readonly stream: string,
    private readonly prefix: string,
    private readonly timeoutMs: number,
  ) {}

  /**
   * Connect to JetStream and create (or update) the trace stream.
   * @param nc an open connection (e.g. from `@ctxmesh/runtime` `connectNats`)
   * @throws when JetStream is not enabled or the stream cannot be created within the timeout
   */
  static async create(nc: NatsConnection, opts: NatsTraceStoreOptions = {}): Promise<NatsTraceStore> {
    const timeout = opts.requestTimeoutMs ?? 5000;
    const stream = opts.stream ?? 'CTXMESH_TRACES';
    const prefix = (opts.subjectPrefix ?? 'ctxmesh.traces').replace(/\.+$/, '');
    const jsm = await jetstreamManager(nc, { timeout });
    const maxAgeMs = Math.max(1000, opts.maxAgeMs ?? DEFAULT_TRACE_MAX_AGE_MS);
    const want: Partial<StreamConfig> = {
      subjects: [`${prefix}.>`],
      max_age: nanos(maxAgeMs),
      // One message per trace subject: an id is written once, and a repeat replaces nothing.
      max_msgs_per_subject: 1,
      duplicate_window: nanos(Math.min(120_000, maxAgeMs)),
    };
    let current;
    try {
      current = await jsm.streams.info(stream);
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.StreamNotFound)) throw err;
    }
    if (current === undefined) {
      try {
        await jsm.streams.add({
          name: stream,
          ...want,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
          storage: opts.storage === 'memory' ? StorageType.Memory : StorageType.File,
          num_replicas: opts.replicas ?? 1,
        });
      } catch (err) {
        // Another process created it between our info and add: fall through to an update.
        current = await jsm.streams.info(stream).catch(() => {
          throw err;
        });
      }
    }
    if (current !== undefined) {
      const c = current.config;
      const subjectsSame = c.subjects?.length === 1 && c.subjects[0] === want.subjects![0];
      if (!subjectsSame || c.max_age !== want.max_age || c.max_msgs_per_subject !== 1 || c.duplicate_window !== want.duplicate_window) {
        await jsm.streams.update(stream, { ...c, ...want });
      }
    }
    return new NatsTraceStore(nc, jetstream(nc, { timeout }), jsm, stream, prefix, timeout);
  }

  /** {@inheritDoc TraceStore.append} */
  async append(row: TraceRow): Promise<void> {
    this.assertOpen();
    checkTraceId(row.id);
    const wire: WireRow = { id: row.id, account: row.account, createdAt: Math.floor(row.createdAt), data: row.data };
    await this.js.publish(this.subjectOf(row.id), JSON.stringify(wire), { msgID: row.id, timeout: this.timeoutMs });
  }

  /** {@inheritDoc TraceStore.get} */
  async get(id: string, account: string): Promise<TraceRow | null> {
    this.assertOpen();
    checkTraceId(id);
    let m;
    try {
      m = await this.jsm.streams.getMessage(this.stream, { last_by_subj: this.subjectOf(id) });
    } catch (err) {
      // Older clients report a missing message as an API error instead of null.
      if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound) return null;
      throw err;
    }
    if (!m) return null;
    const w = m.json<WireRow>();
    if (w.account !== account) return null;
    return { id: w.id, account: w.account, createdAt: w.createdAt, data: w.data };
  }

  /** {@inheritDoc TraceStore.ping} */
  async ping(): Promise<boolean> {
    if (this.closed || this.nc.isClosed()) return false;
    try {
      await this.jsm.streams.info(this.stream);
      return true;
    } catch {
      return false;
    }
  }

  /** {@inheritDoc TraceStore.close} */
  async close(): Promise<void> {
    this.closed = true;
  }

  private subjectOf(id: string): string {
    return `${this.prefix}.${id}`;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('NatsTraceStore is closed');
  }
}
