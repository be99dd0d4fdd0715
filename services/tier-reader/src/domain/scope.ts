/**
 * Tenant scope of reads (DESIGN §3, context-contract §2.4): the store {@link Visibility} a body
 * is read under, built from the caller's identity only.
 *
 * TODO(gather, tier-reader): gather builds the same scope for searches; the shared part
 * belongs in a lib (the kernel or `@ctxmesh/stores`) once both services settle on it.
 */
import { ownershipOf, type CallerRole } from '@ctxmesh/kernel';
import type { Visibility } from '@ctxmesh/stores';

/** The caller, as the gateway resolved it. */
export interface CallerScope {
  /** Account (tenant). */
  account: string;
  /** User id. */
  user: string;
  /** root (dev mode), admin or user. */
  role: CallerRole;
  /** Actor peer, or null. */
  actorPeer: string | null;
  /** Workspace to restrict to, or null for every workspace of the account. */
  workspace: string | null;
}

/** A read of another user's space by a non-privileged caller; the gateway answers 403. */
export class ReadAccessDeniedError extends Error {
  override readonly name = 'ReadAccessDeniedError';
  constructor(readonly uri: string) {
    super(`Access denied: ${uri} is outside the caller's scope`);
  }
}

/** True for roles that may read other users' spaces of the account when they name them. */
export function isPrivileged(role: CallerRole): boolean {
  return role === 'root' || role === 'admin';
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
 * @throws ReadAccessDeniedError
 */
export function checkReadAccess(scope: CallerScope, uri: string): void {
  if (isPrivileged(scope.role)) return;
  const owner = ownershipOf(uri).user;
  if (owner !== '' && owner !== scope.user) throw new ReadAccessDeniedError(uri);
}
