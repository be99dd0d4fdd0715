/**
 * Loading the corpus. Two paths, measured separately:
 * - bulk: the indexer's own apply path (`validateWrite` → `Applier.apply` → the store's
 *   `replaceDocument`) called in process, one document after another — the fast way to build a
 *   100k-node index, with exactly the records the indexer would write;
 * - through the mesh: `POST /api/v1/content/write` with `wait:true` → event bus → indexer
 *   (issue 8 item 4), see `ingest.ts`.
 */
import type { Embedder } from '@ctxmesh/embedder';
import { Applier, validateWrite } from '@ctxmesh/indexer';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { indexer } from '@ctxmesh/proto';
import type { VectorIndex } from '@ctxmesh/stores';
import { docs, type CorpusDoc, type CorpusOptions } from './corpus';

/** Outcome of a bulk load. */
export interface BulkLoadResult {
  /** Documents applied. */
  docs: number;
  /** Wall time, ms. */
  ms: number;
  /** Index points after the load (documents + passages + sidecars). */
  points: number;
  /** Documents in the index after the load. */
  documents: number;
  /** Time of the store's `optimize()` after the load (planner statistics), ms (null when the store has none). */
  optimizeMs: number | null;
  /** Time to bring the dense ANN index up to date after the load, ms (null when the store has none). */
  denseMs: number | null;
}

/** An index that can merge its lexical segments after a bulk load (the embedded store). */
interface Optimizable {
  optimize(): Promise<void>;
  prepareDense?(): Promise<void>;
}

function canOptimize(index: VectorIndex): index is VectorIndex & Optimizable {
  return typeof (index as Partial<Optimizable>).optimize === 'function';
}

/**
 * Apply documents `[from, to)` of the corpus to `index` through the indexer's apply path, as
 * account `default`, then merge the lexical index (what the indexer does when an ingest drains).
 * @param onProgress called about every 2 s with the documents done so far
 * @throws whatever the store or embedder throws, or when a document is refused (a bench bug)
 */
export async function bulkLoad(
  index: VectorIndex,
  embedder: Embedder,
  outliner: CodeOutliner | null,
  from: number,
  to: number,
  opts: CorpusOptions & {
    onProgress?: (done: number, total: number) => void;
    /** Documents `[from, to)` of another corpus profile. @default the default profile's `docs` */
    source?: (from: number, to: number) => Iterable<CorpusDoc>;
    /** Documents applied at once. @default 32 */
    concurrency?: number;
  } = {},
): Promise<BulkLoadResult> {
  const applier = new Applier({ index, embedder, outliner });
  const t0 = performance.now();
  let last = t0;
  let done = 0;
  const source = (opts.source ? opts.source(from, to) : docs(from, to, opts))[Symbol.iterator]();
  // Several documents in flight (distinct URIs), as the indexer's consumer applies them: the
  // embedded store commits the writes of one event-loop turn together.
  const worker = async (): Promise<void> => {
    for (let it = source.next(); !it.done; it = source.next()) {
      const d = it.value;
      const op = indexer.WriteOp.fromPartial({
        identity: { accountId: 'default', userId: opts.user ?? 'default' },
        uri: d.uri,
        content: d.content,
        mode: indexer.WriteMode.WRITE_MODE_REPLACE,
      });
      const r = await applier.apply(validateWrite(op));
      if (r.status !== 'applied') throw new Error(`bulk load: ${d.uri} was refused: ${r.reason ?? ''} ${r.message ?? ''}`);
      done++;
      const now = performance.now();
      if (opts.onProgress && now - last > 2000) {
        last = now;
        opts.onProgress(done, to - from);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 32) }, () => worker()));
  const ms = performance.now() - t0;
  let optimizeMs: number | null = null;
  if (canOptimize(index)) {
    const o0 = performance.now();
    await index.optimize();
    optimizeMs = performance.now() - o0;
  }
  let denseMs: number | null = null;
  if (canOptimize(index) && index.prepareDense) {
    // Built now, so that no latency run below measures the build in the background.
    const d0 = performance.now();
    await index.prepareDense();
    denseMs = performance.now() - d0;
  }
  const stats = await index.stats();
  return { docs: done, ms, points: stats.points, documents: stats.documents, optimizeMs, denseMs };
}
