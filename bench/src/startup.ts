/**
 * `npm start` cost: time from spawning `ctxmesh start` (what `npm start` runs) on a fresh data
 * directory until `GET /health` answers, and its resident memory after a few idle seconds.
 * The child gets a clean environment (no Redis/NATS), as on a laptop with nothing installed.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ctxmeshBin } from './cluster';
import { JsonClient, waitForOk } from './http';
import { freePort, rssMiB, sleep, stopChild } from './procs';

/** One start. */
export interface StartupRun {
  /** Spawn → first 200 from /health, ms (null when it never answered). */
  healthyMs: number | null;
  /** Resident memory after `idleMs` of idling, MiB. */
  idleRssMiB: number | null;
  /**
   * Resident memory after serving `serve` (context requests one after another, so the index's
   * caches are loaded as a user's first queries load them), MiB; absent when nothing was served.
   */
  servedRssMiB?: number | null;
  /** Requests of `serve` that did not answer 200. */
  servedErrors?: number;
  /** How the process ended when stopped. */
  exit: string;
}

/**
 * Start `ctxmesh start` once and measure it.
 * @param existingData a data directory to start on (kept; e.g. a loaded corpus) instead of a fresh one
 * @param serve request bodies of `POST /api/v1/search/search` to send after the idle reading (then `servedRssMiB`)
 */
export async function measureStartup(idleMs = 5000, timeoutMs = 60_000, existingData: string | null = null, serve: readonly unknown[] = []): Promise<StartupRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-bench-start-'));
  const port = await freePort();
  const log = openSync(join(dataDir, 'start.log'), 'a');
  const child = spawn(process.execPath, [ctxmeshBin(), 'start'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', CTXMESH_DATA_DIR: existingData ?? join(dataDir, 'data'), GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', log, log],
  });
  try {
    const healthyMs = await waitForOk(`http://127.0.0.1:${port}`, '/health', timeoutMs, 20);
    let idleRssMiB: number | null = null;
    if (healthyMs !== null && child.pid !== undefined) {
      await sleep(idleMs);
      idleRssMiB = rssMiB(child.pid);
    }
    let served: Pick<StartupRun, 'servedRssMiB' | 'servedErrors'> = {};
    if (healthyMs !== null && child.pid !== undefined && serve.length > 0) {
      const client = new JsonClient(`http://127.0.0.1:${port}`, 4);
      let errors = 0;
      for (const body of serve) if ((await client.send('POST', '/api/v1/search/search', body)).status !== 200) errors++;
      served = { servedRssMiB: rssMiB(child.pid), servedErrors: errors };
      client.close();
    }
    const exit = await stopChild(child);
    return { healthyMs, idleRssMiB, ...served, exit };
  } finally {
    if (child.exitCode === null && child.signalCode === null) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
