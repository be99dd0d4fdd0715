import { waitFor } from '../contract/event-bus.contract';
import type { Delivery } from '../ports/event-bus';
import { KeyedDispatcher, type KeyedDispatcherOptions, type TransportDelivery } from './keyed-dispatcher';

interface FakeTd extends TransportDelivery {
  acks: number;
  naks: number[];
  workings: number;
}

function td(seq: number, key: string, deliveryCount = 1): FakeTd {
  const t: FakeTd = {
    message: { subject: 's', id: `m${seq}`, key, data: new Uint8Array() },
    seq,
    deliveryCount,
    acks: 0,
    naks: [],
    workings: 0,
    ack: async () => void t.acks++,
    nak: async (ms) => void t.naks.push(ms),
    working: async () => void t.workings++,
  };
  return t;
}

const dead: Array<{ seq: number; error: string; attempts: number }> = [];
const opts = (over: Partial<KeyedDispatcherOptions> = {}): KeyedDispatcherOptions => ({
  maxDeliver: 3,
  ackWaitMs: 60_000,
  concurrency: 4,
  retryDelayMs: 1,
  deadLetter: async (t, error, attempts) => void dead.push({ seq: t.seq, error, attempts }),
  ...over,
});

describe('KeyedDispatcher', () => {
  beforeEach(() => {
    dead.length = 0;
  });

  it('runs a redelivered message once and settles it through the newest handle', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: number[] = [];
    const d = new KeyedDispatcher(async (x: Delivery) => {
      runs.push(x.attempt);
      await gate;
      await x.ack();
    }, opts());
    const first = td(1, 'k');
    const again = td(1, 'k', 2);
    d.push(first);
    await waitFor(() => runs.length === 1, 'the first run');
    d.push(again);
    release();
    await waitFor(() => again.acks === 1, 'the ack');
    expect(runs).toEqual([1]);
    expect(first.acks).toBe(0);
    await d.stop();
  });

  it('keeps messages waiting behind a busy key alive with working()', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const d = new KeyedDispatcher(async (x: Delivery) => {
      if (x.seq === 1) await gate;
      await x.ack();
    }, opts({ ackWaitMs: 30 }));
    const waiting = td(2, 'k');
    d.push(td(1, 'k'));
    d.push(waiting);
    await waitFor(() => waiting.workings >= 2, 'two keep-alives');
    expect(waiting.acks).toBe(0);
    release();
    await waitFor(() => waiting.acks === 1, 'the waiting message');
    await d.stop();
  });

  it('unblocks a key when a handler settles after returning', async () => {
    const later: Delivery[] = [];
    const order: number[] = [];
    const d = new KeyedDispatcher(async (x: Delivery) => {
      order.push(x.seq);
      if (x.seq === 1) later.push(x);
      else await x.ack();
    }, opts());
    const second = td(2, 'k');
    d.push(td(1, 'k'));
    d.push(second);
    await waitFor(() => later.length === 1, 'the first message');
    expect(order).toEqual([1]);
    await later[0]!.ack();
    await waitFor(() => second.acks === 1, 'the second message');
    expect(order).toEqual([1, 2]);
    await d.stop();
  });

  it('dead-letters a message nak\'d on its last attempt', async () => {
    const d = new KeyedDispatcher(async (x: Delivery) => x.nak(1), opts({ maxDeliver: 2 }));
    const t = td(5, 'k');
    d.push(t);
    await waitFor(() => t.acks === 1, 'the ack after the dead letter');
    expect(dead).toEqual([{ seq: 5, error: 'gave up after 2 attempts', attempts: 2 }]);
    await d.stop();
  });

  it('on stop, waits for running handlers, hands queued messages back, and leaves a key whose head is unsettled', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const d = new KeyedDispatcher(async (x: Delivery) => {
      if (x.message.key === 'held') return; // returned unsettled, like a crash before the ack
      await gate;
      await x.ack();
    }, opts({ concurrency: 2 }));
    const [held1, held2, free3, free4] = [td(1, 'held'), td(2, 'held'), td(3, 'free'), td(4, 'free')];
    for (const t of [held1, held2, free3, free4]) d.push(t);
    await waitFor(() => d.size === 4, 'four held messages');
    const stopped = d.stop();
    release();
    await stopped;
    expect(free3.acks).toBe(1);
    expect(free4.naks).toEqual([0]);
    expect([held1.naks, held2.naks, held1.acks, held2.acks]).toEqual([[], [], 0, 0]);
    expect(d.size).toBe(0);
  });

  it('hands a delivery pushed after stop straight back', async () => {
    const d = new KeyedDispatcher(async (x: Delivery) => x.ack(), opts());
    await d.stop();
    const t = td(9, 'k');
    d.push(t);
    await waitFor(() => t.naks.length === 1, 'the nak');
    expect(t.acks).toBe(0);
  });
});
