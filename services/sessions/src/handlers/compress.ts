/** SessionsService.Compress: hide ranges behind model- or human-written summaries. */
import type { sessions } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import type { CompressRangeResult } from '../domain';
import { domainCall, rangeOf, routeOf, sessionKeyOf, type SessionsHandlerDeps } from './request';

/** One domain result as the proto `CompressResult` (absent fields as proto3 defaults). */
export function compressResultOf(r: CompressRangeResult): sessions.CompressResult {
  return {
    status: r.status,
    blockId: r.blockId ?? '',
    kernelRef: r.kernelRef ?? '',
    start: r.start ?? 0,
    end: r.end ?? 0,
    shadowedSeqs: r.shadowedSeqs ?? [],
    claimTokens: r.claimTokens ?? 0,
    tier: r.tier ?? 0,
    adjusted: r.adjusted ?? false,
    recovered: r.recovered ?? false,
    detail: r.detail ?? '',
    coveringBlockIds: r.coveringBlockIds ?? [],
    compressible: (r.compressible ?? []).map(rangeOf),
    guardedSeqs: r.guardedSeqs ?? [],
  };
}

/**
 * Build the handler. Per-range refusals (`already_compressed`, `guarded`, `unbalanced`,
 * `unknown_seq`) are results; malformed ranges → INVALID_ARGUMENT naming `ranges[i].<field>`;
 * a stale `expected_generation` → ABORTED with the current head and generation.
 */
export function compressHandler(deps: SessionsHandlerDeps): Handler<sessions.CompressRequest, sessions.CompressResponse> {
  return (req) =>
    domainCall(async () => {
      const key = sessionKeyOf(req.identity, req.sessionId);
      const res = await deps.sessions.compress(key, {
        requestId: req.requestId,
        expectedGeneration: req.expectedGeneration,
        author: req.author,
        route: routeOf(req.route),
        ranges: req.ranges.map((r) => ({
          startSeq: r.startSeq,
          endSeq: r.endSeq,
          summary: r.summary,
          topic: r.topic,
          verifiedReadings: r.verifiedReadings,
        })),
      });
      return { generation: res.generation, results: res.results.map(compressResultOf) };
    });
}
