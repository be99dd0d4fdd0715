/**
 * The caller of a request, read from the wire `Identity` the gateway built. Every service that
 * scopes data by tenant requires an account and a user: without them a store key or a search
 * would be shared across tenants.
 */
import { common } from '@ctxmesh/proto';
import { Code, CtxError } from './errors';

/** root (dev mode), admin or user. */
export type CallerRoleName = 'root' | 'admin' | 'user';

/** The caller, trimmed; absent optional parts are null. */
export interface Caller {
  /** Account (tenant). */
  account: string;
  /** User id. */
  user: string;
  /** Role (an unspecified role is `user`, as the proto says). */
  role: CallerRoleName;
  /** Actor peer, or null. */
  actorPeer: string | null;
  /** Workspace slug, or null for none. */
  workspace: string | null;
}

/** Role on the wire → its name (unspecified = user). */
export function roleName(role: common.Role | undefined): CallerRoleName {
  if (role === common.Role.ROLE_ROOT) return 'root';
  if (role === common.Role.ROLE_ADMIN) return 'admin';
  return 'user';
}

/**
 * The caller of a request.
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user
 */
export function requireCaller(identity: common.Identity | undefined): Caller {
  const account = identity?.accountId.trim() ?? '';
  const user = identity?.userId.trim() ?? '';
  if (!account || !user) {
    throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity with account_id and user_id is required', { metadata: { field: 'identity' } });
  }
  const actor = identity?.actorPeerId.trim() ?? '';
  const workspace = identity?.workspace.trim() ?? '';
  return { account, user, role: roleName(identity?.role), actorPeer: actor || null, workspace: workspace || null };
}
