/**
 * EventBus contract. Every adapter runs this suite: NATS JetStream in
 * `test/event-bus.nats.int.test.ts`, the in-process bus in `inproc/inproc-event-bus.test.ts`.
 * Each test uses its own subject and durable, so tests never see each other's messages.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AwaitDoneAbortedError, type BatchConsumeOptions, type BusMessage, type ConsumeOptions, type Consumer, type Delivery, type EventBus } from '../ports/event-bus';

/** What an adapter's test provides to the suite. */
export interface EventBusHarness {
  /** The bus under test. */
  bus: EventBus;
  /** A subject the bus's stream stores, unique to `name`. */
  subject(name: string): string;
  /** Ack wait to consume with: short, but long enough for the transport. */
  ackWaitMs: number;
  /** Release everything the harness created (streams, connections). */
  dispose(): Promise<void>;
}

/** Poll until `cond` holds; fails (never skips) after `limitMs`. No timing is asserted. */
export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, limitMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const text = (d: Delivery): string => new TextDecoder().decode(d.message.data);

/**
 * Register the EventBus contract tests.
 * @param name adapter name shown in test titles
 * @param make builds a harness once for the file
 */
export function describeEventBusContract(name: string, make: () => Promise<EventBusHarness>): void {
  describe(`EventBus contract: ${name}`, () => {
    let h: EventBusHarness;
    const consumers: Consumer[] = [];
    beforeAll(async () => {
      h = await make();
    }, 30_000);
    afterAll(async () => {
      for (const c of consumers) await c.stop();
      await h.bus.close();
      await h.dispose();
    }, 30_000);

    const msg = (subject: string, id: string, key: string, body = id): BusMessage => ({
      subject,
      id,
      key,
      data: new TextEncoder().encode(body),
    });
    const options = (subject: string, over: Partial<ConsumeOptions> = {}): ConsumeOptions => ({
      durable: `d-${randomUUID().slice(0, 8)}`,
      subjects: [subject],
      maxDeliver: 5,
      ackWaitMs: h.ackWaitMs,
      retryDelayMs: 20,
      concurrency: 4,
      ...over,
    });
    const consume = async (opts: ConsumeOptions, handler: (d: Delivery) => Promise<void>): Promise<Consumer> => {
      const c = await h.bus.consume(opts, handler);
      consumers.push(c);
      return c;
    };

    it('delivers a published message with its subject, id, key, data, stream sequence and attempt 1', async () => {
      const subject = h.subject('fields');
      const seen: Delivery[] = [];
      await consume(options(subject), async (d) => {
        seen.push(d);
        await d.ack();
      });
      expect(await h.bus.publish(msg(subject, 'f-1', 'viking://resources/a.md', 'héllo'))).toBe(true);
      expect(await h.bus.publish(msg(subject, 'f-2', 'viking://resources/a.md'))).toBe(true);
      await waitFor(() => seen.length === 2, 'two deliveries');
      expect(seen.map((d) => [d.message.subject, d.message.id, d.message.key, text(d), d.attempt])).toEqual([
        [subject, 'f-1', 'viking://resources/a.md', 'héllo', 1],
        [subject, 'f-2', 'viking://resources/a.md', 'f-2', 1],
      ]);
      expect(seen[1]!.seq).toBeGreaterThan(seen[0]!.seq);
    });

    it('drops a second publish of the same id', async () => {
      const subject = h.subject('dup');
      const ids: string[] = [];
      await consume(options(subject), async (d) => {
        ids.push(d.message.id);
        await d.ack();
      });
      expect(await h.bus.publish(msg(subject, 'dup-a', 'k'))).toBe(true);
      expect(await h.bus.publish(msg(subject, 'dup-a', 'k', 'changed'))).toBe(false);
      expect(await h.bus.publish(msg(subject, 'dup-b', 'k'))).toBe(true);
      // One key is delivered in stream order, so a delivered duplicate would sit between a and b.
      await waitFor(() => ids.includes('dup-b'), 'the message after the duplicate');
      expect(ids).toEqual(['dup-a', 'dup-b']);
    });

    it('hands one key\'s messages to the handler one at a time and in publish order', async () => {
      const subject = h.subject('order');
      const keys = ['k1', 'k2', 'k3'];
      const got = new Map<string, string[]>(keys.map((k) => [k, []]));
      const active = new Map<string, number>();
      let overlap = 0;
      let rnd = 7;
      await consume(options(subject, { concurrency: 4 }), async (d) => {
        const k = d.message.key;
        active.set(k, (active.get(k) ?? 0) + 1);
        if (active.get(k)! > 1) overlap++;
        rnd = (rnd * 1103515245 + 12345) % 2147483648;
        await new Promise((r) => setTimeout(r, rnd % 7));
        got.get(k)!.push(d.message.id);
        active.set(k, active.get(k)! - 1);
        await d.ack();
      });
      const want = new Map<string, string[]>(keys.map((k) => [k, []]));
      for (let i = 0; i < 30; i++) {
        const k = keys[(i * 7) % 3]!;
        want.get(k)!.push(`o-${i}`);
        await h.bus.publish(msg(subject, `o-${i}`, k));
      }
      await waitFor(() => [...got.values()].reduce((n, l) => n + l.length, 0) === 30, 'thirty deliveries');
      expect(Object.fromEntries(got)).toEqual(Object.fromEntries(want));
      expect(overlap).toBe(0);
    });

    it('retries a failed message before the later messages of its key', async () => {
      const subject = h.subject('retry');
      const log: string[] = [];
      await consume(options(subject), async (d) => {
        log.push(`${d.message.id}#${d.attempt}`);
        if (d.message.id === 'r-1' && d.attempt === 1) throw new Error('transient');
        await d.ack();
      });
      for (const id of ['r-1', 'r-2', 'r-3']) await h.bus.publish(msg(subject, id, 'same-key'));
      await waitFor(() => log.includes('r-3#1'), 'the last message');
      expect(log).toEqual(['r-1#1', 'r-1#2', 'r-2#1', 'r-3#1']);
    });

    it('redelivers a nak\'d message with the next attempt number, keeping key order', async () => {
      const subject = h.subject('nak');
      const log: string[] = [];
      await consume(options(subject), async (d) => {
        log.push(`${d.message.id}#${d.attempt}`);
        if (d.attempt < 3 && d.message.id === 'n-1') await d.nak(10);
        else await d.ack();
      });
      await h.bus.publish(msg(subject, 'n-1', 'k'));
      await h.bus.publish(msg(subject, 'n-2', 'k'));
      await waitFor(() => log.includes('n-2#1'), 'the second message');
      expect(log).toEqual(['n-1#1', 'n-1#2', 'n-1#3', 'n-2#1']);
    });

    it('dead-letters a message after maxDeliver failed attempts with the handler\'s error, then moves its key on', async () => {
      const subject = h.subject('poison');
      const attempts: number[] = [];
      const after: string[] = [];
      await consume(options(subject, { maxDeliver: 3 }), async (d) => {
        if (d.message.id === 'p-after') {
          after.push(d.message.id);
          await d.ack();
          return;
        }
        attempts.push(d.attempt);
        throw new Error(`cannot index ${d.message.id}: bad front matter`);
      });
      await h.bus.publish(msg(subject, 'p-poison', 'pk', 'payload'));
      await h.bus.publish(msg(subject, 'p-after', 'pk'));
      await waitFor(async () => (await h.bus.deadLetters(1000)).some((x) => x.message.id === 'p-poison'), 'the dead letter');
      const dl = (await h.bus.deadLetters(1000)).find((x) => x.message.id === 'p-poison')!;
      expect(dl.error).toContain('cannot index p-poison: bad front matter');
      expect(dl.attempts).toBe(3);
      expect(dl.message.subject).toBe(subject);
      expect(dl.message.key).toBe('pk');
      expect(new TextDecoder().decode(dl.message.data)).toBe('payload');
      expect(attempts).toEqual([1, 2, 3]);
      await waitFor(() => after.length === 1, 'the message behind the poison one');
    });

    it('dead-letters on request with the given error and does not redeliver', async () => {
      const subject = h.subject('reject');
      const seen: string[] = [];
      await consume(options(subject), async (d) => {
        seen.push(`${d.message.id}#${d.attempt}`);
        if (d.message.id === 'x-1') await d.deadLetter('ALREADY_EXISTS: create on an existing node');
        else await d.ack();
      });
      await h.bus.publish(msg(subject, 'x-1', 'k'));
      await h.bus.publish(msg(subject, 'x-2', 'k'));
      await waitFor(() => seen.includes('x-2#1'), 'the next message');
      const dl = (await h.bus.deadLetters(1000)).find((x) => x.message.id === 'x-1');
      expect(dl).toMatchObject({ error: 'ALREADY_EXISTS: create on an existing node', attempts: 1 });
      expect(seen).toEqual(['x-1#1', 'x-2#1']);
    });

    it('redelivers an unacked message to a new consumer of the durable after the first one stops', async () => {
      const subject = h.subject('crash');
      const opts = options(subject, { maxDeliver: 5 });
      const first: Delivery[] = [];
      const c1 = await consume(opts, async (d) => {
        first.push(d); // never settles: the consumer "crashes" before acking
      });
      await h.bus.publish(msg(subject, 'c-1', 'ck'));
      await h.bus.publish(msg(subject, 'c-2', 'ck'));
      await waitFor(() => first.length === 1, 'the first delivery');
      await c1.stop();
      const second: string[] = [];
      await consume(opts, async (d) => {
        second.push(`${d.message.id}#${d.attempt}#${d.seq}`);
        await d.ack();
      });
      await waitFor(() => second.some((s) => s.startsWith('c-2#')), 'both messages on the new consumer');
      expect(second[0]).toBe(`c-1#2#${first[0]!.seq}`);
      expect(second.map((s) => s.split('#')[0])).toEqual(['c-1', 'c-2']);
      expect(first.map((d) => d.message.id)).toEqual(['c-1']);
    });

    it('dead-letters a message that is never settled once the transport has delivered it maxDeliver times', async () => {
      const subject = h.subject('crashloop');
      const attempts: number[] = [];
      await consume(options(subject, { maxDeliver: 2 }), async (d) => {
        attempts.push(d.attempt); // returns without settling, as a consumer dying mid-message would
      });
      await h.bus.publish(msg(subject, 'cl-1', 'k'));
      await waitFor(async () => (await h.bus.deadLetters(1000)).some((x) => x.message.id === 'cl-1'), 'the dead letter');
      const dl = (await h.bus.deadLetters(1000)).find((x) => x.message.id === 'cl-1')!;
      expect(dl.error).toBe('delivered 2 times without being settled');
      expect(dl.attempts).toBe(3);
      expect(attempts).toEqual([1, 2]);
    });

    it('resumes a durable after its last ack without redelivering acked messages', async () => {
      const subject = h.subject('resume');
      const opts = options(subject);
      const first: string[] = [];
      const c1 = await consume(opts, async (d) => {
        first.push(d.message.id);
        await d.ack();
      });
      await h.bus.publish(msg(subject, 'm-1', 'k'));
      await waitFor(() => first.length === 1, 'the first message');
      await c1.stop();
      await h.bus.publish(msg(subject, 'm-2', 'k'));
      const second: string[] = [];
      await consume(opts, async (d) => {
        second.push(d.message.id);
        await d.ack();
      });
      await h.bus.publish(msg(subject, 'm-3', 'k'));
      await waitFor(() => second.includes('m-3'), 'the third message');
      expect(second).toEqual(['m-2', 'm-3']);
    });

    it('gives every durable its own copy of each message', async () => {
      const subject = h.subject('fanout');
      const a: string[] = [];
      const b: string[] = [];
      await consume(options(subject), async (d) => {
        a.push(d.message.id);
        await d.ack();
      });
      await consume(options(subject), async (d) => {
        b.push(d.message.id);
        await d.ack();
      });
      await h.bus.publish(msg(subject, 'fan-1', 'k'));
      await waitFor(() => a.length === 1 && b.length === 1, 'both durables');
      expect([a, b]).toEqual([['fan-1'], ['fan-1']]);
    });

    it('resolves awaitDone with the notice of its id only, subscribed before the publish', async () => {
      const ctl = new AbortController();
      const id = `w-${randomUUID()}`;
      const wait = h.bus.awaitDone(id, ctl.signal);
      await h.bus.notifyDone({ id: `other-${id}`, status: 'failed', reason: 'INVALID_ARGUMENT', message: 'x' });
      await h.bus.notifyDone({ id, status: 'applied', contentHash: 'sha256:abc', nodes: 3 });
      await expect(wait.done).resolves.toEqual({ id, status: 'applied', contentHash: 'sha256:abc', nodes: 3 });
    });

    it('completes a write round trip: consumer applies, notifies, and the waiter sees it', async () => {
      const subject = h.subject('roundtrip');
      await consume(options(subject), async (d) => {
        await h.bus.notifyDone({ id: d.message.id, status: 'failed', reason: 'ALREADY_EXISTS', message: 'exists' });
        await d.ack();
      });
      const id = `rt-${randomUUID()}`;
      const wait = h.bus.awaitDone(id, new AbortController().signal);
      await h.bus.publish(msg(subject, id, 'viking://resources/x.md'));
      await expect(wait.done).resolves.toEqual({ id, status: 'failed', reason: 'ALREADY_EXISTS', message: 'exists' });
    });

    it('rejects awaitDone when its signal fires or it is cancelled', async () => {
      const ctl = new AbortController();
      const w1 = h.bus.awaitDone('never-1', ctl.signal);
      ctl.abort(new Error('deadline'));
      await expect(w1.done).rejects.toBeInstanceOf(AwaitDoneAbortedError);
      const w2 = h.bus.awaitDone('never-2', new AbortController().signal);
      w2.cancel();
      await expect(w2.done).rejects.toMatchObject({ name: 'AwaitDoneAbortedError', id: 'never-2' });
      const gone = new AbortController();
      gone.abort();
      await expect(h.bus.awaitDone('never-3', gone.signal).done).rejects.toBeInstanceOf(AwaitDoneAbortedError);
    });

    it('keeps write receipts: a queued receipt never overwrites a settled one, unknown ids are null', async () => {
      const id = `rc-${randomUUID()}`;
      const base = { id, uri: 'viking://resources/r.md', account: 'acme', user: 'alice', atMs: 1 };
      await expect(h.bus.getReceipt(id)).resolves.toBeNull();
      await h.bus.putReceipt({ ...base, state: 'queued' }, { ifAbsent: true });
      await expect(h.bus.getReceipt(id)).resolves.toEqual({ ...base, state: 'queued' });
      await h.bus.putReceipt({ ...base, state: 'failed', reason: 'UNAVAILABLE', message: 'store down', atMs: 2 });
      await h.bus.putReceipt({ ...base, state: 'queued', atMs: 3 }, { ifAbsent: true });
      await expect(h.bus.getReceipt(id)).resolves.toEqual({ ...base, state: 'failed', reason: 'UNAVAILABLE', message: 'store down', atMs: 2 });
      await h.bus.putReceipt({ ...base, id: '', state: 'queued' });
      await expect(h.bus.getReceipt('')).resolves.toBeNull();
    });

    it('counts the dead letters it holds', async () => {
      const before = await h.bus.deadLetterCount();
      const subject = h.subject('dlcount');
      await consume(options(subject), async (d) => d.deadLetter('refused'));
      await h.bus.publish(msg(subject, `dl-${randomUUID()}`, 'k'));
      await waitFor(async () => (await h.bus.deadLetterCount()) === before + 1, 'the dead-letter count to grow');
    });

    it('answers ping', async () => {
      await expect(h.bus.ping()).resolves.toBe(true);
    });

    const consumeBatches = async (opts: BatchConsumeOptions, handler: (ds: Delivery[]) => Promise<void>): Promise<Consumer> => {
      const c = await h.bus.consumeBatches(opts, handler);
      consumers.push(c);
      return c;
    };
    const ids = (ds: Delivery[]): string[] => ds.map((d) => d.message.id);

    it('consumeBatches: hands a burst over in batches of at most maxBatch, one message per key, in stream order', async () => {
      const subject = h.subject('batches');
      // Published before the consumer starts, so the whole burst is waiting for it.
      for (let i = 1; i <= 3; i++) for (const k of ['a', 'b', 'c', 'd']) await h.bus.publish(msg(subject, `${k}${i}`, `key-${k}`));
      const batches: string[][] = [];
      // A long wait: a batch leaves only when full, so the split does not depend on timing.
      await consumeBatches({ ...options(subject), maxBatch: 4, maxWaitMs: 10_000 }, async (ds) => {
        batches.push(ids(ds));
        await Promise.all(ds.map((d) => d.ack()));
      });
      await waitFor(() => batches.flat().length === 12, 'twelve deliveries');
      expect(batches).toEqual([
        ['a1', 'b1', 'c1', 'd1'],
        ['a2', 'b2', 'c2', 'd2'],
        ['a3', 'b3', 'c3', 'd3'],
      ]);
    });

    it('consumeBatches: hands over what is ready once a batch has waited maxWaitMs', async () => {
      const subject = h.subject('batch-wait');
      const batches: string[][] = [];
      await consumeBatches({ ...options(subject), maxBatch: 64, maxWaitMs: 20 }, async (ds) => {
        batches.push(ids(ds));
        await Promise.all(ds.map((d) => d.ack()));
      });
      await h.bus.publish(msg(subject, 'w-1', 'k1'));
      await h.bus.publish(msg(subject, 'w-2', 'k2'));
      await waitFor(() => batches.flat().length === 2, 'both messages');
      expect(batches.flat().sort()).toEqual(['w-1', 'w-2']);
    });

    it('consumeBatches: settles each message on its own; a handler that throws retries only those it left unsettled, before their keys move on', async () => {
      const subject = h.subject('batch-fail');
      const log: string[] = [];
      await h.bus.publish(msg(subject, 'f-ok', 'k-ok'));
      await h.bus.publish(msg(subject, 'f-nak', 'k-nak'));
      await h.bus.publish(msg(subject, 'f-throw', 'k-throw'));
      await h.bus.publish(msg(subject, 'f-throw-next', 'k-throw'));
      await consumeBatches({ ...options(subject), maxBatch: 3, maxWaitMs: 200 }, async (ds) => {
        log.push(ds.map((d) => `${d.message.id}#${d.attempt}`).join(','));
        for (const d of ds) {
          if (d.message.id === 'f-ok') await d.ack();
          if (d.message.id === 'f-nak' && d.attempt === 1) await d.nak(10);
        }
        if (ds.some((d) => d.attempt === 1 && d.message.id === 'f-throw')) throw new Error('store down');
        await Promise.all(ds.map((d) => d.ack()));
      });
      await waitFor(() => log.join(',').includes('f-throw-next#1'), 'the message behind the failed one');
      // f-ok was acked in the failed batch and never comes back; the others retry (attempt 2)
      // before anything later of their keys.
      const seen = log.join(',').split(',');
      expect(seen.filter((x) => x.startsWith('f-ok'))).toEqual(['f-ok#1']);
      expect(seen.filter((x) => x.startsWith('f-nak'))).toEqual(['f-nak#1', 'f-nak#2']);
      expect(seen.filter((x) => x.startsWith('f-throw'))).toEqual(['f-throw#1', 'f-throw#2', 'f-throw-next#1']);
      expect(log[0]).toBe('f-ok#1,f-nak#1,f-throw#1');
    });

    it('consumeBatches: dead-letters the poisoned message of a batch alone; its neighbours are applied', async () => {
      const subject = h.subject('batch-poison');
      const acked: string[] = [];
      const bad = `bp-bad-${randomUUID()}`;
      for (const [id, k] of [['bp-1', 'k1'], [bad, 'k2'], ['bp-3', 'k3']] as const) await h.bus.publish(msg(subject, id, k));
      await consumeBatches({ ...options(subject, { maxDeliver: 2 }), maxBatch: 3, maxWaitMs: 200 }, async (ds) => {
        for (const d of ds) {
          if (d.message.id.startsWith('bp-bad')) continue;
          acked.push(d.message.id);
          await d.ack();
        }
        if (ds.some((d) => d.message.id.startsWith('bp-bad'))) throw new Error('cannot index bp-bad');
      });
      await waitFor(async () => (await h.bus.deadLetters(1000)).some((x) => x.message.id === bad), 'the dead letter');
      expect(acked.sort()).toEqual(['bp-1', 'bp-3']);
      const dl = (await h.bus.deadLetters(1000)).find((x) => x.message.id === bad)!;
      expect(dl).toMatchObject({ error: 'cannot index bp-bad', attempts: 2 });
    });
  });
}
