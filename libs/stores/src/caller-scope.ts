/**
 * Tenant scope (DESIGN §3 "Tenant isolation", context-contract §2.4): who the caller is, and
 * the {@link Visibility} each search and read runs under. Built on the server from the
 * caller's identity only; client URIs choose *where* to search, never *who* may see what.
 * One module for gather (searches) and tier-reader (reads), so both enforce the same rules.
 */
import { isUnder, ownershipOf, peersRoot, type CallerRole } from '@ctxmesh/kernel';
import type { Visibility } from './ports/vector-index';
import { AccessDeniedError } from './ports/errors';

export { AccessDeniedError };

/** The caller, as the gateway resolved it (already validated and trimmed). */
export interface CallerScope {
  /** Account (tenant); every store query is filtered by it. */
  account: string;
  /** User id; the user root is `viking://user/{user}`. */
  user: string;
  /** root (dev mode), admin or user. */
  role: CallerRole;
  /** Actor peer (`X-OpenViking-Actor-Peer`), or null. */
  actorPeer: string | null;
  /** Workspace to restrict to, or null for every workspace of the account. */
  workspace: string | null;
}

/** True for roles that may read other users' spaces of the account when they name them. */
export function isPrivileged(role: CallerRole): boolean {
  return role === 'root' || role === 'admin';
}

/**
 * Refuse explicit targets under another user's root for a non-privileged caller
 * (context-contract §1.7: "inaccessible target → 403 PERMISSION_DENIED, message contains
 * 'Access denied'"). Account-wide scopes (`viking://resources`, `viking://agent`), the bare
 * `viking://user` and the caller's own space are always allowed: visibility still filters them.
 * @throws AccessDeniedError for the first offending target
 */
export function checkTargetAccess(scope: CallerScope, targets: readonly string[]): void {
  if (isPrivileged(scope.role)) return;
  for (const t of targets) {
    const owner = ownershipOf(t).user;
    if (owner !== '' && owner !== scope.user) throw new AccessDeniedError(t);
  }
}

/** How one search call is scoped. */
export interface SearchScopeOptions {
  /** Target URIs of the search; empty = the identity's default scope. */
  targets: readonly string[];
  /**
   * Open context (context-contract §2.4 peer scans): the actor peer is cleared so every peer
   * of the caller is visible. @default false
   */
  openContext?: boolean;
}

/**
 * Visibility of one search.
 *
 * - account, user and workspace come from the scope;
 * - `openContext` clears the actor peer and opens every peer of the caller (peer scans);
 * - without an actor peer, an explicit target under the caller's own `peers/` root opens the
 *   caller's peers too: the caller named them, and with no actor peer there is no view to keep;
 * - root/admin see other users' spaces only through explicit targets (`allUsers` is never set
 *   for a default-scope search, so a root's flat search stays in its own space).
 */
export function searchVisibility(scope: CallerScope, opts: SearchScopeOptions): Visibility {
  const open = opts.openContext === true;
  const peers = peersRoot(scope.user);
  const namedPeers = scope.actorPeer === null && opts.targets.some((t) => isUnder(t, peers));
  return {
    account: scope.account,
    user: scope.user,
    actorPeer: open ? null : scope.actorPeer,
    openPeers: open || namedPeers,
    allUsers: isPrivileged(scope.role) && opts.targets.length > 0,
    workspace: scope.workspace,
  };
}

/** A stable key of a visibility (to group store calls that share one). */
export function visibilityKey(v: Visibility): string {
  return JSON.stringify([v.account, v.user, v.actorPeer, v.openPeers, v.allUsers, v.workspace]);
}

/**
 * Visibility of a candidate's body read in context assembly: the caller's normal context, or
 * the open context (actor peer cleared, every peer of the caller visible) for other-peer hits
 * (context-contract §2.4: "hits of other peers are later read with the same open context").
 * Other users are never visible: context-mode candidates never come from another user's space.
 */
export function readVisibility(scope: CallerScope, openContext: boolean): Visibility {
  return {
    account: scope.account,
    user: scope.user,
    actorPeer: openContext ? null : scope.actorPeer,
    openPeers: openContext,
    allUsers: false,
    workspace: scope.workspace,
  };
}

/**
 * Visibility of an explicit content read (content/read|abstract|overview): the caller names the
 * node. Without an actor peer every peer of the caller is readable (there is no view to keep);
 * with one, only that peer. Root and admin may read other users' spaces.
 */
export function contentVisibility(scope: CallerScope): Visibility {
  return {
    account: scope.account,
    user: scope.user,
    actorPeer: scope.actorPeer,
    openPeers: scope.actorPeer === null,
    allUsers: isPrivileged(scope.role),
    workspace: scope.workspace,
  };
}

/**
 * Refuse a URI under another user's root to a non-privileged caller.
 * @throws AccessDeniedError
 */
export function checkReadAccess(scope: CallerScope, uri: string): void {
  if (isPrivileged(scope.role)) return;
  const owner = ownershipOf(uri).user;
  if (owner !== '' && owner !== scope.user) throw new AccessDeniedError(uri);
}
