/**
 * Composition root: `ctxmesh serve orchestrator`. The only file that reads process.env.
 */
import { createLogger, runMain } from '@ctxmesh/runtime';
import { loadOrchestratorConfig } from './config';
import { startOrchestrator } from './start';

/** Run the orchestrator as its own process. */
export function main(): Promise<void> {
  const log = createLogger({ base: { service: 'orchestrator' } });
  return runMain('orchestrator', log, async () => {
    const cfg = loadOrchestratorConfig(process.env);
    const server = await startOrchestrator({
      port: cfg.ORCHESTRATOR_PORT,
      host: process.env.ORCHESTRATOR_HOST ?? '0.0.0.0',
      log,
      addrs: {
        gather: cfg.GATHER_ADDR,
        tierReader: cfg.TIER_READER_ADDR,
        budgetRender: cfg.BUDGET_RENDER_ADDR,
        ledger: cfg.LEDGER_ADDR,
        rewrite: cfg.REWRITE_ADDR,
        sessions: cfg.SESSIONS_ADDR,
      },
      settings: settingsFromConfig(cfg),
      defaultDeadlineMs: cfg.CTXMESH_DEFAULT_DEADLINE_MS,
    });
    return { stop: () => server.shutdown() };
  });
}

/** Pipeline settings from a parsed config. */
export function settingsFromConfig(cfg: ReturnType<typeof loadOrchestratorConfig>) {
  return {
    enableIntent: cfg.CTXMESH_ENABLE_INTENT,
    modelConfigured: cfg.CTXMESH_LLM_URL !== undefined,
    expansionTimeoutMs: cfg.CTXMESH_EXPANSION_TIMEOUT_MS,
    rewriteTimeoutMs: cfg.CTXMESH_REWRITE_TIMEOUT_MS,
    renderReserveMs: cfg.CTXMESH_RENDER_RESERVE_MS,
    expansionMessages: 20,
  };
}
