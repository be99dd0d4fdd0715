/** budget-render configuration. */
import { env, loadConfig, type Env } from '@ctxmesh/runtime';

export const schema = {
  BUDGET_RENDER_PORT: env.port(50064),
  BUDGET_RENDER_HOST: env.str('127.0.0.1'),
};

/** Parse and validate. @throws ConfigError listing every problem */
export function loadBudgetRenderConfig(e: Env) {
  return loadConfig(schema, e);
}
