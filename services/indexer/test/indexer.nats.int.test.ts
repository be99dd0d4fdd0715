/**
 * The indexer against real NATS JetStream (one stream per test, deleted afterwards) and the
 * real embedded store, including a write that survives an indexer restart between publish and ack.
 */
import { randomUUID } from 'node:crypto';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { indexer } from '@ctxmesh/proto';
import { connectNats } from '@ctxmesh/runtime';
import { EmbeddedVectorIndex, NatsEventBus, openEmbeddedDb, type EmbeddedDb, type NatsEventBusOptions, type NodeRecord } from '@ctxmesh/stores';
import { eventually, natsUrl } from '@ctxmesh/testing';
import pino from 'pino';
import { startIndexer, type RunningIndexer } from '../src';
import { describeBatchIngest, type BatchHarness } from './batch-cases';
import { ALL, FaultyIndex, deferred, messageOf, publishAndWait, writeOp } from './fixtures';

const log = pino({ level: 'silent' });
type NatsConnection = Awaited<ReturnType<typeof connectNats>>;
const embedder = new LexicalEmbedder({ dimension: 256 });
const { WriteMode } = indexer;
const CONSUMER = { maxDeliver: 3, ackWaitMs: 1000, retryDelayMs: 20, concurrency: 4 };

/** Unique stream and subjects per test. */
function names(): NatsEventBusOptions & { prefix: string } {
  const tag = randomUUID().replace(/-/g, '').slice(0, 12);
  return {
    prefix: `t${tag}.ingest`,
    stream: `IDX_${tag}`,
    subjects: [`t${tag}.ingest.>`],
    deadLetterSubject: `t${tag}.dlq`,
    doneSubjectPrefix: `t${tag}.done`,
    storage: 'memory',
  };
}

let opts: ReturnType<typeof names>;
let db: EmbeddedDb;
let store: EmbeddedVectorIndex;
let index: FaultyIndex;
const conns: NatsConnection[] = [];
const buses: NatsEventBus[] = [];
const indexers: RunningIndexer[] = [];

async function openBus(): Promise<{ nc: NatsConnection; bus: NatsEventBus }> {
  const nc = await connectNats(natsUrl(), 'indexer-int');
  conns.push(nc);
  const bus = await NatsEventBus.create(nc, opts);
  buses.push(bus);
  return { nc, bus };
}

async function startOn(bus: NatsEventBus): Promise<RunningIndexer> {
  const r = await startIndexer({ port: 0, host: '127.0.0.1', log, index, embedder, bus, consumer: { ...CONSUMER, subjects: opts.subjects } });
  indexers.push(r);
  return r;
}

beforeEach(() => {
  opts = names();
  db = openEmbeddedDb(':memory:');
  store = new EmbeddedVectorIndex(db, { dimension: 256 });
  index = new FaultyIndex(store);
});

afterEach(async () => {
  for (const r of indexers.splice(0)) await r.shutdown();
  for (const b of buses.splice(0)) await b.close();
  // Plain JetStream API requests: the test needs no client library beyond the connection.
  const admin = await connectNats(natsUrl(), 'indexer-int-cleanup');
  for (const s of NatsEventBus.streamsOf(opts.stream)) {
    await admin.request(`$JS.API.STREAM.DELETE.${s}`, undefined, { timeout: 5000 }).catch(() => undefined);
  }
  await admin.close();
  for (const nc of conns.splice(0)) if (!nc.isClosed()) await nc.close();
  db.close();
});

const doc = async (uri: string) => (await store.get([uri], ALL, 'full'))[0] as NodeRecord | null;

