/**
 * The one-process mesh's search thread (`CTXMESH_SEARCH_THREAD`, on by default for
 * `ctxmesh start`): gather and tier-reader run in a `worker_threads` worker with their own
 * connection to the embedded SQLite file (see `search-worker.ts`), and the orchestrator reaches
 * them through a MessagePort (the rpc library's thread transport: the same ports, deadlines and
 * error mapping as gRPC, without HTTP/2 or protobuf; their gRPC addresses still answer health
 * checks). Searching is the
 * largest share of a context request's CPU, so a second core takes it while the main thread
 * serves HTTP, orchestrates, renders and writes.
 *
 * Memory: the scan cache (vectors and metadata), the lexical caches and the ANN index live in
 * the search thread only — the main thread writes and never searches, so it builds none.
 */
import { SearchThreadError } from './errors';

export { SearchThreadError };
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ThreadChannel } from '@ctxmesh/rpc';
import { ConfigError, builtWorkerScript } from '@ctxmesh/runtime';
import { addMetricsSource, type MetricsSource } from '@ctxmesh/telemetry';
import type { SearchWorkerData, SearchWorkerMessage } from './search-worker';

/** A running search thread. */
export interface SearchThread {
  /** gRPC address of gather in the thread. */
  gather: string;
  /** gRPC address of tier-reader in the thread. */
  tierReader: string;
  /** Gather and tier-reader, served to this thread over a MessagePort (calls fail UNAVAILABLE once the thread has gone). */
  channel: ThreadChannel;
  /**
   * Load the thread's vector store now (`VectorStore.warm`) rather than at the first question:
   * call it once the mesh listens, so the load does not compete with the rest of its start.
   */
  warm(): void;
  /** Drain both servers, close the index and end the thread (terminated after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** The compiled worker entry: beside this module in `dist/` (under ts sources, the built one). */
export function searchWorkerScript(): string {
  const script = builtWorkerScript(__dirname, '', 'search-worker.js');
  if (script) return script;
  throw new SearchThreadError(`the search thread's entry is not built (${join(__dirname, '..', 'dist', 'search-worker.js')}): run npm run build`);
}

/**
 * Start the search thread and wait until gather and tier-reader listen in it.
 * @throws ConfigError listing the thread's configuration problems
 * @throws SearchThreadError when it fails otherwise or exits first
 */
export function startSearchThread(env: Record<string, string | undefined>, logLevel: string): Promise<SearchThread> {
  const data: SearchWorkerData = { env: { ...env }, logLevel };
  const worker = new Worker(searchWorkerScript(), { workerData: data, env: data.env });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  return new Promise<SearchThread>((resolve, reject) => {
    const fail = (err: Error) => {
      worker.removeAllListeners('message');
      void worker.terminate();
      reject(err);
    };
    worker.once('error', (err) => fail(new SearchThreadError(`the search thread failed: ${err.message}`, { cause: err })));
    void exit.then(() => fail(new SearchThreadError('the search thread exited before it was ready')));
    worker.on('message', (m: SearchWorkerMessage) => {
      if (m.type === 'failed') {
        fail(m.problems ? new ConfigError(m.problems) : new SearchThreadError(`the search thread did not start: ${m.message}`));
        return;
      }
      if (m.type !== 'ready') return;
      worker.removeAllListeners('error');
      // After start-up an error in the thread ends it; the orchestrator then sees gather and
      // tier-reader as UNAVAILABLE (503), and /ready turns false.
      worker.on('error', () => undefined);
      const removeSource = addMetricsSource(threadMetrics(worker, () => exited));
      const channel = new ThreadChannel(m.channel);
      void exit.then(() => channel.fail('the search thread has stopped'));
      resolve({
        gather: m.gather,
        tierReader: m.tierReader,
        channel,
        warm: () => {
          if (!exited) worker.postMessage({ type: 'warm' });
        },
        stop: async (graceMs = 15_000) => {
          removeSource();
          if (exited) return;
          worker.postMessage({ type: 'stop' });
          const timer = setTimeout(() => void worker.terminate(), graceMs);
          await exit;
          clearTimeout(timer);
        },
      });
    });
  });
}

/** Most time a scrape waits for the thread's metrics (it is then left out of that scrape). */
const METRICS_WAIT_MS = 1000;

/** The thread's metrics for `/metrics` (gather's and tier-reader's RPC latencies), asked for per scrape. */
function threadMetrics(worker: Worker, gone: () => boolean): MetricsSource {
  let next = 0;
  return () =>
    new Promise((resolve, reject) => {
      if (gone()) {
        reject(new SearchThreadError('the search thread has stopped'));
        return;
      }
      const id = ++next;
      const timer = setTimeout(() => {
        worker.off('message', onMessage);
        reject(new SearchThreadError('the search thread did not send its metrics'));
      }, METRICS_WAIT_MS);
      const onMessage = (m: SearchWorkerMessage) => {
        if (m.type !== 'metrics' || m.id !== id) return;
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve(m.metrics);
      };
      worker.on('message', onMessage);
      worker.postMessage({ type: 'metrics', id });
    });
}
