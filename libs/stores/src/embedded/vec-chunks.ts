import type { EmbeddedDb } from './db';

/**
 * Every vector of `vi_vec` in a few statements, read from the tables sqlite-vec keeps them in,
 * for the scan cache's full load (`syncCache`).
 *
 * A `vec0` table reads row by row through its virtual-table cursor: about 10 µs a row, 0.5–1 s
 * for the 52,482 rows of a 10,000-document tree and most of the 19 s a search thread took to
 * load 509,367 rows. The table keeps its vectors in chunks of rows: `<name>_chunks` holds, per
 * chunk, its capacity (`size`), a validity bitmap (bit i of byte i/8, least significant first)
 * and the 64-bit row ids of its slots; `<name>_vector_chunks00` holds, under the chunk's id,
 * its vectors back to back (`size × dim` float32). Reading those is one statement over about
 * fifty rows a 10,000-document tree (1 MiB each at 256 dimensions): 30–60 ms against 500.
 *
 * That layout is sqlite-vec's own, not its interface, so it is read only where it is the one
 * described above: a table created by sqlite-vec 0.1 (`<name>_info`), the shadow tables with
 * those columns, every blob of the size the chunk's capacity gives, and as many valid slots as
 * the table has rows (`<name>_rowids`). Anything else — another version's layout, a dimension
 * that does not match — returns false, and the caller reads the table itself.
 */

/** One chunk of a `vec0` table: its vectors and the row id of each slot. */
export interface VectorChunk {
  /** The chunk's vectors, `ids.length × dim` float32 back to back (the callee copies what it keeps). */
  vectors: Uint8Array;
  /** Row id by slot; NaN for a slot that holds no row. */
  ids: Float64Array;
}

function columns(db: EmbeddedDb, table: string): string[] {
  return (db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as Array<{ name: string }>).map((c) => c.name);
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * Hand every chunk of the `vec0` table `table` (float vectors of `dim` dimensions) to `onChunk`,
 * one at a time (see the module comment). Run it inside the caller's transaction for a
 * consistent snapshot.
 * @returns false, having called `onChunk` for nothing, when the table's storage is not the
 *   layout described above (the caller then scans the table)
 */
export function readVecChunks(db: EmbeddedDb, table: string, dim: number, onChunk: (chunk: VectorChunk) => void): boolean {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table) || !(dim > 0)) return false;
  const shadow = [`${table}_info`, `${table}_chunks`, `${table}_rowids`, `${table}_vector_chunks00`];
  const found = db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN (?, ?, ?, ?)`).get(...shadow) as { n: number };
  if (found.n !== 4) return false;
  const info = new Map((db.prepare(`SELECT key, value FROM "${table}_info"`).all() as Array<{ key: string; value: unknown }>).map((r) => [r.key, r.value]));
  if (Number(info.get('CREATE_VERSION_MAJOR')) !== 0 || Number(info.get('CREATE_VERSION_MINOR')) !== 1) return false;
  if (!same(columns(db, `${table}_chunks`), ['chunk_id', 'size', 'validity', 'rowids'])) return false;
  if (!same(columns(db, `${table}_vector_chunks00`), ['rowid', 'vectors'])) return false;

  // First the small columns of every chunk, checked before any vector is handed over: a layout
  // that does not fit leaves nothing half read. `length()` reads no blob.
  const idsOf = new Map<number, Float64Array>();
  let valid = 0;
  const meta = db.prepare(`SELECT c.chunk_id, c.size, c.validity, c.rowids, length(v.vectors) FROM "${table}_chunks" c JOIN "${table}_vector_chunks00" v ON v.rowid = c.chunk_id`).raw();
  for (const [chunkId, size, validity, rowids, bytes] of meta.iterate() as Iterable<[number, number, Buffer, Buffer, number]>) {
    if (!Number.isInteger(size) || size <= 0 || validity.length * 8 < size || rowids.length !== size * 8 || bytes !== size * dim * 4) return false;
    const ids = new Float64Array(size).fill(NaN);
    for (let i = 0; i < size; i++) {
      if ((validity[i >> 3]! & (1 << (i & 7))) === 0) continue;
      const id = rowids.readInt32LE(i * 8 + 4) * 2 ** 32 + rowids.readUInt32LE(i * 8);
      if (!Number.isSafeInteger(id)) return false;
      ids[i] = id;
      valid++;
    }
    idsOf.set(chunkId, ids);
  }
  const { n } = db.prepare(`SELECT count(*) AS n FROM "${table}_rowids"`).get() as { n: number };
  if (n !== valid) return false;

  // Then the vectors, one chunk in memory at a time.
  for (const [chunkId, vectors] of db.prepare(`SELECT rowid, vectors FROM "${table}_vector_chunks00"`).raw().iterate() as Iterable<[number, Buffer]>) {
    const ids = idsOf.get(chunkId);
    if (ids) onChunk({ vectors, ids });
  }
  return true;
}
