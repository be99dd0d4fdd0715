/**
 * createServer(deps): budget-render is pure computation, so its only dependencies are a
 * logger and the shutdown signal.
 */
import { budgetRender } from '@ctxmesh/proto';
import { implement, type MountedService } from '@ctxmesh/rpc';
import { observeRpc } from '@ctxmesh/telemetry';
import type { Logger } from 'pino';
import { countTokens } from './handlers/count-tokens';
import { planRender } from './handlers/plan-render';
import { trimPassages } from './handlers/trim-passages';

/** Dependencies. */
export interface BudgetRenderDeps {
  log: Logger;
  shutdownSignal?: AbortSignal;
}

/** Handlers, also callable in process (benchmarks). */
export const handlers = { planRender, countTokens, trimPassages };

/** Build the mounted service. */
export function createServer(deps: BudgetRenderDeps): MountedService {
  return {
    name: 'ctxmesh.budget_render.v1.BudgetRenderService',
    definition: budgetRender.BudgetRenderServiceService,
    implementation: implement<budgetRender.BudgetRenderServiceServer>(budgetRender.BudgetRenderServiceService, handlers, {
      domain: 'budget-render',
      log: deps.log,
      shutdownSignal: deps.shutdownSignal,
      observe: observeRpc,
    }),
  };
}
