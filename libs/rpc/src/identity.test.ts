import { common } from '@ctxmesh/proto';
import { Code } from './errors';
import { requireCaller, roleName } from './identity';

const id = (over: Partial<common.Identity> = {}): common.Identity => ({
  accountId: 'acme',
  userId: 'alice',
  role: common.Role.ROLE_USER,
  actorPeerId: '',
  workspace: '',
  requestId: '',
  ...over,
});

describe('roleName', () => {
  it('maps root and admin, and everything else to user', () => {
    expect([common.Role.ROLE_ROOT, common.Role.ROLE_ADMIN, common.Role.ROLE_USER, common.Role.ROLE_UNSPECIFIED, undefined].map(roleName)).toEqual(['root', 'admin', 'user', 'user', 'user']);
  });
});

describe('requireCaller', () => {
  it('trims the identity and turns blank optional parts into null', () => {
    expect(requireCaller(id({ accountId: ' acme ', actorPeerId: ' bob ', workspace: ' ' }))).toEqual({ account: 'acme', user: 'alice', role: 'user', actorPeer: 'bob', workspace: null });
    expect(requireCaller(id({ workspace: 'proj', role: common.Role.ROLE_ROOT }))).toEqual({ account: 'acme', user: 'alice', role: 'root', actorPeer: null, workspace: 'proj' });
  });

  it.each([['no identity', undefined], ['a blank account', id({ accountId: '  ' })], ['no user', id({ userId: '' })]])(
    'refuses %s with INVALID_ARGUMENT MISSING_IDENTITY',
    (_name, identity) => {
      expect(() => requireCaller(identity)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY', metadata: { field: 'identity' } }));
    },
  );
});
