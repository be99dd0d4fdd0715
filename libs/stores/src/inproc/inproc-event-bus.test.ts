import { describeEventBusContract, waitFor } from '../contract/event-bus.contract';
import type { Delivery } from '../ports/event-bus';
import { InProcBusError, InProcEventBus } from './inproc-event-bus';
import { invalidSubject, subjectMatches } from './subjects';

describeEventBusContract('in-process', async () => ({
  bus: new InProcEventBus({ subjects: ['test.>'] }),
  subject: (name) => `test.${name}`,
  ackWaitMs: 200,
  dispose: async () => undefined,
}));

describe('InProcEventBus', () => {
  const enc = (s: string) => new TextEncoder().encode(s);

  it('accepts an id again once the duplicate window has passed', async () => {
    let now = 0;
    const bus = new InProcEventBus({ duplicateWindowMs: 1000, now: () => now });
    const m = { subject: 'a.b', id: 'same', key: 'k', data: enc('x') };
    expect(await bus.publish(m)).toBe(true);
    now = 999;
    expect(await bus.publish(m)).toBe(false);
    now = 2000;
    expect(await bus.publish(m)).toBe(true);
    await bus.close();
  });

  it('refuses subjects outside its stream, wildcards, and publishing after close', async () => {
    const bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
    const m = { id: 'i', key: 'k', data: enc('x') };
    await expect(bus.publish({ ...m, subject: 'ctxmesh.other' })).rejects.toBeInstanceOf(InProcBusError);
    await expect(bus.publish({ ...m, subject: 'ctxmesh.ingest.*' })).rejects.toThrow(/wildcards/);
    await bus.close();
    await expect(bus.publish({ ...m, subject: 'ctxmesh.ingest.write' })).rejects.toThrow(/closed/);
  });

  it('keeps only the newest maxMessages for a durable created later', async () => {
    const bus = new InProcEventBus({ maxMessages: 2 });
    for (const id of ['m1', 'm2', 'm3']) await bus.publish({ subject: 's.x', id, key: id, data: enc(id) });
    const seen: string[] = [];
    await bus.consume({ durable: 'late', subjects: ['s.>'], maxDeliver: 3, ackWaitMs: 1000 }, async (d: Delivery) => {
      seen.push(d.message.id);
      await d.ack();
    });
    await waitFor(() => seen.length === 2, 'two deliveries');
    expect(seen).toEqual(['m2', 'm3']);
    await bus.close();
  });

  it('fails pending waits when it closes', async () => {
    const bus = new InProcEventBus();
    const w = bus.awaitDone('x', new AbortController().signal);
    await bus.close();
    await expect(w.done).rejects.toThrow(/closed/);
  });
});

describe('subjectMatches', () => {
  it.each([
    ['a.b', 'a.b', true],
    ['a.*', 'a.b', true],
    ['a.*', 'a.b.c', false],
    ['a.>', 'a.b.c', true],
    ['a.>', 'a', false],
    ['*.b', 'a.b', true],
    ['a.b', 'a.c', false],
    ['>', 'x', true],
  ])('%s matches %s: %s', (filter, subject, want) => {
    expect(subjectMatches(filter, subject)).toBe(want);
  });

  it('flags subjects that cannot be published to', () => {
    expect(invalidSubject('ctxmesh.ingest.write')).toBeNull();
    expect(invalidSubject('a..b')).toMatch(/empty token/);
    expect(invalidSubject('a b')).toMatch(/invalid/);
    expect(invalidSubject('a.>')).toMatch(/wildcards/);
  });
});
