/**
 * The WorkspaceStore contract suite, run against both session store adapters (embedded as a
 * unit test, Redis as an integration test against REDIS_URL).
 */
import type { WorkspaceStore } from '../../domain/workspaces';

/** What an adapter's test file provides. */
export interface WorkspaceContractHarness {
  /** A fresh store over an empty namespace. */
  make(): Promise<WorkspaceStore>;
  /** Release what `make` created. */
  cleanup(store: WorkspaceStore): Promise<void>;
}

/** Register the contract tests for one adapter. */
export function describeWorkspaceStoreContract(name: string, h: WorkspaceContractHarness): void {
  describe(`WorkspaceStore contract: ${name}`, () => {
    let store: WorkspaceStore;
    beforeEach(async () => {
      store = await h.make();
    });
    afterEach(async () => {
      await h.cleanup(store);
    });

    it('claims a free slug for the first account and keeps it', async () => {
      expect(await store.workspaceOwner('proj')).toBeNull();
      expect(await store.claimWorkspace('proj', 'acme', 1)).toEqual({ owner: 'acme', created: true });
      expect(await store.claimWorkspace('proj', 'acme', 2)).toEqual({ owner: 'acme', created: false });
      expect(await store.claimWorkspace('proj', 'globex', 3)).toEqual({ owner: 'acme', created: false });
      expect(await store.workspaceOwner('proj')).toBe('acme');
      expect(await store.workspaceOwner('other')).toBeNull();
    });

    it('gives a slug to exactly one of several concurrent claims', async () => {
      const accounts = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'];
      const res = await Promise.all(accounts.map((a) => store.claimWorkspace('race', a, 1)));
      const winners = res.filter((r) => r.created);
      expect(winners).toHaveLength(1);
      const owner = winners[0]!.owner;
      expect(res.every((r) => r.owner === owner)).toBe(true);
      expect(await store.workspaceOwner('race')).toBe(owner);
    });

    it('keeps escaped slugs and accounts apart', async () => {
      await store.claimWorkspace('a:b', 'x', 1);
      expect(await store.workspaceOwner('a%3Ab')).toBeNull();
      await store.setActiveWorkspace('acct:1', 'u', 'w1');
      expect(await store.getActiveWorkspace('acct', '1:u')).toBeNull();
      expect(await store.getActiveWorkspace('acct:1', 'u')).toBe('w1');
    });

    it('persists one active workspace per account and user', async () => {
      expect(await store.getActiveWorkspace('acme', 'alice')).toBeNull();
      await store.setActiveWorkspace('acme', 'alice', 'proj');
      await store.setActiveWorkspace('acme', 'bob', 'other');
      await store.setActiveWorkspace('globex', 'alice', 'third');
      expect(await store.getActiveWorkspace('acme', 'alice')).toBe('proj');
      await store.setActiveWorkspace('acme', 'alice', 'default');
      expect(await store.getActiveWorkspace('acme', 'alice')).toBe('default');
      expect(await store.getActiveWorkspace('acme', 'bob')).toBe('other');
      expect(await store.getActiveWorkspace('globex', 'alice')).toBe('third');
    });
  });
}
