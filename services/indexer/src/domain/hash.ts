/**
 * Version hashes: writes are idempotent by (uri, content hash) (DESIGN §5). The hash covers
 * everything that determines the indexed points except the times, so the same write again
 * changes nothing, while new tags, validity, an embedder swap or a new record layout re-index.
 */
import { createHash } from 'node:crypto';

/** Layout version of the records the indexer builds; bump it to re-index on the next write. */
export const RECORD_SCHEMA_VERSION = 1;

/** What a version hash covers. */
export interface VersionInput {
  /** Full content of the node after the write. */
  content: string;
  account: string;
  workspace: string;
  subject: string;
  tags: readonly string[];
  validFrom: number | null;
  validTo: number | null;
  /** Embedder id (vectors of different embedders are not comparable). */
  embedderId: string;
  /** Record layout: schema version, passage size, whether code outlines were available. */
  layout: string;
  /**
   * Set for an append: its write id. An append is not idempotent by content (appending the same
   * text twice is two writes), so its version names the write, which lets a redelivered append
   * recognise that it already landed.
   */
  appendWriteId?: string;
}

/** SHA-256 (hex) of a version. */
export function versionHash(v: VersionInput): string {
  const parts = [
    v.layout,
    v.embedderId,
    v.account,
    v.workspace,
    v.subject,
    JSON.stringify(v.tags),
    String(v.validFrom),
    String(v.validTo),
    v.appendWriteId === undefined ? '' : `append:${v.appendWriteId}`,
  ];
  const h = createHash('sha256');
  for (const p of parts) h.update(`${p.length}:${p}\u0000`);
  h.update(v.content);
  return h.digest('hex');
}
