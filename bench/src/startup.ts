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
import { waitForOk } from './http';
import { freePort, rssMiB, sleep, stopChild } from './procs';

/** One start. */
export interface StartupRun {
  /** Spawn → first 200 from /health, ms (null when it never answered). */
  healthyMs: number | null;
  /** Resident memory after `idleMs` of idling, MiB. */
  idleRssMiB: number | null;
  /** How the process ended when stopped. */
  exit: string;
}

/**
 * Start `ctxmesh start` once and measure it.
 * @param existingData a data directory to start on (kept; e.g. a loaded corpus) instead of a fresh one
 */
export async function measureStartup(idleMs = 5000, timeoutMs = 60_000, existingData: string | null = null): Promise<StartupRun> {
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
    const exit = await stopChild(child);
    return { healthyMs, idleRssMiB, exit };
  } finally {
    if (child.exitCode === null && child.signalCode === null) await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
