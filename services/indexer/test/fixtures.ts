/** Test fixtures of the indexer integration tests: write ops, publishing, and a store with injected faults. */
import { common, indexer } from '@ctxmesh/proto';
import type {
  WriteReceipt,
  BatchConsumeOptions,
  BusMessage,
  Consumer,
  ConsumeOptions,
  Delivery,
  DoneNotice,
  EventBus,
  FieldSet,
  IndexStats,
  NodeRecord,
  NodeSummary,
  SearchHit,
  SearchQuery,
  VectorIndex,
  Visibility,
} from '@ctxmesh/stores';
import { randomUUID } from 'node:crypto';

/** The account every test writes under. */
export const ACCOUNT = 'acme';
/** Visibility that sees everything of {@link ACCOUNT}. */
export const ALL: Visibility = { account: ACCOUNT, user: 'alice', actorPeer: null, openPeers: true, allUsers: true, workspace: null };

/** A WriteOp as the gateway publishes it. */
export function writeOp(uri: string, content: string, mode = indexer.WriteMode.WRITE_MODE_REPLACE, over: Partial<indexer.WriteOp> = {}): indexer.WriteOp {
  return {
    writeId: `w-${randomUUID()}`,
    identity: { accountId: ACCOUNT, userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' },
    uri,
    content,
    mode,
    validFromMs: undefined,
    validToMs: undefined,
    tags: [],
    publishedAtMs: Date.now(),
    subject: '',
    ...over,
  };
}

/** The bus message of an op: subject `<prefix>.write`, id = write id, key = URI. */
export function messageOf(op: indexer.WriteOp, subjectPrefix = 'ctxmesh.ingest'): BusMessage {
  return { subject: `${subjectPrefix}.write`, id: op.writeId, key: op.uri, data: indexer.WriteOp.encode(op).finish() };
}

/** Publish ops in order and wait for all their done notices (waiters subscribe first). */
export async function publishAndWait(bus: EventBus, ops: indexer.WriteOp[], subjectPrefix?: string, timeoutMs = 15_000): Promise<DoneNotice[]> {
  const signal = AbortSignal.timeout(timeoutMs);
  const waits = ops.map((op) => bus.awaitDone(op.writeId, signal));
  for (const op of ops) await bus.publish(messageOf(op, subjectPrefix));
  return Promise.all(waits.map((w) => w.done));
}

/** A promise with its resolve/reject. */
export function deferred<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A VectorIndex wrapper that counts the document replacements that changed something and lets
 * a test inject faults before a replacement (store down) or after it landed (a crash or a lost
 * connection between the commit and the ack).
 */
export class FaultyIndex implements VectorIndex {
  /** docUri of every replaceDocument call that changed the store, in order. */
  readonly changes: string[] = [];
  /** Runs before each replaceDocument; throw to fail it before anything is written. */
  beforeReplace: ((docUri: string) => Promise<void>) | null = null;
  /** Runs after each replaceDocument landed; throw or hang to fail between commit and ack. */
  afterReplace: ((docUri: string) => Promise<void>) | null = null;
  /** Answer of ping (readiness). */
  up = true;

  constructor(readonly inner: VectorIndex) {}

  get dimension(): number {
    return this.inner.dimension;
  }

  async replaceDocument(docUri: string, records: NodeRecord[]): Promise<boolean> {
    if (this.beforeReplace) await this.beforeReplace(docUri);
    const changed = await this.inner.replaceDocument(docUri, records);
    if (changed) this.changes.push(docUri);
    if (this.afterReplace) await this.afterReplace(docUri);
    return changed;
  }
  /** Documents per replaceDocuments call, in call order, whether it landed or not (the batches the store was given). */
  readonly batches: number[] = [];
  /** Every replaceDocuments call's documents pass {@link beforeReplace} first and {@link afterReplace} after. */
  async replaceDocuments(docs: ReadonlyArray<{ docUri: string; records: NodeRecord[] }>): Promise<boolean[]> {
    this.batches.push(docs.length);
    if (this.beforeReplace) for (const d of docs) await this.beforeReplace(d.docUri);
    const changed = await this.inner.replaceDocuments(docs);
    docs.forEach((d, i) => {
      if (changed[i]) this.changes.push(d.docUri);
    });
    if (this.afterReplace) for (const d of docs) await this.afterReplace(d.docUri);
    return changed;
  }
  deleteDocument(account: string, uri: string, opts?: { subtree?: boolean }): Promise<number> {
    return this.inner.deleteDocument(account, uri, opts);
  }
  search(queries: SearchQuery[]): Promise<SearchHit[][]> {
    return this.inner.search(queries);
  }
  get(uris: string[], visibility: Visibility, fields: FieldSet): Promise<Array<NodeRecord | NodeSummary | null>> {
    return this.inner.get(uris, visibility, fields);
  }
  getDocument(docUri: string, visibility: Visibility): Promise<NodeRecord[]> {
    return this.inner.getDocument(docUri, visibility);
  }
  vectors(uris: string[], visibility: Visibility): Promise<Array<Float32Array | null>> {
    return this.inner.vectors(uris, visibility);
  }
  exists(uri: string, visibility: Visibility): Promise<boolean> {
    return this.inner.exists(uri, visibility);
  }
  stats(account?: string): Promise<IndexStats> {
    return this.inner.stats(account);
  }
  async ping(): Promise<boolean> {
    return this.up && this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/**
 * An EventBus wrapper whose deliveries lose their first `lostAcks` acks: the handler believes
 * it acked, the transport never hears it, exactly as when a process dies right before its ack
 * reaches the server. The message is then redelivered after the ack wait.
 */
export class LostAckBus implements EventBus {
  constructor(
    readonly inner: EventBus,
    public lostAcks: number,
  ) {}

  publish(message: BusMessage, opts?: { timeoutMs?: number }): Promise<boolean> {
    return this.inner.publish(message, opts);
  }
  private wrap(d: Delivery): Delivery {
    if (this.lostAcks <= 0) return d;
    return {
      message: d.message,
      seq: d.seq,
      attempt: d.attempt,
      nak: (ms) => d.nak(ms),
      deadLetter: (e) => d.deadLetter(e),
      ack: async () => {
        if (this.lostAcks > 0) {
          this.lostAcks--;
          return;
        }
        await d.ack();
      },
    };
  }
  consume(opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer> {
    return this.inner.consume(opts, (d) => handler(this.wrap(d)));
  }
  consumeBatches(opts: BatchConsumeOptions, handler: (ds: Delivery[]) => Promise<void>): Promise<Consumer> {
    return this.inner.consumeBatches(opts, (ds) => handler(ds.map((d) => this.wrap(d))));
  }
  notifyDone(notice: DoneNotice): Promise<void> {
    return this.inner.notifyDone(notice);
  }
  awaitDone(id: string, signal: AbortSignal): { done: Promise<DoneNotice>; cancel(): void } {
    return this.inner.awaitDone(id, signal);
  }
  deadLetters(limit?: number) {
    return this.inner.deadLetters(limit);
  }
  deadLetterCount() {
    return this.inner.deadLetterCount();
  }
  putReceipt(receipt: WriteReceipt, opts?: { ifAbsent?: boolean }) {
    return this.inner.putReceipt(receipt, opts);
  }
  getReceipt(id: string) {
    return this.inner.getReceipt(id);
  }
  ping(): Promise<boolean> {
    return this.inner.ping();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
