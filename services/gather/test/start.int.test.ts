/** gather's composition pieces: the store factory and startGather, over real gRPC on port 0. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { common, gather } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, connect, LIVENESS } from '@ctxmesh/rpc';
import { IndexDimensionMismatchError } from '@ctxmesh/stores';
import { indexBackgroundRows } from '@ctxmesh/telemetry';
import pino from 'pino';
import { createEmbedder, loadGatherConfig, openVectorStore, startGather } from '../src';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'ctxmesh-gather-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('gather start', () => {
  it('Gather start - embedded store in CTXMESH_DATA_DIR - SERVING and answering Find', async () => {
    const cfg = loadGatherConfig({ CTXMESH_DATA_DIR: dir, CTXMESH_LEXICAL_DIM: '128' });
    const embedder = createEmbedder(cfg);
    expect(embedder.id).toBe('lexical-v1-d128');
    const store = await openVectorStore(cfg, embedder.dimension);
    expect(store.description).toBe(`embedded ${path.join(dir, 'ctxmesh.db')}`);
    const server = await startGather({ port: 0, log: pino({ level: 'silent' }), index: store.index, embedder });
    const client = connect(gather.GatherServiceClient, server.address);
    try {
      expect(await checkHealth(server.address, '')).toBe(true);
      expect(await checkHealth(server.address, LIVENESS)).toBe(true);
      const res = (await callUnary(
        client.find.bind(client) as never,
        {
          identity: { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' },
          queries: ['anything'],
          imageUrl: '',
          targetUris: [],
          filter: undefined,
          limit: 5,
          levels: [],
          asOfMs: undefined,
        },
        Budget.ofMs(5000),
        { domain: 'gather' },
      )) as gather.FindResponse;
      expect(res).toEqual({ memories: [], resources: [], skills: [] });
      // The embedded index's background work is in /metrics while gather serves it.
      expect((await indexBackgroundRows.get()).values.map((v) => [v.labels.work, v.value])).toEqual([
        ['ann', 0],
        ['lexical', 0],
      ]);
    } finally {
      client.close();
      await server.shutdown();
      await store.close();
    }
    expect(await store.index.ping()).toBe(false);
    expect((await indexBackgroundRows.get()).values).toEqual([]);
  });

  it('Gather start - data dir holding an index of another dimension - open fails', async () => {
    const first = await openVectorStore(loadGatherConfig({ CTXMESH_DATA_DIR: dir }), 256);
    await first.close();
    await expect(openVectorStore(loadGatherConfig({ CTXMESH_DATA_DIR: dir }), 128)).rejects.toBeInstanceOf(IndexDimensionMismatchError);
  });

  it('Gather start - qdrant configured but unreachable - open fails, no embedded fallback', async () => {
    const cfg = loadGatherConfig({ CTXMESH_VECTOR: 'qdrant', QDRANT_URL: 'http://127.0.0.1:9', CTXMESH_DATA_DIR: dir });
    await expect(openVectorStore(cfg, 256)).rejects.toThrow();
  });
});
