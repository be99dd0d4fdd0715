import { type EmbeddedDb, openEmbeddedDb } from './db';
import { readVecChunks } from './vec-chunks';

const DIM = 8;
const dbs: EmbeddedDb[] = [];
afterAll(() => {
  for (const db of dbs) db.close();
});

function vec(seed: number): Float32Array {
  return Float32Array.from({ length: DIM }, (_, j) => Math.sin(seed * 0.37 + j) * (1 + (seed % 5)));
}

function blob(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A vec0 table after inserts over several chunks, deletes, updates and inserts into freed slots. */
function churned(): EmbeddedDb {
  const db = openEmbeddedDb(':memory:');
  dbs.push(db);
  db.exec(`CREATE VIRTUAL TABLE t USING vec0(embedding float[${DIM}] distance_metric=cosine)`);
  const ins = db.prepare('INSERT INTO t(rowid, embedding) VALUES (?, ?)');
  const del = db.prepare('DELETE FROM t WHERE rowid = ?');
  const upd = db.prepare('UPDATE t SET embedding = ? WHERE rowid = ?');
  // Row ids above 2^32 too: the chunk keeps them as 64-bit integers.
  const id = (i: number) => BigInt(i < 2000 ? i + 1 : 2 ** 40 + i);
  db.transaction(() => {
    for (let i = 0; i < 2600; i++) ins.run(id(i), blob(vec(i)));
    for (let i = 0; i < 2600; i += 7) del.run(id(i));
    for (let i = 3; i < 2600; i += 11) if (i % 7 !== 0) upd.run(blob(vec(i + 10_000)), id(i));
    for (let i = 2600; i < 2900; i++) ins.run(id(i), blob(vec(i)));
  })();
  return db;
}

/** The tables sqlite-vec keeps `t` in, copied as plain tables (same definitions and rows) into a new database. */
function shadowCopy(src: EmbeddedDb): EmbeddedDb {
  const db = openEmbeddedDb(':memory:');
  dbs.push(db);
  for (const name of ['t_info', 't_chunks', 't_rowids', 't_vector_chunks00']) {
    const { sql } = src.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string };
    db.exec(sql);
    const rows = src.prepare(`SELECT * FROM "${name}"`).raw().all() as unknown[][];
    if (rows.length === 0) continue;
    const put = db.prepare(`INSERT INTO "${name}" VALUES (${rows[0]!.map(() => '?').join(', ')})`);
    db.transaction(() => {
      for (const r of rows) put.run(...r);
    })();
  }
  return db;
}

/** Every (row id → vector bytes) of `t`, read through the virtual table. */
function scanned(db: EmbeddedDb): Map<number, string> {
  const out = new Map<number, string>();
  for (const [rowid, embedding] of db.prepare('SELECT rowid, embedding FROM t').raw().iterate() as Iterable<[number, Buffer]>) out.set(Number(rowid), embedding.toString('hex'));
  return out;
}

function chunked(db: EmbeddedDb, dim = DIM): { ok: boolean; rows: Map<number, string>; calls: number } {
  const rows = new Map<number, string>();
  let calls = 0;
  const ok = readVecChunks(db, 't', dim, ({ vectors, ids }) => {
    calls++;
    ids.forEach((id, slot) => {
      if (Number.isNaN(id)) return;
      expect(rows.has(id)).toBe(false);
      rows.set(id, Buffer.from(vectors.subarray(slot * dim * 4, (slot + 1) * dim * 4)).toString('hex'));
    });
  });
  return { ok, rows, calls };
}

describe('readVecChunks', () => {
  it('reads every row and vector a scan of the vec0 table reads, over several chunks after deletes, updates and reused slots', () => {
    const db = churned();
    const scan = scanned(db);
    expect(scan.size).toBe(2600 - Math.ceil(2600 / 7) + 300);
    const { ok, rows, calls } = chunked(db);
    expect(ok).toBe(true);
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(rows).toEqual(scan);
  });

  it('reads an empty table as no rows', () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    db.exec(`CREATE VIRTUAL TABLE t USING vec0(embedding float[${DIM}])`);
    expect(chunked(db)).toEqual({ ok: true, rows: new Map(), calls: 0 });
  });

  it('declines, handing over nothing, where the storage is not the layout it knows', () => {
    // Another dimension than the blobs hold.
    expect(chunked(churned(), DIM * 2)).toEqual({ ok: false, rows: new Map(), calls: 0 });
    // sqlite-vec refuses writes to its tables: the cases below edit a plain copy of them.
    const copy = shadowCopy(churned());
    expect(chunked(copy).rows).toEqual(scanned(churned()));
    // A table created by another version of sqlite-vec.
    const other = shadowCopy(churned());
    other.prepare("UPDATE t_info SET value = 2 WHERE key = 'CREATE_VERSION_MINOR'").run();
    expect(chunked(other)).toEqual({ ok: false, rows: new Map(), calls: 0 });
    // Valid slots that the table's row ids do not account for.
    const torn = shadowCopy(churned());
    torn.prepare('DELETE FROM t_rowids WHERE rowid = (SELECT max(rowid) FROM t_rowids)').run();
    expect(chunked(torn)).toEqual({ ok: false, rows: new Map(), calls: 0 });
    // A chunk whose vectors are not its capacity's.
    const short = shadowCopy(churned());
    short.prepare('UPDATE t_vector_chunks00 SET vectors = substr(vectors, 1, 64) WHERE rowid = 2').run();
    expect(chunked(short)).toEqual({ ok: false, rows: new Map(), calls: 0 });
    // No such table, and a name that is not an identifier.
    expect(readVecChunks(churned(), 'absent', DIM, () => undefined)).toBe(false);
    expect(readVecChunks(churned(), 't" --', DIM, () => undefined)).toBe(false);
  });
});
