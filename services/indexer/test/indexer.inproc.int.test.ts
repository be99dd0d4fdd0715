/**
 * The indexer over the real in-process bus and the real embedded store (SQLite in memory,
 * LexicalEmbedder), with its gRPC service on port 0.
 */
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { indexer } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, Code, connect } from '@ctxmesh/rpc';
import { EmbeddedVectorIndex, InProcEventBus, openEmbeddedDb, type EmbeddedDb, type EventBus, type NodeRecord } from '@ctxmesh/stores';
import { eventually } from '@ctxmesh/testing';
import pino from 'pino';
import { startIndexer, type RunningIndexer } from '../src';
import { describeBatchIngest } from './batch-cases';
import { ALL, FaultyIndex, LostAckBus, deferred, messageOf, publishAndWait, writeOp } from './fixtures';

const log = pino({ level: 'silent' });
const embedder = new LexicalEmbedder({ dimension: 256 });
const { WriteMode, WriteStatus } = indexer;

const CONSUMER = { maxDeliver: 3, ackWaitMs: 400, retryDelayMs: 10, concurrency: 4 };

let db: EmbeddedDb;
let store: EmbeddedVectorIndex;
let index: FaultyIndex;
let bus: InProcEventBus;
let running: RunningIndexer[];
let client: indexer.IndexerServiceClient;

async function start(over: { bus?: EventBus } = {}): Promise<RunningIndexer> {
  const r = await startIndexer({ port: 0, host: '127.0.0.1', log, index, embedder, bus: over.bus ?? bus, consumer: CONSUMER, readyPollMs: 50 });
  running.push(r);
  return r;
}

beforeEach(async () => {
  db = openEmbeddedDb(':memory:');
  store = new EmbeddedVectorIndex(db, { dimension: 256 });
  index = new FaultyIndex(store);
  bus = new InProcEventBus();
  running = [];
  const first = await start();
  client = connect(indexer.IndexerServiceClient, first.address);
});

afterEach(async () => {
  client.close();
  for (const r of running) await r.shutdown();
  await bus.close();
  db.close();
});

const doc = async (uri: string) => (await store.get([uri], ALL, 'full'))[0] as NodeRecord | null;
const rpc = { domain: 'indexer', pass: [Code.INVALID_ARGUMENT], retry: false };
const applyWrite = (op: indexer.WriteOp | undefined) => callUnary(client.applyWrite.bind(client), { op }, Budget.ofMs(10_000), rpc);
const writeStatus = (writeId: string) => callUnary(client.getWriteStatus.bind(client), { writeId }, Budget.ofMs(5000), rpc);

