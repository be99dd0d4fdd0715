import { LexicalEmbedder } from '@ctxmesh/embedder';
import { common, indexer } from '@ctxmesh/proto';
import { EmbeddedVectorIndex, openEmbeddedDb, type Delivery, type DoneNotice, type EmbeddedDb, type EventBus, type NodeRecord, type WriteReceipt } from '@ctxmesh/stores';
import pino from 'pino';
import { Applier } from '../domain/apply';
import { WriteStatusBook } from '../domain/status';
import { IngestConsumer } from './consumer';

/** `LARGE_WRITE_CHARS` of the consumer: 1 Mi UTF-16 units. */
const LARGE = 1024 * 1024;

const VIS = { account: 'acme', user: '', actorPeer: null, openPeers: true, allUsers: true, workspace: null };

/** A delivery that records how it was settled. */
function delivery(data: Uint8Array, seq: number, attempt = 1, key = 'viking://resources/a.md') {
  const settled: Array<{ how: string; arg?: unknown }> = [];
  const d: Delivery = {
    message: { subject: 'ctxmesh.ingest.write', id: `m${seq}`, key, data },
    seq,
    attempt,
    ack: async () => void settled.push({ how: 'ack' }),
    nak: async (ms) => void settled.push({ how: 'nak', arg: ms }),
    deadLetter: async (e) => void settled.push({ how: 'deadLetter', arg: e }),
  };
  return { d, settled };
}

