/**
 * SessionsService workspace RPCs: CreateWorkspace, SetActiveWorkspace, GetActiveWorkspace and
 * ResolveWorkspace (retrieve-contract "Scopes"). One file: the four are one small resource.
 */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { callerOf, domainCall, type SessionsHandlerDeps } from './request';

/** CreateWorkspace. A bad slug → INVALID_ARGUMENT; another account's slug → ALREADY_EXISTS. */
export function createWorkspaceHandler(deps: SessionsHandlerDeps): Handler<sessions.CreateWorkspaceRequest, sessions.CreateWorkspaceResponse> {
  return (req) => domainCall(() => deps.workspaces.create(callerOf(req.identity), req.workspace));
}

/** SetActiveWorkspace. Unknown slug → NOT_FOUND; another account's → PERMISSION_DENIED. */
export function setActiveWorkspaceHandler(deps: SessionsHandlerDeps): Handler<sessions.SetActiveWorkspaceRequest, sessions.SetActiveWorkspaceResponse> {
  return (req) => domainCall(() => deps.workspaces.setActive(callerOf(req.identity), req.workspace));
}

/** GetActiveWorkspace: the persisted slug, else `default` with `persisted` false. */
export function getActiveWorkspaceHandler(deps: SessionsHandlerDeps): Handler<sessions.GetActiveWorkspaceRequest, sessions.GetActiveWorkspaceResponse> {
  return (req) => domainCall(() => deps.workspaces.getActive(callerOf(req.identity)));
}

/**
 * ResolveWorkspace: the slug, else `identity.workspace`, else the persisted active one, else
 * `default`. Unknown → NOT_FOUND; another account's → PERMISSION_DENIED.
 */
export function resolveWorkspaceHandler(deps: SessionsHandlerDeps): Handler<sessions.ResolveWorkspaceRequest, sessions.ResolveWorkspaceResponse> {
  return (req) => domainCall(() => deps.workspaces.resolve(callerOf(req.identity), req.workspace));
}
