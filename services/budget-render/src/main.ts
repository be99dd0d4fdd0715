/**
 * Composition root: `ctxmesh serve budget-render`. The only file that reads process.env.
 * (Telemetry is started by the CLI before any gRPC module loads.)
 */
import { createLogger, runMain } from '@ctxmesh/runtime';
import { loadBudgetRenderConfig } from './config';
import { startBudgetRender } from './start';

/** Run budget-render as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'budget-render' } });
  return runMain('budget-render', log, async () => {
    const cfg = loadBudgetRenderConfig(process.env);
    const server = await startBudgetRender({ port: cfg.BUDGET_RENDER_PORT, host: cfg.BUDGET_RENDER_HOST, log });
    return { stop: () => server.shutdown() };
  });
}
