/** SessionsService.Decompress: a block's originals, paged (read-only). */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { domainCall, sessionKeyOf, type SessionsHandlerDeps } from './request';

/**
 * Build the handler. `limit` 0 is the proto default and means 100; other values clamp to
 * 1..100, `offset` to ≥ 0 (never an error). An unknown ref → NOT_FOUND; an ambiguous prefix →
 * INVALID_ARGUMENT.
 */
export function decompressHandler(deps: SessionsHandlerDeps): Handler<sessions.DecompressRequest, sessions.DecompressResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const page = await deps.sessions.decompress(key, { ref: req.ref, offset: req.offset, limit: req.limit === 0 ? undefined : req.limit });
      return {
        blockId: page.blockId,
        summary: page.summary,
        tier: page.tier,
        total: page.total,
        offset: page.offset,
        items: page.items.map((i) => ({ seq: i.seq, role: i.role, text: i.text })),
        nextOffset: page.nextOffset ?? undefined,
        note: page.note,
        kind: page.kind,
        kernelRef: page.kernelRef,
      };
    });
}
