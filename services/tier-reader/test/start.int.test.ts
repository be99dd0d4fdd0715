/** tier-reader's composition pieces: the store factory, the outliner loader and startTierReader. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { common, tierReader } from '@ctxmesh/proto';
import { Budget, callUnary, checkHealth, Code, connect } from '@ctxmesh/rpc';
import pino from 'pino';
import { loadOutliner, loadTierReaderConfig, openVectorStore, startTierReader } from '../src';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'ctxmesh-tier-reader-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('tier-reader start', () => {
  it('TierReader start - embedded store and the code outliner - SERVING; an unknown node is NOT_FOUND', async () => {
    const cfg = loadTierReaderConfig({ CTXMESH_DATA_DIR: dir });
    const outliner = await loadOutliner(pino({ level: 'silent' }));
    expect(outliner).not.toBeNull();
    expect(outliner!('a.py', 'def f(x):\n    return x\n')).toContain('def f(x)');
    const store = await openVectorStore(cfg);
    expect(store.index.dimension).toBe(256);
    const server = await startTierReader({ port: 0, log: pino({ level: 'silent' }), index: store.index, outliner });
    const client = connect(tierReader.TierReaderServiceClient, server.address);
    try {
      expect(await checkHealth(server.address, '')).toBe(true);
      await expect(
        callUnary(
          client.readContent.bind(client) as never,
          {
            identity: { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' },
            uri: 'viking://resources/none.md',
            tier: 'read',
          },
          Budget.ofMs(5000),
          { domain: 'tier-reader', pass: [Code.NOT_FOUND] },
        ),
      ).rejects.toMatchObject({ code: Code.NOT_FOUND });
    } finally {
      client.close();
      await server.shutdown();
      await store.close();
    }
  });

  it('TierReader start - qdrant configured but unreachable - open fails, no embedded fallback', async () => {
    const cfg = loadTierReaderConfig({ CTXMESH_VECTOR: 'qdrant', QDRANT_URL: 'http://127.0.0.1:9', CTXMESH_DATA_DIR: dir });
    await expect(openVectorStore(cfg)).rejects.toThrow();
  });
});