function op(content: string, over: Partial<indexer.WriteOp> = {}): Uint8Array {
  return indexer.WriteOp.encode({
    writeId: `w-${content}`,
    identity: { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' },
    uri: 'viking://resources/a.md',
    content,
    mode: indexer.WriteMode.WRITE_MODE_REPLACE,
    validFromMs: undefined,
    validToMs: undefined,
    tags: [],
    publishedAtMs: 0,
    subject: '',
    ...over,
  }).finish();
}

describe('IngestConsumer', () => {
  let db: EmbeddedDb;
  let index: EmbeddedVectorIndex;
  let notices: DoneNotice[];
  let receipts: WriteReceipt[];
  let consumer: IngestConsumer;
  let failStore: boolean;
  /** Documents the store refuses to write (alone or in a batch). */
  let refused: Set<string>;
  /** Documents per replaceDocuments call. */
  let storeBatches: number[];
  const embedder = new LexicalEmbedder({ dimension: 256 });

  beforeEach(async () => {
    db = openEmbeddedDb(':memory:');
    index = new EmbeddedVectorIndex(db, { dimension: 256 });
    notices = [];
    receipts = [];
    failStore = false;
    refused = new Set();
    storeBatches = [];
    const bus = {
      consumeBatches: async () => ({ stop: async () => undefined }),
      notifyDone: async (n: DoneNotice) => void notices.push(n),
      putReceipt: async (r: WriteReceipt) => void receipts.push(r),
    } as unknown as EventBus;
    const flaky = Object.create(index) as EmbeddedVectorIndex;
    flaky.replaceDocument = async (u, r) => {
      if (failStore || refused.has(u)) throw new Error('store down');
      return index.replaceDocument(u, r);
    };
    flaky.replaceDocuments = async (docs) => {
      storeBatches.push(docs.length);
      if (failStore || docs.some((d) => refused.has(d.docUri))) throw new Error('store down');
      return index.replaceDocuments(docs);
    };
    const applier = new Applier({ index: flaky, embedder });
    consumer = await IngestConsumer.start({ bus, applier, book: new WriteStatusBook(), log: pino({ level: 'silent' }) }, { maxDeliver: 3, ackWaitMs: 1000, retryDelayMs: 100 });
  });
  afterEach(() => db.close());

  const body = async () => ((await index.get(['viking://resources/a.md'], VIS, 'full'))[0] as NodeRecord | null)?.body;

  it('applies, announces, then acks', async () => {
    const { d, settled } = delivery(op('v1'), 1);
    await consumer.handle(d);
    expect(settled).toEqual([{ how: 'ack' }]);
    expect(notices).toEqual([expect.objectContaining({ id: 'w-v1', status: 'applied', nodes: 1 })]);
    expect(receipts).toEqual([expect.objectContaining({ id: 'w-v1', state: 'applied', uri: 'viking://resources/a.md', account: 'acme', user: 'alice' })]);
    expect(await body()).toBe('v1');
  });

  it('skips a redelivery of a write older than one it already applied for the key, so the node never rolls back', async () => {
    await consumer.handle(delivery(op('v1'), 1).d);
    await consumer.handle(delivery(op('v2'), 2).d);
    const late = delivery(op('v1'), 1, 2);
    await consumer.handle(late.d);
    expect(late.settled).toEqual([{ how: 'ack' }]);
    expect(await body()).toBe('v2');
  });

  it('naks a transient failure with a doubling back-off, and dead-letters on the last attempt', async () => {
    failStore = true;
    const first = delivery(op('v1'), 1, 1);
    await consumer.handle(first.d);
    const second = delivery(op('v1'), 1, 2);
    await consumer.handle(second.d);
    expect([first.settled, second.settled]).toEqual([[{ how: 'nak', arg: 100 }], [{ how: 'nak', arg: 200 }]]);
    expect(notices).toEqual([]);
    const last = delivery(op('v1'), 1, 3);
    await consumer.handle(last.d);
    expect(last.settled).toEqual([{ how: 'deadLetter', arg: expect.stringContaining('store down') }]);
    expect(notices).toEqual([expect.objectContaining({ id: 'w-v1', status: 'failed', reason: 'UNAVAILABLE' })]);
    // The caller who did not wait sees the failure (issue 12, item 1).
    expect(receipts).toEqual([expect.objectContaining({ id: 'w-v1', state: 'failed', reason: 'UNAVAILABLE', message: expect.stringContaining('store down') })]);
  });

  it('dead-letters a malformed write at once and announces it', async () => {
    const bad = delivery(op('x', { identity: undefined }), 1);
    await consumer.handle(bad.d);
    expect(bad.settled).toEqual([{ how: 'deadLetter', arg: 'identity.account_id is required' }]);
    expect(notices).toEqual([expect.objectContaining({ id: 'w-x', status: 'failed', reason: 'INVALID_ARGUMENT' })]);
    expect(receipts).toEqual([expect.objectContaining({ id: 'w-x', state: 'failed', reason: 'INVALID_ARGUMENT' })]);
  });

  it('applies a batch with one store write, then announces and acks each write', async () => {
    const ds = [1, 2, 3, 4].map((i) => delivery(op(`v${i}`, { uri: `viking://resources/b${i}.md` }), i, 1, `viking://resources/b${i}.md`));
    await consumer.handleBatch(ds.map((x) => x.d));
    expect(storeBatches).toEqual([4]);
    expect(ds.map((x) => x.settled)).toEqual(ds.map(() => [{ how: 'ack' }]));
    expect(notices.map((n) => [n.id, n.status])).toEqual([1, 2, 3, 4].map((i) => [`w-v${i}`, 'applied']));
    expect(receipts.map((r) => r.state)).toEqual(['applied', 'applied', 'applied', 'applied']);
  });

  it('settles a poisoned batch member alone: a malformed one is dead-lettered, one the store refuses is nak\'d, the neighbours land', async () => {
    refused.add('viking://resources/refused.md');
    const good1 = delivery(op('good one', { uri: 'viking://resources/g1.md' }), 1, 1, 'viking://resources/g1.md');
    const malformed = delivery(op('bad', { identity: undefined, uri: 'viking://resources/m.md' }), 2, 1, 'viking://resources/m.md');
    const storeFails = delivery(op('refused', { uri: 'viking://resources/refused.md' }), 3, 1, 'viking://resources/refused.md');
    const good2 = delivery(op('good two', { uri: 'viking://resources/g2.md' }), 4, 1, 'viking://resources/g2.md');
    await consumer.handleBatch([good1.d, malformed.d, storeFails.d, good2.d]);
    expect([good1.settled, malformed.settled, storeFails.settled, good2.settled]).toEqual([
      [{ how: 'ack' }],
      [{ how: 'deadLetter', arg: 'identity.account_id is required' }],
      [{ how: 'nak', arg: 100 }],
      [{ how: 'ack' }],
    ]);
    expect(notices.map((n) => [n.id, n.status]).sort()).toEqual([
      ['w-bad', 'failed'],
      ['w-good one', 'applied'],
      ['w-good two', 'applied'],
    ]);
    const bodies = await index.get(['viking://resources/g1.md', 'viking://resources/refused.md', 'viking://resources/g2.md'], VIS, 'full');
    expect(bodies.map((r) => (r as NodeRecord | null)?.body ?? null)).toEqual(['good one', null, 'good two']);
    // Its last attempt dead-letters it and announces the failure; nothing else changes.
    const last = delivery(op('refused', { uri: 'viking://resources/refused.md' }), 3, 3, 'viking://resources/refused.md');
    await consumer.handleBatch([last.d]);
    expect(last.settled).toEqual([{ how: 'deadLetter', arg: expect.stringContaining('store down') }]);
    expect(notices.at(-1)).toMatchObject({ id: 'w-refused', status: 'failed', reason: 'UNAVAILABLE' });
  });

  it('skips a stale redelivery in a batch and applies the rest', async () => {
    await consumer.handle(delivery(op('v1'), 1).d);
    await consumer.handle(delivery(op('v2'), 2).d);
    const late = delivery(op('v1'), 1, 2);
    const other = delivery(op('other', { uri: 'viking://resources/o.md' }), 3, 1, 'viking://resources/o.md');
    await consumer.handleBatch([late.d, other.d]);
    expect([late.settled, other.settled]).toEqual([[{ how: 'ack' }], [{ how: 'ack' }]]);
    expect(await body()).toBe('v2');
  });

  // Issue 12, item 9: four 16 MiB writes at once peaked at 1.78 GB; large writes now take turns.
  it('applies large writes one at a time, small ones beside them', async () => {
    let inFlight = 0;
    let peak = 0;
    const slow = Object.create(index) as EmbeddedVectorIndex;
    slow.replaceDocument = async (u, r) => {
      const large = r.some((x) => x.body.length >= LARGE);
      if (large) peak = Math.max(peak, ++inFlight);
      await new Promise((res) => setTimeout(res, 20));
      if (large) inFlight--;
      return index.replaceDocument(u, r);
    };
    let batchedLarge = 0;
    slow.replaceDocuments = async (docs) => {
      if (docs.some((d) => d.records.some((x) => x.body.length >= LARGE))) batchedLarge++;
      return index.replaceDocuments(docs);
    };
    const gated = await IngestConsumer.start(
      { bus: { consumeBatches: async () => ({ stop: async () => undefined }), notifyDone: async () => undefined, putReceipt: async () => undefined } as unknown as EventBus, applier: new Applier({ index: slow, embedder }), book: new WriteStatusBook(), log: pino({ level: 'silent' }) },
      { maxDeliver: 3, ackWaitMs: 30_000 },
    );
    const big = 'word '.repeat(LARGE / 5 + 1);
    const ds = [1, 2, 3].map((i) => delivery(op(`${i}${big}`, { writeId: `big-${i}`, uri: `viking://resources/big${i}.md` }), i, 1, `viking://resources/big${i}.md`));
    await Promise.all(ds.map((x) => gated.handle(x.d)));
    expect(ds.map((x) => x.settled)).toEqual([[{ how: 'ack' }], [{ how: 'ack' }], [{ how: 'ack' }]]);
    expect(peak).toBe(1);
    // In one batch too: the large ones one at a time, each on its own, beside the small one.
    const batch = [4, 5].map((i) => delivery(op(`${i}${big}`, { writeId: `big-${i}`, uri: `viking://resources/big${i}.md` }), i, 1, `viking://resources/big${i}.md`));
    const small = delivery(op('small', { uri: 'viking://resources/small.md' }), 6, 1, 'viking://resources/small.md');
    await gated.handleBatch([...batch.map((x) => x.d), small.d]);
    expect([...batch, small].map((x) => x.settled)).toEqual([[{ how: 'ack' }], [{ how: 'ack' }], [{ how: 'ack' }]]);
    expect(peak).toBe(1);
    expect(batchedLarge).toBe(0);
  }, 60_000);
});
