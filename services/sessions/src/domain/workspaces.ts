/**
 * Workspaces (retrieve-contract "Scopes"): a workspace is a partition inside an account, and
 * its name is the account's own: two accounts may each have a `research` workspace, and
 * neither can learn whether the other has one (names used to be global, so a second account
 * got "belongs to another account" and could squat a name). Every account also has its own
 * `default`, which always exists and is never stored. Each (account, user) may persist an
 * active workspace; without one it is `default`.
 *
 * Resolution order of a request's workspace: the slug asked for, else `identity.workspace`
 * (the gateway's `X-Workspace` header), else the persisted active workspace, else `default`.
 * An unknown slug is NOT_FOUND, another account's is PERMISSION_DENIED: never an empty answer.
 */
import { WORKSPACE_SLUG } from '@ctxmesh/kernel';
import { AlreadyExistsError, InvalidFieldError, NotFoundError, PermissionDeniedError } from './errors';
import { checkCaller } from './inputs';

/** The workspace every account has. */
export const DEFAULT_WORKSPACE = 'default';

/** Who is asking: the account and user of the caller's identity. */
export interface WorkspaceCaller {
  /** Account id (non-empty). */
  account: string;
  /** User id (non-empty). */
  user: string;
  /** The workspace hint of the request (`X-Workspace`); '' when absent. */
  hint?: string;
}

/**
 * Storage of workspace ownership and active workspaces. Implemented by both session store
 * adapters (Redis keys `ws:*`, SQLite tables `sessions_workspace*`).
 */
export interface WorkspaceStore {
  /**
   * Claim `slug` for `account` unless someone owns it already (atomic: of two concurrent
   * claims exactly one creates).
   * @param createdAt ms since the epoch, recorded with a new claim
   * @returns the owner after the call, and whether this call created the claim
   */
  claimWorkspace(slug: string, account: string, createdAt: number): Promise<{ owner: string; created: boolean }>;
  /** The owning account of `slug`, or null when nobody owns it. */
  workspaceOwner(slug: string): Promise<string | null>;
  /** Persist the active workspace of (account, user), replacing any earlier one. */
  setActiveWorkspace(account: string, user: string, slug: string): Promise<void>;
  /** The persisted active workspace of (account, user), or null. */
  getActiveWorkspace(account: string, user: string): Promise<string | null>;
}

/**
 * The stored name of an account's workspace: `<account>/<slug>` (a slug has no `/`, so the
 * split is unambiguous). The store keeps owners by this key.
 */
export function scopedWorkspaceKey(account: string, slug: string): string {
  return `${account}/${slug}`;
}

/**
 * Validate a slug: the kernel's `WORKSPACE_SLUG` (the gateway checks the `X-Workspace` header
 * with the same rule, so every header it accepts resolves here). Case-sensitive.
 * @throws InvalidFieldError `INVALID_WORKSPACE` naming `field`
 */
export function checkSlug(slug: unknown, field = 'workspace'): string {
  if (typeof slug !== 'string' || slug === '') throw new InvalidFieldError(field, 'is required');
  if (!WORKSPACE_SLUG.test(slug)) {
    throw new InvalidFieldError(field, `invalid workspace slug ${JSON.stringify(slug)}: use 1 to 64 letters, digits, '.', '_' and '-', starting with a letter or digit`, 'INVALID_WORKSPACE');
  }
  return slug;
}

/** The workspaces domain over a {@link WorkspaceStore}. */
export class Workspaces {
  constructor(
    private readonly store: WorkspaceStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Create a workspace in the caller's account. Creating one the account already owns (or
   * `default`) is not an error: `created` is false.
   * @throws InvalidFieldError for a bad slug; AlreadyExistsError `WORKSPACE_TAKEN` when another account owns it
   */
  async create(caller: WorkspaceCaller, rawSlug: unknown): Promise<{ workspace: string; created: boolean }> {
    checkCaller(caller);
    const slug = checkSlug(rawSlug);
    if (slug === DEFAULT_WORKSPACE) return { workspace: slug, created: false };
    if (await this.legacyOwned(caller.account, slug)) return { workspace: slug, created: false };
    const { owner, created } = await this.store.claimWorkspace(scopedWorkspaceKey(caller.account, slug), caller.account, this.clock());
    // Unreachable with scoped keys; kept so a corrupted store can never hand over a name.
    if (owner !== caller.account) throw new AlreadyExistsError('WORKSPACE_TAKEN', `workspace '${slug}' cannot be created`, { workspace: slug });
    return { workspace: slug, created };
  }

  /**
   * True when `slug` was created by `account` before names were scoped per account (a global
   * claim): it is then adopted under the scoped key, so older workspaces keep working. A
   * legacy claim of another account is ignored — it says nothing to this caller.
   */
  private async legacyOwned(account: string, slug: string): Promise<boolean> {
    if ((await this.store.workspaceOwner(slug)) !== account) return false;
    await this.store.claimWorkspace(scopedWorkspaceKey(account, slug), account, this.clock());
    return true;
  }

  /**
   * Check that the caller's account may use `slug`.
   * @throws NotFoundError `WORKSPACE_NOT_FOUND`; PermissionDeniedError `WORKSPACE_FOREIGN`
   */
  async check(caller: WorkspaceCaller, rawSlug: unknown, field = 'workspace'): Promise<string> {
    checkCaller(caller);
    const slug = checkSlug(rawSlug, field);
    if (slug === DEFAULT_WORKSPACE) return slug;
    const owner = await this.store.workspaceOwner(scopedWorkspaceKey(caller.account, slug));
    if (owner === null) {
      if (await this.legacyOwned(caller.account, slug)) return slug;
      throw new NotFoundError('WORKSPACE_NOT_FOUND', `workspace '${slug}' not found`, { workspace: slug });
    }
    if (owner !== caller.account) throw new PermissionDeniedError('WORKSPACE_FOREIGN', `workspace '${slug}' is not this account's`, { workspace: slug });
    return slug;
  }

  /**
   * Persist the caller's active workspace (checked first).
   * @throws as {@link check}
   */
  async setActive(caller: WorkspaceCaller, rawSlug: unknown): Promise<{ workspace: string }> {
    const slug = await this.check(caller, rawSlug);
    await this.store.setActiveWorkspace(caller.account, caller.user, slug);
    return { workspace: slug };
  }

  /** The caller's active workspace: the persisted one, else `default` (`persisted` false). */
  async getActive(caller: WorkspaceCaller): Promise<{ workspace: string; persisted: boolean }> {
    checkCaller(caller);
    const slug = await this.store.getActiveWorkspace(caller.account, caller.user);
    return slug === null ? { workspace: DEFAULT_WORKSPACE, persisted: false } : { workspace: slug, persisted: true };
  }

  /**
   * Resolve the workspace of a request: `rawSlug`, else the caller's hint, else the persisted
   * active workspace, else `default`. An explicit slug or hint is checked; the persisted one
   * was checked when it was set (slugs are never released, so it stays the account's).
   * @throws as {@link check}
   */
  async resolve(caller: WorkspaceCaller, rawSlug: unknown): Promise<{ workspace: string }> {
    checkCaller(caller);
    if (typeof rawSlug === 'string' && rawSlug !== '') return { workspace: await this.check(caller, rawSlug) };
    if (caller.hint) return { workspace: await this.check(caller, caller.hint, 'identity.workspace') };
    return { workspace: (await this.getActive(caller)).workspace };
  }
}
