import { common } from '@ctxmesh/proto';
import { Code } from '@ctxmesh/rpc';
import { scopeOf } from './common';

describe('scopeOf', () => {
  it('builds the caller scope from the wire identity', () => {
    expect(scopeOf({ accountId: 'acme', userId: 'alice', role: common.Role.ROLE_ADMIN, actorPeerId: 'bob', workspace: 'w', requestId: '' })).toEqual({
      account: 'acme',
      user: 'alice',
      role: 'admin',
      actorPeer: 'bob',
      workspace: 'w',
    });
  });

  it('rejects a missing account or user', () => {
    expect(() => scopeOf(undefined)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' }));
  });
});
