/**
 * A scripted VectorIndex for unit tests: records every call and answers searches from a
 * function of the query. Only `search`, `get` and `ping` do anything.
 */
import type { NodeRecord, NodeSummary, SearchHit, SearchQuery, VectorIndex, Visibility } from '@ctxmesh/stores';

/** A node summary with defaults (a resource document at level 2). */
export function summary(uri: string, over: Partial<NodeSummary> = {}): NodeSummary {
  return {
    uri,
    docUri: uri,
    parentUri: uri.slice(0, uri.lastIndexOf('/')),
    contextType: 'resource',
    category: 'resources',
    level: 2,
    account: 'acme',
    owner: '',
    peer: '',
    workspace: 'default',
    subject: '',
    tags: [],
    createdAt: 0,
    updatedAt: 0,
    validFrom: null,
    validTo: null,
    title: uri,
    abstract: `abstract of ${uri}`,
    contentHash: 'h',
    passageIndex: 0,
    links: [],
    ...over,
  };
}

/** The recording fake. */
export class FakeIndex implements VectorIndex {
  readonly dimension: number;
  readonly searches: SearchQuery[][] = [];
  readonly gets: Array<{ uris: string[]; visibility: Visibility }> = [];

  constructor(
    dimension: number,
    private readonly answer: (q: SearchQuery) => SearchHit[] | Error = () => [],
    private readonly docs: Map<string, NodeSummary> = new Map(),
  ) {
    this.dimension = dimension;
  }

  async search(queries: SearchQuery[]): Promise<SearchHit[][]> {
    this.searches.push(queries);
    return queries.map((q) => {
      const r = this.answer(q);
      if (r instanceof Error) throw r;
      return r;
    });
  }

  async get(uris: string[], visibility: Visibility): Promise<Array<NodeRecord | NodeSummary | null>> {
    this.gets.push({ uris, visibility });
    return uris.map((u) => this.docs.get(u) ?? null);
  }

  async replaceDocument(): Promise<boolean> {
    throw new Error('not used');
  }
  async replaceDocuments(): Promise<boolean[]> {
    throw new Error('not used');
  }
  async deleteDocument(): Promise<number> {
    throw new Error('not used');
  }
  async getDocument(): Promise<NodeRecord[]> {
    return [];
  }
  async vectors(uris: string[]): Promise<Array<Float32Array | null>> {
    return uris.map(() => null);
  }
  async exists(): Promise<boolean> {
    return false;
  }
  async stats() {
    return { points: 0, documents: 0 };
  }
  async ping(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}
