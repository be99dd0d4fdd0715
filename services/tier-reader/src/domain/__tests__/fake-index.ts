/**
 * An in-memory VectorIndex for unit tests: records by URI, visibility applied like the port
 * documents it for explicit reads, every `get` recorded. Only `get`, `exists` and `ping` work.
 */
import type { NodeRecord, NodeSummary, SearchHit, VectorIndex, Visibility } from '@ctxmesh/stores';

/** A record with defaults (an account-wide resource). */
export function record(uri: string, body: string, over: Partial<NodeRecord> = {}): NodeRecord {
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
    overview: `overview of ${uri}`,
    body,
    contentHash: `hash-${uri.length}`,
    passageIndex: 0,
    links: [],
    vector: new Float32Array(4),
    lexicalText: '',
    ...over,
  };
}

function visible(r: NodeRecord, v: Visibility): boolean {
  if (r.account !== v.account) return false;
  if (v.workspace !== null && r.workspace !== v.workspace) return false;
  if (r.owner === '') return true;
  if (r.owner === v.user) return r.peer === '' || v.openPeers || (v.actorPeer !== null && r.peer === v.actorPeer);
  return v.allUsers;
}

/** The fake. */
export class FakeIndex implements VectorIndex {
  readonly dimension = 4;
  readonly gets: Array<{ uris: string[]; visibility: Visibility }> = [];
  private readonly byUri = new Map<string, NodeRecord>();
  /** When set, `get` throws it. */
  failWith: Error | null = null;
  /** Calls of `get` in flight now, and the most seen at once. */
  inFlight = 0;
  maxInFlight = 0;

  constructor(records: NodeRecord[] = []) {
    for (const r of records) this.byUri.set(r.uri, r);
  }

  async get(uris: string[], visibility: Visibility): Promise<Array<NodeRecord | NodeSummary | null>> {
    this.gets.push({ uris, visibility });
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise((r) => setImmediate(r));
      if (this.failWith) throw this.failWith;
      return uris.map((u) => {
        const r = this.byUri.get(u);
        return r && visible(r, visibility) ? r : null;
      });
    } finally {
      this.inFlight -= 1;
    }
  }

  async exists(uri: string, visibility: Visibility): Promise<boolean> {
    for (const r of this.byUri.values()) if ((r.uri === uri || r.uri.startsWith(uri + '/')) && visible(r, visibility)) return true;
    return false;
  }

  async search(): Promise<SearchHit[][]> {
    throw new Error('not used');
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
  async stats() {
    return { points: this.byUri.size, documents: this.byUri.size };
  }
  async ping(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}
