import { rmSync } from 'node:fs';
import { availableParallelism, setPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { builtWorkerScript } from '@ctxmesh/runtime';
import { Index, MetricKind, ScalarKind } from 'usearch';
import type { AnnOptions } from './ann';
import { openEmbeddedDb } from './db';
import { blobVec } from './rows';
import { unit } from './scan-cache';

/** The HNSW parameters of an index (what a build and a load must agree on). */
export type AnnIndexParams = Pick<AnnOptions, 'connectivity' | 'expansionAdd' | 'expansionSearch' | 'quantization'>;

/** An empty usearch HNSW index: cosine metric, `params`' links, `ef` and vector precision. */
export function newAnnIndex(dimension: number, params: AnnIndexParams): Index {
  return new Index({
    dimensions: dimension,
    metric: MetricKind.Cos,
    quantization: params.quantization === 'f32' ? ScalarKind.F32 : params.quantization === 'i8' ? ScalarKind.I8 : ScalarKind.F16,
    connectivity: params.connectivity,
    expansion_add: params.expansionAdd,
    expansion_search: params.expansionSearch,
    multi: false,
  });
}

/** What a build off the search thread is asked for. */
export interface AnnBuildRequest {
  /** The SQLite file the rows' vectors are read from (`vi_vec`). */
  dbPath: string;
  /** Where the built index is saved. */
  out: string;
  dimension: number;
  params: AnnIndexParams;
  /** Rows to add, by id. */
  ids: Int32Array;
  /** Native threads for usearch's add. @default the machine's parallelism */
  threads?: number;
  /** Rows read and added at once. @default 4096 */
  chunk?: number;
}

/**
 * Build an HNSW index of rows `ids` from their vectors in the file and save it at `out`: in
 * chunks of `chunk` rows, each added on `threads` native threads — some three times the rows a
 * second of the one-thread background build in small steps, which must leave the search thread
 * to the searches. The vectors are made unit-length as the scan cache makes them, so the index
 * holds what a build from the scan cache would. A row with no vector in the file (deleted since
 * it was asked for) is left out.
 * @returns the ids added
 */
export function buildAnnFile(req: AnnBuildRequest): Int32Array {
  const db = openEmbeddedDb(req.dbPath, { cacheKiB: 8192, mmapBytes: 0 });
  try {
    const index = newAnnIndex(req.dimension, req.params);
    const read = db.prepare('SELECT rowid, embedding FROM vi_vec WHERE rowid IN (SELECT value FROM json_each(?))').raw();
    const chunk = Math.max(1, Math.floor(req.chunk ?? 4096));
    const threads = Math.max(1, Math.floor(req.threads ?? availableParallelism()));
    const added: number[] = [];
    for (let at = 0; at < req.ids.length; at += chunk) {
      const rows = read.all(JSON.stringify(Array.from(req.ids.subarray(at, at + chunk)))) as Array<[number | bigint, Buffer]>;
      if (rows.length === 0) continue;
      const flat = new Float32Array(rows.length * req.dimension);
      const keys = new BigUint64Array(rows.length);
      rows.forEach(([id, blob], i) => {
        flat.set(unit(blobVec(blob)), i * req.dimension);
        keys[i] = BigInt(id);
        added.push(Number(id));
      });
      index.add(keys, flat, threads);
    }
    index.save(req.out);
    return Int32Array.from(added);
  } finally {
    db.close();
  }
}

/** The built worker entry, or null when the package is not built (tests of the source). */
export function annBuildScript(): string | null {
  return builtWorkerScript(__dirname, 'embedded', 'ann-build-worker.js');
}

/** A build running in a thread of its own. */
export interface AnnBuild {
  /** The ids added; rejects when the thread failed or was stopped. */
  done: Promise<Int32Array>;
  /** Stop the thread (the build's file is removed). */
  cancel(): void;
}

/** Runs a build somewhere else than the calling thread. */
export type AnnBuilder = (req: AnnBuildRequest) => AnnBuild;

/** What the worker posts back. */
export type AnnBuildReply = { ok: true; ids: Int32Array } | { ok: false; message: string };

/**
 * A builder that runs {@link buildAnnFile} in a worker thread (`script`, by default the built
 * `ann-build-worker.js`), at a lower scheduling priority than the threads that serve: a build
 * takes the cores the searches leave. Null when there is no built entry.
 */
export function threadAnnBuilder(script: string | null = annBuildScript()): AnnBuilder | null {
  if (!script) return null;
  return (req) => {
    const worker = new Worker(script, { workerData: req });
    worker.unref();
    let settled = false;
    const done = new Promise<Int32Array>((resolve, reject) => {
      const fail = (why: string): void => {
        if (settled) return;
        settled = true;
        rmSync(req.out, { force: true });
        reject(new Error(`the ANN build thread ${why}`));
      };
      worker.once('message', (m: AnnBuildReply) => {
        if (m.ok) {
          settled = true;
          resolve(m.ids);
        } else fail(`failed: ${m.message}`);
        void worker.terminate();
      });
      worker.once('error', (e) => fail(`failed: ${e.message}`));
      worker.once('exit', (code) => fail(`exited with code ${code}`));
    });
    return {
      done,
      cancel: () => {
        void worker.terminate();
      },
    };
  };
}

/** In the worker: lower this thread's priority (the native threads it starts inherit it), then build. */
export function runAnnBuildInThread(req: AnnBuildRequest, post: (m: AnnBuildReply, transfer?: ArrayBuffer[]) => void): void {
  try {
    // 0 is the calling thread on Linux; where it cannot be lowered the build runs as it is.
    setPriority(0, 10);
  } catch {
    /* not permitted here */
  }
  try {
    const ids = buildAnnFile(req);
    post({ ok: true, ids }, [ids.buffer as ArrayBuffer]);
  } catch (e) {
    post({ ok: false, message: e instanceof Error ? e.message : String(e) });
  }
}