describe('indexer on the in-process bus', () => {
  it('Indexer.Consume - write published - done applied and found by VectorIndex.search - OK', async () => {
    const op = writeOp('viking://resources/ops/lighthouse.md', '# Lighthouse\n\nThe lighthouse keeper records every storm in the logbook.', WriteMode.WRITE_MODE_REPLACE, {
      tags: ['Team=Ops'],
      validFromMs: Date.parse('2025-01-01'),
    });
    const [done] = await publishAndWait(bus, [op]);
    expect(done).toMatchObject({ id: op.writeId, status: 'applied', nodes: 1 });
    expect(done!.contentHash).toMatch(/^[0-9a-f]{64}$/);

    const q = 'lighthouse keeper storm logbook';
    const [hits] = await store.search([{ visibility: ALL, vector: embedder.embedOne(q), text: q, targets: [], filter: null, limit: 5 }]);
    expect(hits![0]!.node).toMatchObject({ uri: op.uri, docUri: op.uri, title: 'Lighthouse', tags: ['team=ops'], contentHash: done!.contentHash, validFrom: Date.parse('2025-01-01') });
    expect(hits![0]!.score).toBeGreaterThan(0.35);
    expect(await writeStatus(op.writeId)).toEqual({
      result: { status: WriteStatus.WRITE_STATUS_APPLIED, contentHash: done!.contentHash, nodes: 1, errorReason: '', errorMessage: '' },
    });
  });

  it('Indexer.Consume - same content replaced twice - one change - OK', async () => {
    const uri = 'viking://resources/a.md';
    const [first, second] = await publishAndWait(bus, [writeOp(uri, 'same words'), writeOp(uri, 'same words')]);
    expect(first).toMatchObject({ status: 'applied', nodes: 1 });
    expect(second).toMatchObject({ status: 'applied', nodes: 0, contentHash: first!.contentHash });
    expect(index.changes).toEqual([uri]);
  });

  it('Indexer.Consume - create on an existing URI - done failed ALREADY_EXISTS and acked - OK', async () => {
    const uri = 'viking://resources/c.md';
    const [made, refused, after] = await publishAndWait(bus, [
      writeOp(uri, 'first', WriteMode.WRITE_MODE_CREATE),
      writeOp(uri, 'second', WriteMode.WRITE_MODE_CREATE),
      writeOp(uri, 'third'),
    ]);
    expect(made!.status).toBe('applied');
    expect(refused).toMatchObject({ status: 'failed', reason: 'ALREADY_EXISTS' });
    // Acked, not retried: the next write of the URI went through and nothing was dead-lettered.
    expect(after!.status).toBe('applied');
    expect((await doc(uri))!.body).toBe('third');
    expect(await bus.deadLetters()).toEqual([]);
  });

  it('Indexer.Consume - three appends of one URI - applied in publish order - OK', async () => {
    const uri = 'viking://user/alice/memories/events/standup.md';
    const notices = await publishAndWait(bus, ['- fixed the build\n', '- reviewed the gateway\n', '- shipped the indexer\n'].map((c) => writeOp(uri, c, WriteMode.WRITE_MODE_APPEND)));
    expect(notices.map((n) => n.status)).toEqual(['applied', 'applied', 'applied']);
    expect(await doc(uri)).toMatchObject({
      body: '- fixed the build\n- reviewed the gateway\n- shipped the indexer\n',
      abstract: '- fixed the build\n- reviewed the gateway\n- shipped the indexer',
      subject: 'alice',
      category: 'events',
    });
  });

  it('Indexer.Consume - delete of a directory - subtree removed, siblings kept - OK', async () => {
    await publishAndWait(bus, [
      writeOp('viking://resources/proj/a.md', 'alpha'),
      writeOp('viking://resources/proj/sub/b.md', 'beta'),
      writeOp('viking://resources/proj/.overview.md', '# Project\nEverything about the project.'),
      writeOp('viking://resources/project-notes.md', 'kept: a sibling with the same prefix'),
    ]);
    const [del] = await publishAndWait(bus, [writeOp('viking://resources/proj', '', WriteMode.WRITE_MODE_DELETE)]);
    expect(del).toMatchObject({ status: 'applied', nodes: 3 });
    expect(await store.exists('viking://resources/proj', ALL)).toBe(false);
    expect((await doc('viking://resources/project-notes.md'))!.body).toContain('kept');
  });

  it('Indexer.Consume - store fails after the write landed, before the ack - retried, one applied version - OK', async () => {
    const uri = 'viking://resources/flaky.md';
    let failures = 1;
    index.afterReplace = async () => {
      if (failures-- > 0) throw new Error('connection reset after commit');
    };
    const [done] = await publishAndWait(bus, [writeOp(uri, 'exactly once')]);
    expect(done!.status).toBe('applied');
    expect(index.changes).toEqual([uri]);
    expect((await store.getDocument(uri, ALL)).map((r) => r.body)).toEqual(['exactly once']);
  });

  it('Indexer.Consume - indexer dies after an append landed, before its ack - a new indexer redelivers it once - OK', async () => {
    const uri = 'viking://resources/journal.md';
    await publishAndWait(bus, [writeOp(uri, 'day 1;')]);
    // Indexer A loses its ack (it "dies" between the commit and the ack), then is stopped.
    await running[0]!.shutdown();
    const lossy = new LostAckBus(bus, 1);
    const a = await start({ bus: lossy });
    const op = writeOp(uri, 'day 2;', WriteMode.WRITE_MODE_APPEND);
    const seenByA = bus.awaitDone(op.writeId, AbortSignal.timeout(10_000));
    await bus.publish(messageOf(op));
    expect((await seenByA.done).status).toBe('applied');
    await a.shutdown();
    // Indexer B takes over the durable: the unacked append comes back after the ack wait.
    const waitB = deferred<string>();
    const b = await start();
    bus.awaitDone(op.writeId, AbortSignal.timeout(10_000)).done.then((n) => waitB.resolve(n.status), waitB.reject);
    expect(await waitB.promise).toBe('applied');
    expect(lossy.lostAcks).toBe(0);
    expect((await doc(uri))!.body).toBe('day 1;day 2;');
    expect(index.changes).toEqual([uri, uri]);
    expect(b.consumer).not.toBeNull();
  });

  it('Indexer.Consume - malformed messages - dead-lettered with the error, done failed INVALID_ARGUMENT - OK', async () => {
    const garbage = { subject: 'ctxmesh.ingest.write', id: 'poison-1', key: 'k', data: new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]) };
    const badUri = writeOp('https://example.com/x', 'content');
    const signal = AbortSignal.timeout(10_000);
    const waits = [bus.awaitDone('poison-1', signal), bus.awaitDone(badUri.writeId, signal)];
    await bus.publish(garbage);
    await bus.publish(messageOf(badUri));
    const notices = await Promise.all(waits.map((w) => w.done));
    expect(notices.map((n) => [n.status, n.reason])).toEqual([
      ['failed', 'INVALID_ARGUMENT'],
      ['failed', 'INVALID_ARGUMENT'],
    ]);
    const dead = (await eventually(async () => {
      const d = await bus.deadLetters();
      return d.length === 2 ? d : null;
    }))!;
    expect(dead.map((d) => d.message.id)).toEqual(['poison-1', badUri.writeId]);
    expect(dead[0]!.error).toMatch(/not a ctxmesh\.indexer\.v1\.WriteOp/);
    expect(dead[1]!.error).toMatch(/Invalid URI/);
    expect(dead.map((d) => d.attempts)).toEqual([1, 1]);
  });

  it('Indexer.Consume - store down - retried until maxDeliver, then dead-lettered and done failed UNAVAILABLE - OK', async () => {
    let attempts = 0;
    index.beforeReplace = async () => {
      attempts++;
      throw new Error('store down');
    };
    const op = writeOp('viking://resources/down.md', 'never lands');
    const [done] = await publishAndWait(bus, [op]);
    expect(done).toMatchObject({ status: 'failed', reason: 'UNAVAILABLE' });
    expect(done!.message).toContain('store down');
    expect(attempts).toBe(CONSUMER.maxDeliver);
    const dead = (await eventually(async () => (await bus.deadLetters()).at(0)))!;
    expect(dead).toMatchObject({ attempts: CONSUMER.maxDeliver, message: { id: op.writeId } });
    expect(dead.error).toContain('store down');
    expect(await doc(op.uri)).toBeNull();
    expect((await writeStatus(op.writeId)).result).toMatchObject({ status: WriteStatus.WRITE_STATUS_FAILED, errorReason: 'UNAVAILABLE' });
  });
});