describe('indexer on NATS JetStream', () => {
  it('Indexer.Consume - write published - done applied and found by VectorIndex.search - OK', async () => {
    const { bus } = await openBus();
    await startOn(bus);
    const op = writeOp('viking://user/alice/memories/preferences/editor.md', 'Prefers vim keybindings in every editor.');
    const [done] = await publishAndWait(bus, [op], opts.prefix);
    expect(done).toMatchObject({ status: 'applied', nodes: 1 });
    // The receipt a caller who did not wait polls (issue 12, item 1).
    expect(await bus.getReceipt(op.writeId)).toMatchObject({ id: op.writeId, state: 'applied', uri: op.uri, account: op.identity!.accountId });
    const q = 'vim keybindings editor';
    const [hits] = await store.search([{ visibility: ALL, vector: embedder.embedOne(q), text: q, targets: [], filter: null, limit: 3 }]);
    expect(hits![0]!.node).toMatchObject({ uri: op.uri, category: 'preferences', contextType: 'memory', abstract: 'Prefers vim keybindings in every editor.' });
  });

  it('Indexer.Consume - create on an existing URI, then appends - ALREADY_EXISTS and appends in order - OK', async () => {
    const { bus } = await openBus();
    await startOn(bus);
    const uri = 'viking://resources/log.md';
    const notices = await publishAndWait(
      bus,
      [
        writeOp(uri, 'a;', WriteMode.WRITE_MODE_CREATE),
        writeOp(uri, 'b;', WriteMode.WRITE_MODE_CREATE),
        writeOp(uri, 'c;', WriteMode.WRITE_MODE_APPEND),
        writeOp(uri, 'd;', WriteMode.WRITE_MODE_APPEND),
      ],
      opts.prefix,
    );
    expect(notices.map((n) => n.reason ?? n.status)).toEqual(['applied', 'ALREADY_EXISTS', 'applied', 'applied']);
    expect((await doc(uri))!.body).toBe('a;c;d;');
    expect(await bus.deadLetters()).toEqual([]);
  });

  it('Indexer.Consume - malformed message - dead letter on the DLQ stream with the error - OK', async () => {
    const { bus } = await openBus();
    await startOn(bus);
    const bad = writeOp('viking://resources/a.md', 'x', WriteMode.WRITE_MODE_REPLACE, { validFromMs: Date.parse('2025-03-01'), validToMs: Date.parse('2025-02-01') });
    const [done] = await publishAndWait(bus, [bad], opts.prefix);
    expect(done).toMatchObject({ status: 'failed', reason: 'INVALID_ARGUMENT' });
    const dead = (await eventually(async () => (await bus.deadLetters()).at(0)))!;
    expect(dead).toMatchObject({ message: { id: bad.writeId, key: bad.uri }, attempts: 1 });
    expect(dead.error).toContain('valid_from');
    expect(await bus.getReceipt(bad.writeId)).toMatchObject({ state: 'failed', reason: 'INVALID_ARGUMENT', uri: bad.uri });
    expect(await bus.deadLetterCount()).toBe(1);
  });

  it('Indexer.Consume - indexer restarted between publish and ack - the write lands once - OK', async () => {
    const first = await openBus();
    const uri = 'viking://resources/runbook.md';
    await startOn(first.bus);
    await publishAndWait(first.bus, [writeOp(uri, 'step 1;')], opts.prefix);

    // Indexer A lands the next writes, then stalls before acking: we kill its connection there.
    const landed = deferred();
    const gate = deferred();
    index.afterReplace = async () => {
      landed.resolve();
      await gate.promise;
    };
    const replace = writeOp('viking://resources/other.md', 'replaced content');
    const append = writeOp(uri, 'step 2;', WriteMode.WRITE_MODE_APPEND);
    await first.bus.publish(messageOf(append, opts.prefix));
    await landed.promise;
    await first.nc.close();
    index.afterReplace = null;
    gate.resolve();
    // A is gone: its ack cannot reach the server. Its shutdown runs on without being awaited.
    const aStopped = indexers.shift()!.shutdown();

    // Indexer B on a fresh connection takes over the durable; JetStream redelivers after the ack wait.
    const second = await openBus();
    const redelivered = second.bus.awaitDone(append.writeId, AbortSignal.timeout(15_000));
    await startOn(second.bus);
    expect(await redelivered.done).toMatchObject({ status: 'applied', nodes: 0 });
    expect((await doc(uri))!.body).toBe('step 1;step 2;');
    expect(index.changes).toEqual([uri, uri]);

    // And B keeps consuming.
    const [next] = await publishAndWait(second.bus, [replace], opts.prefix);
    expect(next!.status).toBe('applied');
    expect(await second.bus.deadLetters()).toEqual([]);
    await aStopped;
  }, 30_000);
});

describe('batches', () => {
  let natsBatch: BatchHarness;
  beforeEach(async () => {
    const { bus } = await openBus();
    natsBatch = {
      bus,
      store,
      index,
      prefix: opts.prefix,
      stopConsumers: async () => {
        for (const r of indexers.splice(0)) await r.shutdown();
      },
      startConsumer: async (o) => {
        const r = await startIndexer({ port: 0, host: '127.0.0.1', log, index, embedder, bus, consumer: { ...CONSUMER, subjects: opts.subjects, ...o } });
        indexers.push(r);
      },
    };
  });
  describeBatchIngest('NATS JetStream', () => natsBatch);
});
