import type { orchestrator } from '@ctxmesh/proto';
import { Code } from '@ctxmesh/rpc';
import { contextRequest } from '../__tests__/context-request';
import { contextInput } from './input';

const request = (over: Partial<orchestrator.AssembleContextRequest> = {}) => contextRequest({ quotas: [{ name: 'events', count: 2 }], ...over });

describe('contextInput', () => {
  it('reads the wire\'s "" and 0 once: the default packing, no time budget, flat without bucketed', () => {
    expect(contextInput(request())).toMatchObject({ packing: 'compat', timeBudgetMs: null, quotas: null, queryExpansion: 'auto', rewrite: 'off', peerScope: 'all' });
    expect(contextInput(request(), 'evidence').packing).toBe('evidence');
    expect(contextInput(request({ packing: 'compat' }), 'evidence').packing).toBe('compat');
    expect(contextInput(request({ bucketed: true, timeBudgetMs: 800 }))).toMatchObject({ quotas: [{ name: 'events', count: 2 }], timeBudgetMs: 800 });
  });

  it('narrows the enumerations: off stays off, on and auto stay, anything else is the default', () => {
    expect(contextInput(request({ rewrite: 'on' })).rewrite).toBe('on');
    expect(contextInput(request({ rewrite: 'auto' })).rewrite).toBe('auto');
    expect(contextInput(request({ rewrite: 'sometimes' })).rewrite).toBe('off');
    expect(contextInput(request({ queryExpansion: 'off' })).queryExpansion).toBe('off');
    expect(contextInput(request({ queryExpansion: '' })).queryExpansion).toBe('auto');
    expect(contextInput(request({ peerScope: 'actor' })).peerScope).toBe('actor');
    expect(contextInput(request({ peerScope: '' })).peerScope).toBe('all');
  });

  it('refuses an unknown packing with INVALID_ARGUMENT UNKNOWN_PACKING', () => {
    expect(() => contextInput(request({ packing: 'greedy' }))).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_PACKING' }));
  });
});
