/**
 * Every ctxmesh service by its kebab-case name (STYLE B3) and the loader of its configuration:
 * the schema a deployment's environment must pass. Shared by the deployment checks
 * (`src/deploy.test.ts` on the files, `test/kustomize.int.test.ts` on the rendered overlays).
 */
import { loadBudgetRenderConfig } from '@ctxmesh/budget-render';
import { loadGatewayConfig } from '@ctxmesh/gateway';
import { loadGatherConfig } from '@ctxmesh/gather';
import { loadIndexerConfig } from '@ctxmesh/indexer';
import { loadLedgerConfig } from '@ctxmesh/ledger';
import { loadOrchestratorConfig } from '@ctxmesh/orchestrator';
import { loadRewriteConfig } from '@ctxmesh/rewrite';
import { loadSessionsConfig } from '@ctxmesh/sessions';
import { loadTierReaderConfig } from '@ctxmesh/tier-reader';

/** An environment as a deployment sets it. */
export type Env = Record<string, string | undefined>;

/** Service name → its configuration loader (throws a ConfigError listing every problem). */
export const LOADERS: Readonly<Record<string, (e: Env) => unknown>> = {
  gateway: loadGatewayConfig,
  orchestrator: loadOrchestratorConfig,
  gather: loadGatherConfig,
  'tier-reader': loadTierReaderConfig,
  'budget-render': loadBudgetRenderConfig,
  ledger: loadLedgerConfig,
  rewrite: loadRewriteConfig,
  sessions: loadSessionsConfig,
  indexer: loadIndexerConfig,
};

/** The service names, sorted. */
export const SERVICES: readonly string[] = Object.keys(LOADERS).sort();
