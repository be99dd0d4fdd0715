/** Request plumbing shared by tier-reader's handlers. */
import type { common } from '@ctxmesh/proto';
import { requireCaller } from '@ctxmesh/rpc';
import type { CallerScope } from '@ctxmesh/stores';

/**
 * The caller scope of a request (an empty workspace = no workspace restriction).
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user
 */
export function scopeOf(identity: common.Identity | undefined): CallerScope {
  return requireCaller(identity);
}
