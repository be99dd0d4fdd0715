import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { describeEventBusContract, waitFor } from '../src/contract/event-bus.contract';
import { NatsEventBus, type NatsEventBusOptions } from '../src/nats/nats-event-bus';

const NATS_URL = process.env.NATS_URL;
if (!NATS_URL) throw new Error('NATS_URL must point at a real nats-server with JetStream for this test');

/** Unique names per test file, so parallel runs and leftovers never collide. */
function names(): NatsEventBusOptions {
  const tag = randomUUID().replace(/-/g, '').slice(0, 12);
  return {
    stream: `T_${tag}`,
    subjects: [`t${tag}.>`],
    deadLetterSubject: `t${tag}dlq.dead`,
    doneSubjectPrefix: `t${tag}done`,
    storage: 'memory',
    requestTimeoutMs: 5000,
  };
}

async function dropStreams(nc: NatsConnection, stream: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const s of NatsEventBus.streamsOf(stream)) await jsm.streams.delete(s).catch(() => false);
}

describeEventBusContract('nats-jetstream', async () => {
  const nc = await connect({ servers: NATS_URL, name: 'event-bus-contract' });
  const opts = names();
  const bus = await NatsEventBus.create(nc, opts);
  return {
    bus,
    subject: (name) => `${opts.subjects[0]!.slice(0, -2)}.${name}`,
    ackWaitMs: 1000,
    dispose: async () => {
      await dropStreams(nc, opts.stream);
      await nc.close();
    },
  };
});

describe('NatsEventBus', () => {
  let nc: NatsConnection;
  const opts = names();
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL, name: 'event-bus-nats' });
  });
  afterAll(async () => {
    await dropStreams(nc, opts.stream);
    await nc.close();
  });

  it('creates its streams once and updates them when the configuration changes', async () => {
    const first = await NatsEventBus.create(nc, { ...opts, duplicateWindowMs: 60_000 });
    const again = await NatsEventBus.create(nc, { ...opts, duplicateWindowMs: 60_000 });
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(opts.stream)).config.duplicate_window).toBe(60_000 * 1e6);
    const wider = [...opts.subjects, `${opts.subjects[0]!.slice(0, -2)}x.>`];
    const updated = await NatsEventBus.create(nc, { ...opts, subjects: wider, duplicateWindowMs: 30_000 });
    const info = await jsm.streams.info(opts.stream);
    expect(info.config.subjects).toEqual(wider);
    expect(info.config.duplicate_window).toBe(30_000 * 1e6);
    expect((await jsm.streams.info(NatsEventBus.deadLetterStream(opts.stream))).config.subjects).toEqual([opts.deadLetterSubject]);
    for (const b of [first, again, updated]) await b.close();
  });

  it('configures the durable with explicit ack, its ack wait and unlimited server-side redelivery', async () => {
    const bus = await NatsEventBus.create(nc, opts);
    const subject = `${opts.subjects[0]!.slice(0, -2)}.cfg`;
    const c = await bus.consume({ durable: 'cfg', subjects: [subject], maxDeliver: 3, ackWaitMs: 2500 }, async (d) => d.ack());
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.info(opts.stream, 'cfg');
    expect(info.config).toMatchObject({ ack_policy: 'explicit', ack_wait: 2500 * 1e6, max_deliver: -1, filter_subject: subject });
    await c.stop();
    await bus.close();
  });

  it('keeps consuming several subjects on one durable', async () => {
    const bus = await NatsEventBus.create(nc, opts);
    const base = opts.subjects[0]!.slice(0, -2);
    const seen: string[] = [];
    const c = await bus.consume({ durable: 'multi', subjects: [`${base}.w`, `${base}.d`], maxDeliver: 3, ackWaitMs: 1000 }, async (d) => {
      seen.push(d.message.subject);
      await d.ack();
    });
    const enc = new TextEncoder();
    await bus.publish({ subject: `${base}.other`, id: 'mo', key: 'k', data: enc.encode('o') });
    await bus.publish({ subject: `${base}.w`, id: 'mw', key: 'k', data: enc.encode('w') });
    await bus.publish({ subject: `${base}.d`, id: 'md', key: 'k', data: enc.encode('d') });
    await waitFor(() => seen.length === 2, 'two wanted subjects');
    expect(seen).toEqual([`${base}.w`, `${base}.d`]);
    await c.stop();
    await bus.close();
  });

  it('reports ping false once the connection is closed', async () => {
    const own = await connect({ servers: NATS_URL });
    const bus = await NatsEventBus.create(own, opts);
    expect(await bus.ping()).toBe(true);
    await own.close();
    expect(await bus.ping()).toBe(false);
  });
});
