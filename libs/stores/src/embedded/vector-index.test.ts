import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { describeVectorIndexContract, makeRecord } from '../contract/vector-index.contract';
import type { Visibility } from '../ports/vector-index';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import fc from 'fast-check';
import { IndexDimensionMismatchError, InvalidRecordError, UnsupportedFilterError } from '../ports/errors';
import { EmbeddedVectorIndex, IndexClosedError, IndexSchemaMismatchError, TopK } from './vector-index';

const dbs: EmbeddedDb[] = [];
afterAll(() => {
  for (const db of dbs) db.close();
});

describeVectorIndexContract('embedded (SQLite in memory)', async () => {
  const db = openEmbeddedDb(':memory:');
  dbs.push(db);
  return new EmbeddedVectorIndex(db, { dimension: 256 });
});

describe('EmbeddedVectorIndex', () => {
  const embedder = new LexicalEmbedder({ dimension: 256 });
  const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxmesh-vi-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('lets two adapters on one file see each other’s committed writes and deletes', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256 });
      const q = (text: string) => ({ visibility: vis, vector: embedder.embedOne(text), text, targets: [], filter: null, limit: 5 });
      expect(await reader.search([q('lighthouse keeper')])).toEqual([[]]);
      await writer.replaceDocument('viking://resources/l.md', [makeRecord(embedder, 'a', 'viking://resources/l.md', 'the lighthouse keeper')]);
      const [[hit]] = await reader.search([q('lighthouse keeper')]);
      expect(hit.node.uri).toBe('viking://resources/l.md');
      await writer.deleteDocument('a', 'viking://resources/l.md');
      expect(await reader.search([q('lighthouse keeper')])).toEqual([[]]);
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('reloads a reader that fell behind the pruned change log', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256, changeLogKeep: 5 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256, changeLogKeep: 5 });
      const q = { visibility: vis, vector: null, text: 'otter', targets: [], filter: null, limit: 50 };
      await writer.replaceDocument('viking://resources/o0.md', [makeRecord(embedder, 'a', 'viking://resources/o0.md', 'otter zero')]);
      expect((await reader.search([q]))[0]).toHaveLength(1);
      // 30 more writes and a delete: far more than the 5 change-log rows kept.
      for (let i = 1; i <= 30; i++) {
        const uri = `viking://resources/o${i}.md`;
        await writer.replaceDocument(uri, [makeRecord(embedder, 'a', uri, `otter number ${i}`)]);
      }
      await writer.deleteDocument('a', 'viking://resources/o0.md');
      expect(Number((dbA.prepare("SELECT value FROM vi_meta WHERE key = 'pruned_through'").get() as { value: string }).value)).toBeGreaterThan(1);
      const [hits] = await reader.search([q]);
      expect(hits.map((h) => h.node.uri).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `viking://resources/o${i + 1}.md`).sort());
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('keeps its data across reopening the file', async () => {
    const path = join(dir, 'ctx.db');
    const db1 = openEmbeddedDb(path);
    await new EmbeddedVectorIndex(db1, { dimension: 256 }).replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'a', 'viking://resources/p.md', 'persistent penguin')]);
    db1.close();
    const db2 = openEmbeddedDb(path);
    try {
      const index = new EmbeddedVectorIndex(db2, { dimension: 256 });
      const [[hit]] = await index.search([{ visibility: vis, vector: null, text: 'penguin', targets: [], filter: null, limit: 3 }]);
      expect(hit.node.uri).toBe('viking://resources/p.md');
    } finally {
      db2.close();
    }
  });

  it('refuses to open a file created with another dimension', () => {
    const path = join(dir, 'ctx.db');
    const db = openEmbeddedDb(path);
    try {
      new EmbeddedVectorIndex(db, { dimension: 256 });
      expect(() => new EmbeddedVectorIndex(db, { dimension: 512 })).toThrow(IndexDimensionMismatchError);
    } finally {
      db.close();
    }
  });

  it('refuses a file written with another table layout', () => {
    const db = openEmbeddedDb(':memory:');
    try {
      new EmbeddedVectorIndex(db, { dimension: 256 });
      db.prepare("UPDATE vi_meta SET value = '0' WHERE key = 'schema'").run();
      expect(() => new EmbeddedVectorIndex(db, { dimension: 256 })).toThrow(IndexSchemaMismatchError);
    } finally {
      db.close();
    }
  });

  it('fails calls after close and reports not ready, leaving the shared handle open', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      await index.close();
      expect(await index.ping()).toBe(false);
      await expect(index.search([])).rejects.toBeInstanceOf(IndexClosedError);
      expect(db.open).toBe(true);
    } finally {
      db.close();
    }
  });

  it('rejects an unknown filter field and a query vector of the wrong dimension', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      await index.replaceDocument('viking://resources/x.md', [makeRecord(embedder, 'a', 'viking://resources/x.md', 'x marks the spot')]);
      const base = { visibility: vis, vector: null, text: 'spot', targets: [], limit: 3 };
      await expect(index.search([{ ...base, filter: { op: 'must', field: 'owner', conds: ['u'] } }])).rejects.toBeInstanceOf(UnsupportedFilterError);
      await expect(index.search([{ ...base, filter: null, vector: new Float32Array(8) }])).rejects.toBeInstanceOf(InvalidRecordError);
    } finally {
      db.close();
    }
  });

  it('finds lexical hits under a narrow target even when other rows fill the shared top rows', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      // 1,100 resources mention "harbour" more often than the one memory under the target.
      for (let i = 0; i < 1100; i++) {
        const uri = `viking://resources/bulk/r${i}.md`;
        await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, `harbour harbour harbour notes ${i}`)]);
      }
      const target = 'viking://user/u/memories/events/h.md';
      await index.replaceDocument(target, [makeRecord(embedder, 'a', target, 'a walk by the harbour at dawn with many other words in it')]);
      const [hits] = await index.search([{ visibility: vis, vector: null, text: 'harbour', targets: ['viking://user/u/memories'], filter: null, limit: 3 }]);
      expect(hits.map((h) => h.node.uri)).toEqual([target]);
    } finally {
      db.close();
    }
  });
});

describe('TopK', () => {
  it('keeps the k highest scores, best first, like a full sort', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { maxLength: 200 }), fc.integer({ min: 1, max: 20 }), (scores, k) => {
        const top = new TopK(k);
        scores.forEach((s, i) => {
          if (s > top.floor) top.push(i, s);
        });
        const got = top.sorted().map((i) => scores[i]);
        const want = [...scores].sort((a, b) => b - a).slice(0, k);
        expect(got).toEqual(want);
      }),
    );
  });
});
