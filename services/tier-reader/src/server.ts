/**
 * createServer(deps): tier-reader over a VectorIndex (payload reads) and an optional code
 * outliner. No env, no listen, no side effects on import.
 */
import type { CodeOutliner } from '@ctxmesh/kernel';
import { tierReader } from '@ctxmesh/proto';
import { implement, type Handlers, type MountedService } from '@ctxmesh/rpc';
import type { VectorIndex } from '@ctxmesh/stores';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { readContentHandler } from './handlers/read-content';
import { readTiersHandler } from './handlers/read-tiers';

/** Dependencies of the tier-reader service. */
export interface TierReaderDeps {
  /** The vector index (read side); the caller owns and closes it. */
  index: VectorIndex;
  /**
   * Code-skeleton extractor (`createOutliner().outline` from `@ctxmesh/outline`); absent or
   * null → code files get the generic document overview even when `code_outline` is asked.
   */
  outliner?: CodeOutliner | null;
  /** Logger. */
  log: Logger;
  /** Aborted when the server is forced down. */
  shutdownSignal?: AbortSignal;
  /** Store calls in flight per ReadTiers request. @default 8 (context-contract §4.1) */
  readConcurrency?: number;
  /** Content URIs per store call. @default 16 */
  readBatchSize?: number;
  /** Budget of calls that arrive without a deadline, ms. @default 30000 */
  defaultDeadlineMs?: number;
}

/** The handlers of TierReaderService. */
export type TierReaderHandlers = Handlers<tierReader.TierReaderServiceServer>;

/** The handlers over `deps`, callable in process (benchmarks, the all-in-one launcher). */
export function handlers(deps: Pick<TierReaderDeps, 'index' | 'outliner' | 'readConcurrency' | 'readBatchSize'>): TierReaderHandlers {
  const env = {
    index: deps.index,
    outliner: deps.outliner ?? null,
    readConcurrency: deps.readConcurrency ?? 8,
    readBatchSize: deps.readBatchSize ?? 16,
  };
  return { readTiers: readTiersHandler(env), readContent: readContentHandler(env) };
}

/** Build the mounted service. */
export function createServer(deps: TierReaderDeps): MountedService {
  return {
    name: 'ctxmesh.tier_reader.v1.TierReaderService',
    definition: tierReader.TierReaderServiceService,
    implementation: implement<tierReader.TierReaderServiceServer>(tierReader.TierReaderServiceService, handlers(deps), {
      domain: 'tier-reader',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      defaultDeadlineMs: deps.defaultDeadlineMs,
      observe: observeRpc,
    }),
  };
}

/** Readiness of tier-reader: the vector index answers (never throws). */
export async function tierReaderReady(index: VectorIndex): Promise<boolean> {
  try {
    return await index.ping();
  } catch {
    return false;
  }
}
