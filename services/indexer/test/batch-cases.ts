/**
 * Batch ingest cases run on both buses (the in-process bus and real NATS JetStream): a burst is
 * applied in fewer store writes than messages, each write answered only once it is stored; a
 * poisoned write in a batch fails alone; one URI's writes keep publish order across batches.
 */
import { indexer } from '@ctxmesh/proto';
import type { DoneNotice, EmbeddedVectorIndex, EventBus, NodeRecord } from '@ctxmesh/stores';
import { eventually } from '@ctxmesh/testing';
import type { IngestConsumerOptions } from '../src/ingest/consumer';
import { ALL, type FaultyIndex, messageOf, writeOp } from './fixtures';

const { WriteMode } = indexer;

/** What a bus's test file provides to {@link describeBatchIngest}. */
export interface BatchHarness {
  bus: EventBus;
  /** The store behind {@link index}. */
  store: EmbeddedVectorIndex;
  index: FaultyIndex;
  /** Subject prefix the indexer consumes (messageOf's). */
  prefix?: string;
  /** Stop the indexers running, so what is published next waits in the stream. */
  stopConsumers(): Promise<void>;
  /** Run the indexer's consumer with these batch options. */
  startConsumer(opts: Pick<IngestConsumerOptions, 'batchSize' | 'batchWaitMs'> & { maxDeliver?: number }): Promise<void>;
}

/** Register the batch ingest cases; `h` is read inside each test (after the file's beforeEach). */
export function describeBatchIngest(busName: string, h: () => BatchHarness): void {
  describe(`batched ingest on ${busName}`, () => {
    const doc = async (uri: string) => (await h().store.get([uri], ALL, 'full'))[0] as NodeRecord | null;

    /**
     * Publish in order while no consumer runs, then start one with `batch`, so the whole burst is
     * waiting in the stream and the batches it forms do not depend on the machine's speed.
     * Resolves each write's notice, logging `answered:<uri>` as it arrives.
     */
    async function publishAll(ops: indexer.WriteOp[], batch: Parameters<BatchHarness['startConsumer']>[0], log: string[] = []): Promise<DoneNotice[]> {
      const { bus, prefix } = h();
      await h().stopConsumers();
      const signal = AbortSignal.timeout(20_000);
      const waits = ops.map((op) =>
        bus.awaitDone(op.writeId, signal).done.then((n) => {
          log.push(`answered:${op.uri}`);
          return n;
        }),
      );
      for (const op of ops) await bus.publish(messageOf(op, prefix));
      await h().startConsumer(batch);
      return Promise.all(waits);
    }

    it('Indexer.Consume - burst of writes - applied in fewer store writes than messages, each answered after it was stored - OK', async () => {
      const { index } = h();
      const log: string[] = [];
      index.afterReplace = async (uri) => void log.push(`stored:${uri}`);
      const ops = Array.from({ length: 24 }, (_, i) => writeOp(`viking://resources/burst/${i}.md`, `Burst document ${i} about tide tables.`));
      // A long wait: a batch leaves when full.
      const notices = await publishAll(ops, { batchSize: 8, batchWaitMs: 5000 }, log);
      expect(notices.map((n) => n.status)).toEqual(ops.map(() => 'applied'));
      expect(index.batches).toEqual([8, 8, 8]);
      // wait:true keeps its meaning: no write is answered before its batch was stored.
      for (const op of ops) expect(log.indexOf(`stored:${op.uri}`)).toBeLessThan(log.indexOf(`answered:${op.uri}`));
      for (const [i, op] of ops.entries()) expect((await doc(op.uri))!.body).toBe(`Burst document ${i} about tide tables.`);
    });

    it('Indexer.Consume - poisoned writes in a batch - each dead-lettered alone, its neighbours applied - OK', async () => {
      const { bus, index } = h();
      const poison = 'viking://resources/poison.md';
      index.beforeReplace = async (uri) => {
        if (uri === poison) throw new Error('the store refuses this document');
      };
      const ok1 = writeOp('viking://resources/ok1.md', 'first neighbour');
      const malformed = writeOp('viking://resources/bad.md', 'x', WriteMode.WRITE_MODE_REPLACE, { identity: undefined });
      const refused = writeOp(poison, 'never stored');
      const ok2 = writeOp('viking://resources/ok2.md', 'second neighbour');
      const notices = await publishAll([ok1, malformed, refused, ok2], { batchSize: 4, batchWaitMs: 100, maxDeliver: 2 });
      expect(notices.map((n) => [n.status, n.reason ?? ''])).toEqual([
        ['applied', ''],
        ['failed', 'INVALID_ARGUMENT'],
        ['failed', 'UNAVAILABLE'],
        ['applied', ''],
      ]);
      expect((await doc(ok1.uri))!.body).toBe('first neighbour');
      expect((await doc(ok2.uri))!.body).toBe('second neighbour');
      expect(await doc(poison)).toBeNull();
      // The first batch held the three well-formed writes; the refused one was then retried alone.
      expect(index.batches[0]).toBe(3);
      const dead = (await eventually(async () => {
        const d = await bus.deadLetters();
        return d.length === 2 ? d : null;
      }))!;
      expect(dead.map((d) => d.message.id).sort()).toEqual([malformed.writeId, refused.writeId].sort());
      expect(dead.find((d) => d.message.id === refused.writeId)!.error).toContain('the store refuses this document');
    });

    it('Indexer.Consume - interleaved appends to several URIs - each URI in publish order - OK', async () => {
      const uris = ['a', 'b', 'c', 'd'].map((k) => `viking://user/alice/memories/events/${k}.md`);
      const ops: indexer.WriteOp[] = [];
      for (let step = 1; step <= 5; step++) for (const u of uris) ops.push(writeOp(u, `${step};`, WriteMode.WRITE_MODE_APPEND));
      const notices = await publishAll(ops, { batchSize: 3, batchWaitMs: 20 });
      expect(notices.every((n) => n.status === 'applied')).toBe(true);
      for (const u of uris) expect((await doc(u))!.body).toBe('1;2;3;4;5;');
      expect(h().index.batches.length).toBeLessThan(ops.length);
    });
  });
}