describeBatchIngest('the in-process bus', () => ({
  bus,
  store,
  index,
  stopConsumers: async () => {
    for (const r of running.splice(0)) await r.shutdown();
  },
  startConsumer: async (o) => {
    const r = await startIndexer({ port: 0, host: '127.0.0.1', log, index, embedder, bus, consumer: { ...CONSUMER, ...o }, readyPollMs: 50 });
    running.push(r);
  },
}));

// The same cases with the records built (and embedded) in a record thread, as the mesh runs them.
describeBatchIngest('the in-process bus, records built in a record thread', () => ({
  bus,
  store,
  index,
  stopConsumers: async () => {
    for (const r of running.splice(0)) await r.shutdown();
  },
  startConsumer: async (o) => {
    const r = await startIndexer({ port: 0, host: '127.0.0.1', log, index, embedder, bus, recordThreads: 1, consumer: { ...CONSUMER, ...o }, readyPollMs: 50 });
    running.push(r);
  },
}));

describe('IndexerService over gRPC', () => {
  it('IndexerService.ApplyWrite - new document - OK, APPLIED and searchable', async () => {
    const op = writeOp('viking://resources/rpc.md', 'Written through the synchronous path.');
    const res = await applyWrite(op);
    expect(res).toMatchObject({ status: WriteStatus.WRITE_STATUS_APPLIED, nodes: 1, errorReason: '' });
    expect((await doc(op.uri))!.contentHash).toBe(res.contentHash);
    expect((await writeStatus(op.writeId)).result!.status).toBe(WriteStatus.WRITE_STATUS_APPLIED);
  });

  it('IndexerService.ApplyWrite - create on an existing URI - OK, status FAILED with ALREADY_EXISTS', async () => {
    await applyWrite(writeOp('viking://resources/x.md', 'one'));
    const res = await applyWrite(writeOp('viking://resources/x.md', 'two', WriteMode.WRITE_MODE_CREATE));
    expect(res).toMatchObject({ status: WriteStatus.WRITE_STATUS_FAILED, errorReason: 'ALREADY_EXISTS', nodes: 0 });
  });

  it('IndexerService.ApplyWrite - malformed op - INVALID_ARGUMENT', async () => {
    await expect(applyWrite(writeOp('viking://resources', 'x'))).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'MALFORMED_WRITE' });
    await expect(applyWrite(undefined)).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_OP' });
  });

  it('IndexerService.ApplyWrite - store down - UNAVAILABLE', async () => {
    index.beforeReplace = async () => {
      throw new Error('store down');
    };
    await expect(applyWrite(writeOp('viking://resources/y.md', 'y'))).rejects.toMatchObject({ code: Code.UNAVAILABLE, reason: 'INDEX_UNAVAILABLE' });
  });

  it('IndexerService.GetWriteStatus - unknown id, empty id - OK with UNSPECIFIED, INVALID_ARGUMENT', async () => {
    expect((await writeStatus('never-seen')).result!.status).toBe(WriteStatus.WRITE_STATUS_UNSPECIFIED);
    await expect(writeStatus('')).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT });
  });

  it('IndexerService.GetIndexStats - documents with passages - OK, counts of the caller account only', async () => {
    const long = Array.from({ length: 10 }, (_, i) => `## Part ${i}\n\n` + 'words of the long document '.repeat(30)).join('\n\n');
    const big = await applyWrite(writeOp('viking://resources/big.md', long));
    await applyWrite(writeOp('viking://resources/small.md', 'small'));
    const stats = await callUnary(client.getIndexStats.bind(client), { identity: writeOp('viking://resources/z', '').identity }, Budget.ofMs(5000), rpc);
    expect(stats).toEqual({ nodes: big.nodes + 1, documents: 2, writesApplied: 2, writesFailed: 0 });
    const other = await callUnary(
      client.getIndexStats.bind(client),
      { identity: { ...writeOp('viking://resources/z', '').identity!, accountId: 'globex' } },
      Budget.ofMs(5000),
      rpc,
    );
    expect(other).toMatchObject({ nodes: 0, documents: 0 });
    expect(big.nodes).toBeGreaterThan(2);
  });

  it('grpc.health.v1.Health.Check - store or bus down - NOT_SERVING, liveness still SERVING', async () => {
    const r = running[0]!;
    expect(await checkHealth(r.address, '')).toBe(true);
    index.up = false;
    await r.refreshReadiness();
    expect(await checkHealth(r.address, '')).toBe(false);
    index.up = true;
    await r.refreshReadiness();
    expect(await checkHealth(r.address, '')).toBe(true);
    await bus.close();
    await r.refreshReadiness();
    expect(await checkHealth(r.address, '')).toBe(false);
    expect(await checkHealth(r.address, 'liveness')).toBe(true);
  });
});
