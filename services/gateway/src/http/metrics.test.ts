import { routeLabel, UNMATCHED_ROUTE } from './metrics';

describe('routeLabel', () => {
  it.each<[string | undefined, string]>([
    ['/api/v1/search/find', '/api/v1/search/find'],
    ['/api/v1/sessions/:sid/surface::project', '/api/v1/sessions/{sid}/surface:project'],
    ['/api/v1/sessions/:sid/overflow::recover', '/api/v1/sessions/{sid}/overflow:recover'],
    ['/api/v1/sessions/:sid/blocks/:ref/originals', '/api/v1/sessions/{sid}/blocks/{ref}/originals'],
    ['/api/v1/sessions/:sid/agents/:agentStatus', '/api/v1/sessions/{sid}/agents/{aid}:status'],
    ['/api/v1/traces/:id', '/api/v1/traces/{id}'],
    [undefined, UNMATCHED_ROUTE],
  ])('%p → %p', (pattern, label) => {
    expect(routeLabel(pattern)).toBe(label);
  });
});
