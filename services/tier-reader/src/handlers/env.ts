/** What tier-reader's handlers run on (built once per server by `createServer`). */
import type { CodeOutliner } from '@ctxmesh/kernel';
import type { VectorIndex } from '@ctxmesh/stores';

/** Handler environment. */
export interface HandlerEnv {
  /** The vector index (payload reads only). */
  index: VectorIndex;
  /** Code outliner, or null when none is loaded. */
  outliner: CodeOutliner | null;
  /** Store calls in flight per ReadTiers request. */
  readConcurrency: number;
  /** Content URIs per store call. */
  readBatchSize: number;
}
