/**
 * Composition root: `ctxmesh serve rewrite`. The only file that reads process.env.
 * (Telemetry is started by the CLI before any gRPC module loads.)
 */
import { createLogger, runMain } from '@ctxmesh/runtime';
import { loadRewriteConfig } from './config';
import { startRewrite } from './start';

/** Run the rewrite service as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'rewrite' } });
  return runMain('rewrite', log, async () => {
    const cfg = loadRewriteConfig(process.env);
    const server = await startRewrite({ port: cfg.env.REWRITE_PORT, host: cfg.env.REWRITE_HOST, log, settings: cfg.settings });
    return { stop: () => server.shutdown() };
  });
}
