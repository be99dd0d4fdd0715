/**
 * createServer(deps): gather over a VectorIndex and an Embedder. No env, no listen, no side
 * effects on import.
 */
import type { Embedder } from '@ctxmesh/embedder';
import { gather } from '@ctxmesh/proto';
import { implement, type Handlers, type MountedService } from '@ctxmesh/rpc';
import type { VectorIndex } from '@ctxmesh/stores';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { EmbeddingCache } from './domain/embed-cache';
import { NodeSearcher } from './domain/searcher';
import { expandLinksHandler } from './handlers/expand-links';
import { findHandler } from './handlers/find';
import { gatherCandidatesHandler } from './handlers/gather-candidates';
import { gatherPassagesHandler } from './handlers/gather-passages';

/** Dependencies of the gather service. */
export interface GatherDeps {
  /** The vector index (read side); the caller owns and closes it. */
  index: VectorIndex;
  /** Query embedder; its dimension must equal the index's. */
  embedder: Embedder;
  /** Logger. */
  log: Logger;
  /** Aborted when the server is forced down. */
  shutdownSignal?: AbortSignal;
  /** Query embeddings kept in the LRU. @default 512 */
  embedCacheSize?: number;
  /** Clock for `as_of = ""`, ms since the epoch. @default Date.now */
  now?: () => number;
  /** Budget of calls that arrive without a deadline, ms. @default 30000 */
  defaultDeadlineMs?: number;
}

/** The implemented handlers of GatherService. */
export type GatherHandlers = Pick<Handlers<gather.GatherServiceServer>, 'find' | 'gatherCandidates' | 'gatherPassages' | 'expandLinks'>;

/**
 * The handlers over `deps`, callable in process (benchmarks, the all-in-one launcher).
 * @throws RangeError when the embedder's dimension differs from the index's
 */
export function handlers(deps: Pick<GatherDeps, 'index' | 'embedder' | 'embedCacheSize' | 'now'>): GatherHandlers {
  const env = {
    searcher: new NodeSearcher(deps.index, deps.embedder, new EmbeddingCache(deps.embedCacheSize)),
    index: deps.index,
    now: deps.now ?? Date.now,
  };
  return { find: findHandler(env), gatherCandidates: gatherCandidatesHandler(env), gatherPassages: gatherPassagesHandler(env), expandLinks: expandLinksHandler(env) };
}

/** Build the mounted service. */
export function createServer(deps: GatherDeps): MountedService {
  return {
    name: 'ctxmesh.gather.v1.GatherService',
    definition: gather.GatherServiceService,
    implementation: implement<gather.GatherServiceServer>(gather.GatherServiceService, handlers(deps), {
      domain: 'gather',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      defaultDeadlineMs: deps.defaultDeadlineMs,
      observe: observeRpc,
    }),
  };
}

/** Readiness of gather: the vector index answers (never throws). */
export async function gatherReady(index: VectorIndex): Promise<boolean> {
  try {
    return await index.ping();
  } catch {
    return false;
  }
}
