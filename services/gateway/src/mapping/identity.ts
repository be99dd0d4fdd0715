/** The caller on the wire: `ctxmesh.common.v1.Identity`, which every request to the mesh carries. */
import { common } from '@ctxmesh/proto';
import type { Caller, Identity } from '../domain';

const ROLE: Readonly<Record<Identity['role'], common.Role>> = {
  root: common.Role.ROLE_ROOT,
  admin: common.Role.ROLE_ADMIN,
  user: common.Role.ROLE_USER,
};

/** `ctxmesh.common.v1.Identity` of a caller (actor peer "" when absent). */
export function protoIdentity(c: Caller): common.Identity {
  return {
    accountId: c.accountId,
    userId: c.userId,
    role: ROLE[c.role],
    actorPeerId: c.actorPeerId ?? '',
    workspace: c.workspace,
    requestId: c.requestId,
  };
}
