import Database from 'better-sqlite3';
import { EmbeddedSessionStore } from '../stores/embedded-session-store';
import { checkSlug, DEFAULT_WORKSPACE, Workspaces } from './workspaces';

function fresh(store = new EmbeddedSessionStore(new Database(':memory:'))): Workspaces {
  return new Workspaces(store, () => 1_700_000_000_000);
}

const alice = { account: 'acme', user: 'alice' };
const bob = { account: 'acme', user: 'bob' };
const eve = { account: 'globex', user: 'eve' };

describe('checkSlug', () => {
  it('accepts the gateway X-Workspace shape: 1..64 letters, digits, dot, underscore, dash', () => {
    expect(checkSlug('proj-1_x')).toBe('proj-1_x');
    expect(checkSlug('Team.B')).toBe('Team.B');
    expect(checkSlug('a'.repeat(64))).toBe('a'.repeat(64));
  });

  it.each([['-x'], ['.x'], ['a b'], ['a/b'], ['a'.repeat(65)], ['']])('rejects %j naming the field', (slug) => {
    expect(() => checkSlug(slug, 'workspace')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT', field: 'workspace' }));
  });
});

describe('Workspaces', () => {
  // Regression (issue 12, item 6): names were global — another account learnt that 'proj'
  // existed ("belongs to another account") and could squat a name first.
  it('creates a slug once per account; another account has its own of the same name', async () => {
    const ws = fresh();
    expect(await ws.create(alice, 'proj')).toEqual({ workspace: 'proj', created: true });
    expect(await ws.create(bob, 'proj')).toEqual({ workspace: 'proj', created: false });
    expect(await ws.create(eve, 'proj')).toEqual({ workspace: 'proj', created: true });
    expect(await ws.create(eve, 'proj')).toEqual({ workspace: 'proj', created: false });
    expect(await ws.create(eve, DEFAULT_WORKSPACE)).toEqual({ workspace: 'default', created: false });
  });

  it('checks a slug in the caller\'s account: unknown is NOT_FOUND (even when another account has it), default always exists', async () => {
    const ws = fresh();
    await ws.create(alice, 'proj');
    expect(await ws.check(bob, 'proj')).toBe('proj');
    expect(await ws.check(eve, 'default')).toBe('default');
    await expect(ws.check(alice, 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND', reason: 'WORKSPACE_NOT_FOUND' });
    await expect(ws.check(eve, 'proj')).rejects.toMatchObject({ code: 'NOT_FOUND', reason: 'WORKSPACE_NOT_FOUND' });
  });

  it('keeps a workspace created before names were scoped working for its account only', async () => {
    const store = new EmbeddedSessionStore(new Database(':memory:'));
    await store.claimWorkspace('old', 'acme', 1); // a global claim, as older versions stored it
    const ws = fresh(store);
    expect(await ws.check(alice, 'old')).toBe('old');
    expect(await ws.create(bob, 'old')).toEqual({ workspace: 'old', created: false });
    await expect(ws.check(eve, 'old')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await ws.create(eve, 'old')).toEqual({ workspace: 'old', created: true });
  });

  it('persists the active workspace per account and user', async () => {
    const ws = fresh();
    await ws.create(alice, 'proj');
    expect(await ws.getActive(alice)).toEqual({ workspace: 'default', persisted: false });
    expect(await ws.setActive(alice, 'proj')).toEqual({ workspace: 'proj' });
    expect(await ws.getActive(alice)).toEqual({ workspace: 'proj', persisted: true });
    expect(await ws.getActive(bob)).toEqual({ workspace: 'default', persisted: false });
    await expect(ws.setActive(eve, 'proj')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(ws.setActive(bob, 'missing')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(await ws.getActive(eve)).toEqual({ workspace: 'default', persisted: false });
  });

  it('resolves the slug, then the hint, then the active workspace, then default', async () => {
    const ws = fresh();
    await ws.create(alice, 'proj');
    await ws.create(alice, 'team');
    expect(await ws.resolve(alice, '')).toEqual({ workspace: 'default' });
    await ws.setActive(alice, 'team');
    expect(await ws.resolve(alice, '')).toEqual({ workspace: 'team' });
    expect(await ws.resolve({ ...alice, hint: 'proj' }, '')).toEqual({ workspace: 'proj' });
    expect(await ws.resolve({ ...alice, hint: 'proj' }, 'default')).toEqual({ workspace: 'default' });
    await expect(ws.resolve({ ...eve, hint: 'proj' }, '')).rejects.toMatchObject({ code: 'NOT_FOUND', metadata: { workspace: 'proj' } });
    await expect(ws.resolve(eve, 'ghost')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(ws.resolve({ ...alice, hint: 'Bad Slug' }, '')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', field: 'identity.workspace' });
  });

  it('requires an account and a user', async () => {
    const ws = fresh();
    await expect(ws.getActive({ account: '', user: 'u' })).rejects.toMatchObject({ field: 'identity.accountId' });
    await expect(ws.create({ account: 'a', user: '' }, 'x')).rejects.toMatchObject({ field: 'identity.userId' });
  });
});
