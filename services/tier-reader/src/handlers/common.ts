/** Request plumbing shared by tier-reader's handlers. */
import type { CallerRole } from '@ctxmesh/kernel';
import { common } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';
import type { CallerScope } from '@ctxmesh/stores';

/** Role on the wire → kernel role (unspecified = user, as the proto says). */
export function roleOf(role: common.Role | undefined): CallerRole {
  if (role === common.Role.ROLE_ROOT) return 'root';
  if (role === common.Role.ROLE_ADMIN) return 'admin';
  return 'user';
}

/**
 * The caller scope of a request (an empty workspace = no workspace restriction).
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user
 */
export function scopeOf(identity: common.Identity | undefined): CallerScope {
  const account = identity?.accountId.trim() ?? '';
  const user = identity?.userId.trim() ?? '';
  if (!account || !user) throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity with account_id and user_id is required');
  const actor = identity?.actorPeerId.trim() ?? '';
  const workspace = identity?.workspace.trim() ?? '';
  return { account, user, role: roleOf(identity?.role), actorPeer: actor || null, workspace: workspace || null };
}
