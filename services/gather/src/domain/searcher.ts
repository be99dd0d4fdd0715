/**
 * Node search over the VectorIndex port: embed each distinct text once, run every search of
 * a batch in one `index.search(queries[])` (its limit counting documents, its passage hits
 * carrying their documents' points where the engine attaches them), fetch any document point
 * still missing in one `get` per visibility, and collapse passages into documents.
 */
import type { Embedder } from '@ctxmesh/embedder';
import { type FilterNode, type NodeSummary, type SearchHit, type SearchQuery, type VectorIndex, type Visibility, missingDocuments, visibilityKey } from '@ctxmesh/stores';
import { EmbeddingCache } from './embed-cache';
import { collapsePassages, type NodeHit } from './hits';

/** One node search. */
export interface NodeSearch {
  /** Query text (non-blank; a blank text yields no hits without touching the store). */
  text: string;
  /** Who is asking (built by `searchVisibility`). */
  visibility: Visibility;
  /** URI prefixes; empty = the visibility's default scope. */
  targets: string[];
  /** Metadata filter, or null. */
  filter: FilterNode | null;
  /** Nodes wanted (after passage collapse); ≤ 0 yields no hits. */
  limit: number;
  /** Minimum calibrated score, or null. */
  scoreThreshold: number | null;
  /** Levels to keep; empty or absent = all. */
  levels?: number[];
  /** Valid-time instant in ms, or null for no validity check. */
  asOf: number | null;
}

/** Runs batches of {@link NodeSearch}. One per service; the embedding cache is shared. */
export class NodeSearcher {
  constructor(
    private readonly index: VectorIndex,
    private readonly embedder: Embedder,
    readonly cache: EmbeddingCache = new EmbeddingCache(),
  ) {
    if (embedder.dimension !== index.dimension) {
      throw new RangeError(`embedder ${embedder.id} has dimension ${embedder.dimension}, the vector index ${index.dimension}`);
    }
  }

  /** The embedder's id (for messages). */
  get embedderId(): string {
    return this.embedder.id;
  }

  /** True when the configured embedder can embed images. */
  get supportsImages(): boolean {
    return this.embedder.supportsImages;
  }

  /**
   * Run searches as one batch and return the index's points as they are (passages are not
   * collapsed into documents): retrieve works on passages. `limit` is the number of points.
   * @param signal aborts the embedding call (the request's deadline)
   * @returns points per search, best first, at most `limit` each
   */
  async searchPoints(searches: readonly NodeSearch[], signal?: AbortSignal): Promise<SearchHit[][]> {
    const active = searches.map((s, i) => ({ s, i })).filter(({ s }) => s.limit > 0 && s.text.trim() !== '');
    const out: SearchHit[][] = searches.map(() => []);
    if (active.length === 0) return out;
    const vectors = await this.cache.getMany(
      active.map(({ s }) => s.text),
      (texts) => this.embedder.embed(texts, { signal }),
    );
    const results = await this.index.search(
      active.map(({ s }, k) => ({
        visibility: s.visibility,
        vector: vectors[k],
        text: s.text,
        targets: s.targets,
        filter: s.filter,
        limit: Math.floor(s.limit),
        scoreThreshold: s.scoreThreshold,
        levels: s.levels && s.levels.length > 0 ? s.levels : undefined,
        asOf: s.asOf,
      })),
    );
    active.forEach(({ i }, k) => {
      out[i] = results[k] ?? [];
    });
    return out;
  }

  /**
   * Run searches as one batch.
   * @param signal aborts the embedding call (the request's deadline)
   * @returns node hits per search, best first, at most `limit` each
   */
  async searchMany(searches: readonly NodeSearch[], signal?: AbortSignal): Promise<NodeHit[][]> {
    const active = searches.map((s, i) => ({ s, i })).filter(({ s }) => s.limit > 0 && s.text.trim() !== '');
    const out: NodeHit[][] = searches.map(() => []);
    if (active.length === 0) return out;

    const vectors = await this.cache.getMany(
      active.map(({ s }) => s.text),
      (texts) => this.embedder.embed(texts, { signal }),
    );
    const queries: SearchQuery[] = active.map(({ s }, k) => ({
      visibility: s.visibility,
      vector: vectors[k],
      text: s.text,
      targets: s.targets,
      filter: s.filter,
      // Passages of one document collapse into one node: the store counts documents.
      limit: Math.floor(s.limit),
      documents: true,
      scoreThreshold: s.scoreThreshold,
      levels: s.levels && s.levels.length > 0 ? s.levels : undefined,
      asOf: s.asOf,
      withOverview: true,
    }));
    const results = await this.index.search(queries);

    // Document points for passage hits: those the store attached (`SearchHit.document`), else
    // one `get` per distinct visibility.
    const groups = new Map<string, { vis: Visibility; uris: Set<string>; docs: Map<string, NodeSummary> }>();
    active.forEach(({ s }, k) => {
      const key = visibilityKey(s.visibility);
      let g = groups.get(key);
      if (!g) {
        g = { vis: s.visibility, uris: new Set(), docs: new Map() };
        groups.set(key, g);
      }
      const hits = results[k] ?? [];
      for (const h of hits) if (h.document) g.docs.set(h.document.uri, h.document);
      for (const d of missingDocuments(hits)) g.uris.add(d);
    });
    await Promise.all(
      [...groups.values()].map(async (g) => {
        const uris = [...g.uris].filter((u) => !g.docs.has(u));
        if (uris.length === 0) return;
        const got = await this.index.get(uris, g.vis, 'summary');
        got.forEach((n, j) => {
          if (n) g.docs.set(uris[j], n as NodeSummary);
        });
      }),
    );

    active.forEach(({ s, i }, k) => {
      const docs = (groups.get(visibilityKey(s.visibility)) as { docs: Map<string, NodeSummary> }).docs;
      out[i] = collapsePassages(results[k] ?? [], docs).slice(0, Math.floor(s.limit));
    });
    return out;
  }
}
