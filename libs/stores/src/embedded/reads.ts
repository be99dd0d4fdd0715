import type { FieldSet, IndexStats, NodeContent, NodeRecord, NodeSummary, Visibility } from '../ports/vector-index';
import { type NodeRow, blobVec, toSummary, visibleRow } from './rows';
import type { Statements } from './statements';

/**
 * The point reads of the embedded vector index (by URI, by document, vectors, existence,
 * counts): straight from the tables, so they see every committed write without a cache sync.
 */
export class IndexReader {
  constructor(
    private readonly st: Statements,
    private readonly dimension: number,
  ) {}

  /** Points by indexed URI (see `VectorIndex.get`). @returns null where missing or invisible */
  get(uris: string[], visibility: Visibility, fields: FieldSet): Array<NodeRecord | NodeContent | NodeSummary | null> {
    if (fields === 'summary' && uris.length > 1) {
      // One statement for the batch (gather asks for the documents of a search's passage hits).
      const byUri = new Map<string, NodeRow>();
      for (const r of this.st.summariesByUris.all(visibility.account, JSON.stringify(uris)) as NodeRow[]) byUri.set(r.uri, r);
      return uris.map((u) => {
        const r = byUri.get(u);
        return r && visibleRow(r, visibility) ? toSummary(r, false) : null;
      });
    }
    const stmt = fields === 'full' ? this.st.fullByUri : fields === 'content' ? this.st.contentByUri : this.st.summaryByUri;
    return uris.map((u) => {
      const r = stmt.get(visibility.account, u) as NodeRow | undefined;
      if (!r || !visibleRow(r, visibility)) return null;
      if (fields === 'full') return this.toRecord(r);
      if (fields === 'content') return { ...toSummary(r, false), overview: r.overview ?? '', body: r.body ?? '' };
      return toSummary(r, false);
    });
  }

  private toRecord(r: NodeRow): NodeRecord {
    const v = this.st.vecById.get(BigInt(r.id)) as { embedding: Buffer } | undefined;
    return {
      ...toSummary(r, false),
      overview: r.overview ?? '',
      body: r.body ?? '',
      lexicalText: r.lexical_text ?? '',
      vector: v ? blobVec(v.embedding) : new Float32Array(this.dimension),
    };
  }

  /** Every visible point of a document in passage order (empty when missing or invisible). */
  getDocument(docUri: string, visibility: Visibility): NodeRecord[] {
    const rows = this.st.fullByDoc.all(visibility.account, docUri) as NodeRow[];
    return rows.filter((r) => visibleRow(r, visibility)).map((r) => this.toRecord(r));
  }

  /** Dense vectors by indexed URI (exact, from `vi_vec`); null where missing or invisible. */
  vectors(uris: string[], visibility: Visibility): Array<Float32Array | null> {
    return uris.map((u) => {
      const r = this.st.fullByUri.get(visibility.account, u) as NodeRow | undefined;
      if (!r || !visibleRow(r, visibility)) return null;
      const v = this.st.vecById.get(BigInt(r.id)) as { embedding: Buffer } | undefined;
      return v ? blobVec(v.embedding) : null;
    });
  }

  /** True when a visible point has this URI or lives under `uri/`. */
  exists(uri: string, visibility: Visibility): boolean {
    const u = uri.length > 'viking://'.length ? uri.replace(/\/+$/, '') : uri;
    for (const r of this.st.existsUnder.iterate({ a: visibility.account, u }) as Iterable<NodeRow>) {
      if (visibleRow(r, visibility)) return true;
    }
    return false;
  }

  /** Point and distinct-document counts, for one account or the whole file. */
  stats(account?: string): IndexStats {
    const r = (account === undefined ? this.st.stats.get() : this.st.statsAccount.get(account)) as IndexStats;
    return { points: r.points, documents: r.documents };
  }
}
