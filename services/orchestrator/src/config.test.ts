import { ConfigError } from '@ctxmesh/runtime';
import { loadOrchestratorConfig } from './config';
import { settingsFromConfig } from './main';

describe('loadOrchestratorConfig', () => {
  it('packs context blocks with evidence unless told compat (issue 19)', () => {
    expect(loadOrchestratorConfig({}).CTXMESH_CONTEXT_PACKING).toBe('evidence');
    expect(settingsFromConfig(loadOrchestratorConfig({})).defaultPacking).toBe('evidence');
    expect(settingsFromConfig(loadOrchestratorConfig({ CTXMESH_CONTEXT_PACKING: 'compat' })).defaultPacking).toBe('compat');
  });

  it('fails fast on an unknown CTXMESH_CONTEXT_PACKING, listing it with every other problem', () => {
    let err: unknown;
    try {
      loadOrchestratorConfig({ CTXMESH_CONTEXT_PACKING: 'greedy', CTXMESH_RENDER_RESERVE_MS: '-1' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems.some((p) => p.startsWith('CTXMESH_CONTEXT_PACKING:') && p.includes('compat, evidence'))).toBe(true);
    expect(problems.some((p) => p.startsWith('CTXMESH_RENDER_RESERVE_MS:'))).toBe(true);
  });
});
