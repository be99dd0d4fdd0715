/** What gather's handlers run on (built once per server by `createServer`). */
import type { VectorIndex } from '@ctxmesh/stores';
import type { NodeSearcher } from '../domain/searcher';

/** Handler environment. */
export interface HandlerEnv {
  /** Node searcher over the vector index and embedder (shares the embedding cache). */
  searcher: NodeSearcher;
  /** The vector index itself, for retrieve's texts, vectors and chunk probes. */
  index: VectorIndex;
  /** Clock for `as_of = ""` (ms since the epoch). @default Date.now */
  now: () => number;
}
