/**
 * The mesh on real engines: REDIS_URL (ledger, sessions) and NATS_URL (ingest over
 * JetStream) set, as in production; the vector store stays embedded (Qdrant cannot run
 * here). Dedup across three turns of one session, and a write that survives an indexer
 * restart between publish and ack.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { startIndexer } from '@ctxmesh/indexer';
import { callGateway, startMesh, type Mesh } from '@ctxmesh/ctxmesh';
import { eventually, natsUrl, redisUrl, uniqueName } from '@ctxmesh/testing';
import { connectNats } from '@ctxmesh/runtime';
import { NatsEventBus } from '@ctxmesh/stores';
import Redis from 'ioredis';

interface ContextResult {
  entries: Array<{ uri: string; detail: string }>;
  stats: { dedup: { turns: number; status: string; cooled: number; turn: number | null }; excluded: number };
}
interface ListResult {
  resources: Array<{ uri: string }>;
}

const tag = uniqueName('e2e').replace(/-/g, '_');
let mesh: Mesh;
let dataDir: string;
const post = <T>(path: string, body: unknown) => callGateway<T>({ url: mesh.gatewayUrl }, 'POST', path, body);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-real-'));
  mesh = await startMesh({
    env: {
      CTXMESH_DATA_DIR: dataDir,
      GATEWAY_PORT: '0',
      REDIS_URL: redisUrl(),
      NATS_URL: natsUrl(),
      LEDGER_KEY_PREFIX: `${tag}:ledger:`,
      SESSIONS_KEY_PREFIX: `${tag}:`,
      CTXMESH_INGEST_STREAM: `ING_${tag}`,
      CTXMESH_INGEST_SUBJECT: `${tag}.ingest.write`,
      CTXMESH_INGEST_SUBJECTS: `${tag}.ingest.>`,
      CTXMESH_INGEST_DONE_PREFIX: `${tag}.done`,
      CTXMESH_INGEST_DLQ_SUBJECT: `${tag}.dlq`,
      INDEXER_DURABLE: `indexer_${tag}`,
      INDEXER_ACK_WAIT_MS: '2000',
    },
    log: silentLogger(),
  });
}, 60_000);

afterAll(async () => {
  await mesh?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  // Leave nothing behind on the shared servers.
  const nc = await connectNats(natsUrl(), 'e2e-cleanup');
  for (const stream of NatsEventBus.streamsOf(`ING_${tag}`)) {
    await nc.request(`$JS.API.STREAM.DELETE.${stream}`, new Uint8Array(), { timeout: 2000 }).catch(() => undefined);
  }
  await nc.close();
  const redis = new Redis(redisUrl());
  const keys = await redis.keys(`*${tag}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('the mesh on Redis and NATS JetStream', () => {
  it('dedups across three turns of one session: served entries cool for dedup_turns − 1 requests, then return', async () => {
    for (let i = 0; i < 6; i++) {
      await post('/api/v1/content/write', {
        uri: `viking://user/default/memories/events/harbour-${i}.md`,
        content: `# Summary\nHarbour festival note ${i}: lanterns, boats and music at the harbour.\n`,
        wait: true,
      });
    }
    const ask = () =>
      post<ContextResult>('/api/v1/search/search', {
        query: 'harbour festival lanterns boats',
        mode: 'context',
        session_id: `s-${tag}`,
        dedup_turns: 2,
        limit: 3,
        // compat: `limit` sizes its pool, so each turn serves three and leaves three to cool in turn.
        packing: 'compat',
      });
    const t0 = await ask();
    expect(t0.stats.dedup).toEqual({ turns: 2, status: 'new', cooled: 0, turn: 0 });
    const first = t0.entries.map((e) => e.uri);
    expect(first).toHaveLength(3);

    const t1 = await ask();
    expect(t1.stats.dedup).toMatchObject({ turns: 2, status: 'ok', turn: 1, cooled: 3 });
    // Compensating rows: the cooled top three are held back and the next three fill in.
    expect(t1.entries.map((e) => e.uri).some((u) => first.includes(u))).toBe(false);
    expect(t1.entries).toHaveLength(3);
    expect(t1.stats.excluded).toBeGreaterThanOrEqual(3);

    const t2 = await ask();
    expect(t2.stats.dedup).toMatchObject({ turns: 2, status: 'ok', turn: 2 });
    // Served at turn 0 and 2 − 0 = dedup_turns: no longer cooled; turn 1's entries still are.
    expect(t2.entries.map((e) => e.uri).sort()).toEqual([...first].sort());
  });

  it('keeps a write published while the indexer is down and applies it once after a restart', async () => {
    const indexer = mesh.servers.indexer as Awaited<ReturnType<typeof startIndexer>>;
    await indexer.shutdown();
    const uri = 'viking://resources/restart/orchid.md';
    const queued = await post<{ status: string; write_id: string }>('/api/v1/content/write', {
      uri,
      content: '# Orchids\n\nThe greenhouse orchids bloom in March.',
      wait: false,
    });
    expect(queued.status).toBe('queued');
    const before = await post<ListResult>('/api/v1/search/find', { query: 'greenhouse orchids bloom', limit: 3 });
    expect(before.resources.map((h) => h.uri)).not.toContain(uri);

    const restarted = await startIndexer({
      port: 0,
      log: silentLogger(),
      index: mesh.index,
      embedder: mesh.embedder,
      bus: mesh.bus,
      consumer: { durable: `indexer_${tag}`, subjects: [`${tag}.ingest.>`], maxDeliver: 5, ackWaitMs: 2000 },
    });
    try {
      await eventually(async () => {
        const r = await post<ListResult>('/api/v1/search/find', { query: 'greenhouse orchids bloom', limit: 3 });
        return r.resources[0]?.uri === uri;
      }, 15_000, 100);
      const doc = await mesh.index.getDocument(uri, { account: 'default', user: 'default', actorPeer: null, openPeers: false, allUsers: true, workspace: null });
      expect(doc).toHaveLength(1);
      expect(restarted.core.book.get(queued.write_id)?.state).toBe('applied');
    } finally {
      await restarted.shutdown();
    }
  }, 30_000);
});
