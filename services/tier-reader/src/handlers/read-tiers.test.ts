import { Code } from '@ctxmesh/rpc';
import { parseDetail } from './read-tiers';

describe('parseDetail', () => {
  it('reads "" as null and passes JSON values through', () => {
    expect(parseDetail('')).toBeNull();
    expect(parseDetail('"full"')).toBe('full');
    expect(parseDetail('{"events":"overview"}')).toEqual({ events: 'overview' });
  });

  it('rejects invalid JSON with INVALID_ARGUMENT BAD_DETAIL', () => {
    expect(() => parseDetail('{')).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'BAD_DETAIL' }));
  });
});
