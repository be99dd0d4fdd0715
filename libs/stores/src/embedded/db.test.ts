import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEmbeddedDb, vecVersion } from './db';

describe('openEmbeddedDb', () => {
  it('loads sqlite-vec into an in-memory database', () => {
    const db = openEmbeddedDb(':memory:');
    try {
      expect(vecVersion(db)).toMatch(/^v0\.1\./);
      const row = db.prepare('select vec_length(?) as n').get(Buffer.from(new Float32Array([1, 2, 3]).buffer)) as { n: number };
      expect(row.n).toBe(3);
    } finally {
      db.close();
    }
  });

  it('opens a file database in WAL mode with synchronous NORMAL and FTS5 trigram available', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-db-'));
    const db = openEmbeddedDb(join(dir, 'ctx.db'));
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      // synchronous NORMAL = 1
      expect(db.pragma('synchronous', { simple: true })).toBe(1);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      // No memory-mapped I/O unless asked for: mapped pages count in the process's resident set.
      expect(db.pragma('mmap_size', { simple: true })).toBe(0);
      expect(db.pragma('cache_size', { simple: true })).toBe(-65536);
      db.exec("create virtual table t using fts5(x, tokenize='trigram')");
      db.prepare('insert into t(x) values (?)').run('hello world');
      expect(db.prepare("select count(*) as n from t where t match 'llo'").get()).toEqual({ n: 1 });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('maps as much of the file as asked for', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-db-'));
    const db = openEmbeddedDb(join(dir, 'ctx.db'), { mmapBytes: 1 << 20, cacheKiB: 2048 });
    try {
      expect(db.pragma('mmap_size', { simple: true })).toBe(1 << 20);
      expect(db.pragma('cache_size', { simple: true })).toBe(-2048);
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
