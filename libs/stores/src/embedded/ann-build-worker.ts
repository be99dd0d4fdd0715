/** Worker entry of {@link threadAnnBuilder}: one build per thread, its request in `workerData`. */
import { parentPort, workerData } from 'node:worker_threads';
import { type AnnBuildRequest, runAnnBuildInThread } from './ann-build';

runAnnBuildInThread(workerData as AnnBuildRequest, (m, transfer) => parentPort?.postMessage(m, transfer ?? []));
