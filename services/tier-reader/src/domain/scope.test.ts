import { checkReadAccess, contentVisibility, ReadAccessDeniedError, readVisibility, type CallerScope } from './scope';

const alice = (over: Partial<CallerScope> = {}): CallerScope => ({ account: 'acme', user: 'alice', role: 'user', actorPeer: 'bob', workspace: null, ...over });

describe('readVisibility', () => {
  it('reads a self/actor-peer candidate under the caller’s normal context', () => {
    expect(readVisibility(alice(), false)).toEqual({ account: 'acme', user: 'alice', actorPeer: 'bob', openPeers: false, allUsers: false, workspace: null });
  });

  it('reads an other-peer candidate under the open context (actor cleared, peers open)', () => {
    expect(readVisibility(alice(), true)).toMatchObject({ actorPeer: null, openPeers: true, allUsers: false });
  });

  it('never opens other users, even for root', () => {
    expect(readVisibility(alice({ role: 'root' }), false).allUsers).toBe(false);
  });
});

describe('contentVisibility', () => {
  it('opens the caller’s peers only without an actor peer', () => {
    expect(contentVisibility(alice()).openPeers).toBe(false);
    expect(contentVisibility(alice({ actorPeer: null })).openPeers).toBe(true);
  });

  it('lets root and admin read other users, not plain users', () => {
    expect(contentVisibility(alice({ role: 'root' })).allUsers).toBe(true);
    expect(contentVisibility(alice({ role: 'admin' })).allUsers).toBe(true);
    expect(contentVisibility(alice()).allUsers).toBe(false);
  });
});

describe('checkReadAccess', () => {
  it('refuses another user’s space to a plain user, allows own and shared scopes', () => {
    expect(() => checkReadAccess(alice(), 'viking://user/carol/memories/x.md')).toThrow(ReadAccessDeniedError);
    expect(() => checkReadAccess(alice(), 'viking://user/carol')).toThrow(/Access denied/);
    expect(() => checkReadAccess(alice(), 'viking://user/alice/peers/dave/memories/a.md')).not.toThrow();
    expect(() => checkReadAccess(alice(), 'viking://resources/a.md')).not.toThrow();
    expect(() => checkReadAccess(alice({ role: 'root' }), 'viking://user/carol/memories/x.md')).not.toThrow();
  });
});
