/**
 * `ctxmesh start` / `npm start`: the whole mesh in one process until SIGINT/SIGTERM.
 */
import { createLogger, runMain, type Env } from '@ctxmesh/runtime';
import type { Telemetry } from '@ctxmesh/telemetry';
import { loadMeshConfig, startMesh } from './mesh';

/** Run every service in this process and print where the gateway listens. */
export async function runAllInOne(env: Env, telemetry: Telemetry): Promise<void> {
  const log = createLogger({ base: { app: 'ctxmesh' } });
  const started = performance.now();
  await runMain('ctxmesh', log, async () => {
    const searchThread = loadMeshConfig(env).mesh.CTXMESH_SEARCH_THREAD;
    const mesh = await startMesh({ env, log, searchThread });
    const ms = Math.round(performance.now() - started);
    log.info({ gateway: mesh.gatewayUrl, dataDir: mesh.dataDir, startupMs: ms, addrs: mesh.addrs, searchThread: searchThread && !mesh.servers.gather }, 'ctxmesh ready');
    process.stdout.write(`ctxmesh listening on ${mesh.gatewayUrl} (data in ${mesh.dataDir}, ready in ${ms} ms)\n`);
    return {
      stop: async () => {
        await mesh.stop();
        await telemetry.shutdown();
      },
    };
  });
}
