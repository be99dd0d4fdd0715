/** SessionsService.ListCompressibleRanges: the advisory range table, oldest first (read-only). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, rangeOf, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** Build the handler. `preserve_recent` absent → 5; negative → INVALID_ARGUMENT. */
export function listCompressibleRangesHandler(
  deps: SessionsHandlerDeps,
): Handler<sessions.ListCompressibleRangesRequest, sessions.ListCompressibleRangesResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.listCompressibleRanges(key, { preserveRecent: req.preserveRecent });
      return { ranges: res.ranges.map(rangeOf), generation: res.generation };
    });
}
