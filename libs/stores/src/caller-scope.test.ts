import { AccessDeniedError, type CallerScope, checkReadAccess, checkTargetAccess, contentVisibility, readVisibility, searchVisibility, visibilityKey } from './caller-scope';

const alice = (over: Partial<CallerScope> = {}): CallerScope => ({ account: 'acme', user: 'alice', role: 'user', actorPeer: null, workspace: null, ...over });

describe('searchVisibility', () => {
  it('scopes a default search to the caller: account, user, actor peer, workspace, no other users', () => {
    expect(searchVisibility(alice({ actorPeer: 'bob', workspace: 'proj' }), { targets: [] })).toEqual({
      account: 'acme',
      user: 'alice',
      actorPeer: 'bob',
      openPeers: false,
      allUsers: false,
      workspace: 'proj',
    });
  });

  it('opens every peer and clears the actor for an open-context peer scan', () => {
    const v = searchVisibility(alice({ actorPeer: 'bob' }), { targets: ['viking://user/alice/peers'], openContext: true });
    expect([v.actorPeer, v.openPeers]).toEqual([null, true]);
  });

  it('gives root and admin other users only through explicit targets', () => {
    for (const role of ['root', 'admin'] as const) {
      expect(searchVisibility(alice({ role }), { targets: [] }).allUsers).toBe(false);
      expect(searchVisibility(alice({ role }), { targets: ['viking://user/carol'] }).allUsers).toBe(true);
    }
    expect(searchVisibility(alice(), { targets: ['viking://user/carol'] }).allUsers).toBe(false);
  });

  it('opens the caller’s peers for an explicit peers target only when no actor peer is set', () => {
    expect(searchVisibility(alice(), { targets: ['viking://user/alice/peers/bob'] }).openPeers).toBe(true);
    expect(searchVisibility(alice({ actorPeer: 'dave' }), { targets: ['viking://user/alice/peers/bob'] }).openPeers).toBe(false);
    expect(searchVisibility(alice(), { targets: ['viking://user/alice/memories'] }).openPeers).toBe(false);
    // Another user's peers never open the caller's.
    expect(searchVisibility(alice(), { targets: ['viking://user/alicex/peers'] }).openPeers).toBe(false);
  });
});

describe('checkTargetAccess', () => {
  it('refuses another user’s space to a plain user with an "Access denied" message', () => {
    expect(() => checkTargetAccess(alice(), ['viking://resources', 'viking://user/carol/memories'])).toThrow(AccessDeniedError);
    expect(() => checkTargetAccess(alice(), ['viking://user/carol'])).toThrow(/Access denied/);
  });

  it('allows own space, account-wide scopes and the bare user root', () => {
    expect(() =>
      checkTargetAccess(alice(), ['viking://user/alice', 'viking://user/alice/peers/bob', 'viking://resources/x', 'viking://agent/skills', 'viking://user', 'viking://']),
    ).not.toThrow();
  });

  it('lets root and admin target other users', () => {
    expect(() => checkTargetAccess(alice({ role: 'root' }), ['viking://user/carol'])).not.toThrow();
    expect(() => checkTargetAccess(alice({ role: 'admin' }), ['viking://user/carol/memories'])).not.toThrow();
  });
});

describe('visibilityKey', () => {
  it('differs exactly when a visibility field differs', () => {
    const a = searchVisibility(alice(), { targets: [] });
    expect(visibilityKey(a)).toBe(visibilityKey({ ...a }));
    expect(visibilityKey(a)).not.toBe(visibilityKey({ ...a, openPeers: true }));
    expect(visibilityKey(a)).not.toBe(visibilityKey({ ...a, workspace: 'w' }));
  });
});

/** Alice viewing through her actor peer bob (the reads below). */
const aliceWithPeer = (over: Partial<CallerScope> = {}): CallerScope => ({ account: 'acme', user: 'alice', role: 'user', actorPeer: 'bob', workspace: null, ...over });

describe('readVisibility', () => {
  it('reads a self/actor-peer candidate under the caller’s normal context', () => {
    expect(readVisibility(aliceWithPeer(), false)).toEqual({ account: 'acme', user: 'alice', actorPeer: 'bob', openPeers: false, allUsers: false, workspace: null });
  });

  it('reads an other-peer candidate under the open context (actor cleared, peers open)', () => {
    expect(readVisibility(aliceWithPeer(), true)).toMatchObject({ actorPeer: null, openPeers: true, allUsers: false });
  });

  it('never opens other users, even for root', () => {
    expect(readVisibility(aliceWithPeer({ role: 'root' }), false).allUsers).toBe(false);
  });
});

describe('contentVisibility', () => {
  it('opens the caller’s peers only without an actor peer', () => {
    expect(contentVisibility(aliceWithPeer()).openPeers).toBe(false);
    expect(contentVisibility(aliceWithPeer({ actorPeer: null })).openPeers).toBe(true);
  });

  it('lets root and admin read other users, not plain users', () => {
    expect(contentVisibility(aliceWithPeer({ role: 'root' })).allUsers).toBe(true);
    expect(contentVisibility(aliceWithPeer({ role: 'admin' })).allUsers).toBe(true);
    expect(contentVisibility(aliceWithPeer()).allUsers).toBe(false);
  });
});

describe('checkReadAccess', () => {
  it('refuses another user’s space to a plain user, allows own and shared scopes', () => {
    expect(() => checkReadAccess(aliceWithPeer(), 'viking://user/carol/memories/x.md')).toThrow(AccessDeniedError);
    expect(() => checkReadAccess(aliceWithPeer(), 'viking://user/carol')).toThrow(/Access denied/);
    expect(() => checkReadAccess(aliceWithPeer(), 'viking://user/alice/peers/dave/memories/a.md')).not.toThrow();
    expect(() => checkReadAccess(aliceWithPeer(), 'viking://resources/a.md')).not.toThrow();
    expect(() => checkReadAccess(aliceWithPeer({ role: 'root' }), 'viking://user/carol/memories/x.md')).not.toThrow();
  });
});
