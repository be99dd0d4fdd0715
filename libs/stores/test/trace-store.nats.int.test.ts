import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import { natsUrl } from '@ctxmesh/testing';
import { NatsTraceStore } from '../src/traces/nats-trace-store';
import { describeTraceStoreContract } from '../src/traces/trace-store.contract';

const tag = () => randomUUID().replace(/-/g, '').slice(0, 12);

describeTraceStoreContract('nats-jetstream', async () => {
  const nc = await connect({ servers: natsUrl(), name: 'trace-store-contract' });
  const t = tag();
  const store = await NatsTraceStore.create(nc, { stream: `TR_${t}`, subjectPrefix: `tr${t}`, storage: 'memory' });
  return {
    store,
    dispose: async () => {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(store.stream).catch(() => false);
      await nc.close();
    },
  };
});

describe('NatsTraceStore', () => {
  let nc: NatsConnection;
  const t = tag();
  const stream = `TR_${t}`;
  beforeAll(async () => {
    nc = await connect({ servers: natsUrl(), name: 'trace-store-nats' });
  });
  afterAll(async () => {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.delete(stream).catch(() => false);
    await nc.close();
  });

  it('creates its stream once and updates the retention when it changes', async () => {
    await NatsTraceStore.create(nc, { stream, subjectPrefix: `tr${t}`, storage: 'memory', maxAgeMs: 60_000 });
    await NatsTraceStore.create(nc, { stream, subjectPrefix: `tr${t}`, storage: 'memory', maxAgeMs: 60_000 });
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    expect(info.config.subjects).toEqual([`tr${t}.>`]);
    expect(info.config.max_age).toBe(nanos(60_000));
    expect(info.config.max_msgs_per_subject).toBe(1);
    await NatsTraceStore.create(nc, { stream, subjectPrefix: `tr${t}`, storage: 'memory', maxAgeMs: 120_000 });
    expect((await jsm.streams.info(stream)).config.max_age).toBe(nanos(120_000));
  });

  it('stores one message per trace on its own subject', async () => {
    const store = await NatsTraceStore.create(nc, { stream, subjectPrefix: `tr${t}`, storage: 'memory' });
    const jsm = await jetstreamManager(nc);
    const before = (await jsm.streams.info(stream)).state.messages;
    await store.append({ id: 'abc', account: 'acme', createdAt: 1, data: { q: 'x' } });
    await store.append({ id: 'abc', account: 'acme', createdAt: 1, data: { q: 'x' } });
    await store.append({ id: 'def', account: 'acme', createdAt: 2, data: { q: 'y' } });
    const info = await jsm.streams.info(stream, { subjects_filter: `tr${t}.>` });
    expect(info.state.messages - before).toBe(2);
    const m = await jsm.streams.getMessage(stream, { last_by_subj: `tr${t}.def` });
    expect(m?.json()).toEqual({ id: 'def', account: 'acme', createdAt: 2, data: { q: 'y' } });
  });

  it('reports not ready once closed', async () => {
    const store = await NatsTraceStore.create(nc, { stream, subjectPrefix: `tr${t}`, storage: 'memory' });
    expect(await store.ping()).toBe(true);
    await store.close();
    expect(await store.ping()).toBe(false);
  });
});
