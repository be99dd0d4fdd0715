/** Conversions between domain results and the indexer proto. */
import { indexer } from '@ctxmesh/proto';
import type { ApplyResult } from '../domain/apply';
import type { WriteRecord } from '../domain/status';

/** A remembered write as the proto's ApplyWriteResponse. */
export function responseOfRecord(rec: WriteRecord | undefined): indexer.ApplyWriteResponse {
  if (rec === undefined) return { status: indexer.WriteStatus.WRITE_STATUS_UNSPECIFIED, contentHash: '', nodes: 0, errorReason: '', errorMessage: '' };
  const status =
    rec.state === 'applied'
      ? indexer.WriteStatus.WRITE_STATUS_APPLIED
      : rec.state === 'failed'
        ? indexer.WriteStatus.WRITE_STATUS_FAILED
        : indexer.WriteStatus.WRITE_STATUS_PENDING;
  return { status, contentHash: rec.contentHash, nodes: rec.nodes, errorReason: rec.reason, errorMessage: rec.message };
}

/** An apply result as a WriteRecord. */
export function recordOf(r: ApplyResult): WriteRecord {
  return { state: r.status, contentHash: r.contentHash, nodes: r.nodes, reason: r.reason ?? '', message: r.message ?? '' };
}
