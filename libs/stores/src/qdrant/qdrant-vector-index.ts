import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { IndexDimensionMismatchError, InvalidRecordError, validateDocumentRecords } from '../ports/errors';
import type { FieldSet, IndexStats, NodeContent, NodeRecord, NodeSummary, SearchHit, SearchQuery, VectorIndex, Visibility } from '../ports/vector-index';
import type { CorpusStats } from '../ranking/query';
import type { DocTerms } from '../ranking/terms';
import { DEFAULT_TUNING, type HybridTuning } from '../tuning';
import { denseOf, toContent, toRecord, toSummary } from './payload';
import { documentBody, existsBody, getBody, statsAccountsBody, statsCountBody, statsFacetBody, vectorsBody } from './reads';
import { DENSE_VECTOR, P, createCollectionBody, payloadIndexBodies } from './schema';
import { batchBody, candidatesOf, fusedOf, hitsBody, hitsOf, keyOf, planSearch, scorerOf, splitBatch } from './search';
import { CorpusStatsCache } from './stats';
import { commitBody, currentVersionBody, currentVersionsBody, deleteBody, deleteCountBody, isCurrent, stageBatchBodies, stageBodies, versionOf } from './writes';

/** Default collection name. */
export const DEFAULT_QDRANT_COLLECTION = 'ctxmesh_nodes';

/** Options of {@link QdrantVectorIndex.open}. */
export interface QdrantVectorIndexOptions {
  /** Client to use (owned by the caller); when absent one is built from `url`/`apiKey`. */
  client?: QdrantClient;
  /** Qdrant REST URL, e.g. `http://qdrant:6333` (used when `client` is absent). */
  url?: string;
  /** API key (used when `client` is absent). */
  apiKey?: string;
  /** Client-side request timeout in ms (used when `client` is absent). @default 30000 */
  timeoutMs?: number;
  /** Collection name. @default 'ctxmesh_nodes' */
  collection?: string;
  /** Dense dimension; must match an existing collection. */
  dimension: number;
  /** Create the collection and its payload indexes when missing. @default true */
  create?: boolean;
  /** Hybrid-search tuning overrides (the shared ranking's; defaults: `DEFAULT_TUNING`, as the embedded index). */
  tuning?: Partial<HybridTuning>;
  /**
   * How long an account's ranking statistics (live points, their summed lengths, term document
   * frequencies) are reused, in ms; this adapter's own writes drop them at once, another
   * replica's are seen within this. @default 1000
   */
  statsTtlMs?: number;
  /** Statistics requests (`count`, `facet`) in flight at once. @default 16 */
  statsConcurrency?: number;
}

function errStatus(e: unknown): number | undefined {
  const s = (e as { status?: unknown } | null)?.status;
  return typeof s === 'number' ? s : undefined;
}

/**
 * {@link VectorIndex} on Qdrant: one collection with a named dense vector (`dense`, cosine) and
 * a sparse lexical vector (`lexical`, IDF modifier) per point, payload indexes on every filtered
 * key, tenant filters built here from the caller's {@link Visibility}, payload selectors that
 * keep bodies out of searches. Search ranks as the embedded index does, with the shared ranking
 * (`ranking/`): Qdrant generates each leg's candidates and the account's statistics, the ranking
 * orders, fuses, scores and thresholds them (see `search.ts`, `stats.ts`). The statistics come
 * from payload fields written with each point (`lex_counts`, `lex_terms`, `lex_len_bits`): a
 * point written before they existed counts as holding no lexical term until it is written
 * again, so a collection from an earlier version is re-ingested.
 *
 * Every request body comes from a pure builder (`schema.ts`, `writes.ts`, `search.ts`,
 * `reads.ts`) typed with the client's OpenAPI schema; this class only sequences them. Writes
 * follow the staged-then-commit protocol described in `writes.ts`.
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly dimension: number;
  private closed = false;

  private constructor(
    private readonly client: QdrantClient,
    private readonly collection: string,
    dimension: number,
    private readonly tuning: HybridTuning,
    private readonly corpus: CorpusStatsCache,
  ) {
    this.dimension = dimension;
  }

  /**
   * Connect, and create the collection and its payload indexes when missing (`create`).
   * @throws IndexDimensionMismatchError when the collection exists with another dense dimension
   * @throws the client's error when Qdrant cannot be reached (no silent fallback)
   */
  static async open(opts: QdrantVectorIndexOptions): Promise<QdrantVectorIndex> {
    if (!Number.isInteger(opts.dimension) || opts.dimension <= 0) throw new RangeError(`dimension must be a positive integer, got ${opts.dimension}`);
    const client =
      opts.client ??
      new QdrantClient({ url: opts.url, apiKey: opts.apiKey, timeout: opts.timeoutMs ?? 30_000, checkCompatibility: false });
    const collection = opts.collection ?? DEFAULT_QDRANT_COLLECTION;
    const corpus = new CorpusStatsCache(
      {
        count: async (body) => (await client.count(collection, body)).count,
        facet: async (body) => (await client.facet(collection, body)).hits,
      },
      { ttlMs: opts.statsTtlMs, concurrency: opts.statsConcurrency },
    );
    const index = new QdrantVectorIndex(client, collection, opts.dimension, { ...DEFAULT_TUNING, ...opts.tuning }, corpus);
    await index.ensureCollection(opts.create ?? true);
    return index;
  }

  private async ensureCollection(create: boolean): Promise<void> {
    const { exists } = await this.client.collectionExists(this.collection);
    if (!exists) {
      if (!create) throw new Error(`Qdrant collection ${this.collection} does not exist`);
      try {
        await this.client.createCollection(this.collection, createCollectionBody({ dimension: this.dimension }));
      } catch (e) {
        // Another replica created it first: carry on and validate what is there.
        if (errStatus(e) !== 409) throw e;
      }
    }
    const info = await this.client.getCollection(this.collection);
    const vectors = info.config.params.vectors as Record<string, { size?: number } | undefined> | undefined;
    const size = vectors?.[DENSE_VECTOR]?.size;
    if (typeof size === 'number' && size !== this.dimension) throw new IndexDimensionMismatchError(size, this.dimension);
    if (!create) return;
    const present = new Set(Object.keys(info.payload_schema ?? {}));
    for (const body of payloadIndexBodies()) {
      if (!present.has(body.field_name)) await this.client.createPayloadIndex(this.collection, { wait: true, ...body });
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('QdrantVectorIndex is closed');
  }


  private async scrollAll(build: (offset: Schemas['ExtendedPointId'] | undefined) => Schemas['ScrollRequest']): Promise<Schemas['Record'][]> {
    const out: Schemas['Record'][] = [];
    let offset: Schemas['ExtendedPointId'] | undefined;
    for (;;) {
      const page = await this.client.scroll(this.collection, build(offset));
      out.push(...page.points);
      const next = page.next_page_offset;
      if (next === undefined || next === null || typeof next === 'object') return out;
      offset = next;
    }
  }

  /**
   * Replace the points of document (account, `docUri`), the account being the records' own:
   * stage the new version, then commit it in one batch (see `writes.ts`). Nothing changes when
   * every stored point of that document is live with the same version. Other accounts' points
   * are never touched.
   * @returns true when something changed
   * @throws InvalidRecordError before writing anything when a record does not fit, the records
   *   span several accounts, or `records` is empty
   */
  async replaceDocument(docUri: string, records: NodeRecord[]): Promise<boolean> {
    this.assertOpen();
    const account = validateDocumentRecords(docUri, records, this.dimension);
    const version = versionOf(records);
    const stored = await this.scrollAll((offset) => currentVersionBody(account, docUri, undefined, offset));
    if (isCurrent(stored, version)) return false;
    try {
      for (const body of stageBodies(records, version)) await this.client.upsert(this.collection, { wait: true, ...body });
      await this.client.batchUpdate(this.collection, { wait: true, ...commitBody(account, docUri, version, records.map((r) => r.uri)) });
    } finally {
      // The account's statistics changed (or may have, when the commit failed midway).
      this.corpus.invalidate(account);
    }
    return true;
  }

  /**
   * {@link replaceDocument} for several documents: one scroll per account for what is stored,
   * the changed documents' new versions staged together (upserts of `UPSERT_CHUNK` points
   * across documents), then one commit batch holding every document's flip, in order. Each
   * document becomes visible whole; a failure part-way may leave some documents replaced, and
   * a retry is idempotent. A batch naming one document twice, or two documents holding one
   * record URI, is written one document at a time, so the later one wins as in sequence.
   * @returns per document, true when something changed
   * @throws InvalidRecordError before writing anything when any document's records do not fit
   */
  async replaceDocuments(docs: ReadonlyArray<{ docUri: string; records: NodeRecord[] }>): Promise<boolean[]> {
    this.assertOpen();
    const accounts = docs.map((d) => validateDocumentRecords(d.docUri, d.records, this.dimension));
    const docKeys = new Set<string>();
    const uriKeys = new Set<string>();
    let overlapping = false;
    docs.forEach((d, i) => {
      const k = `${accounts[i]}\u0000${d.docUri}`;
      if (docKeys.has(k)) overlapping = true;
      docKeys.add(k);
      for (const u of new Set(d.records.map((r) => `${accounts[i]}\u0000${r.uri}`))) {
        if (uriKeys.has(u)) overlapping = true;
        uriKeys.add(u);
      }
    });
    if (overlapping) {
      const out: boolean[] = [];
      for (const d of docs) out.push(await this.replaceDocument(d.docUri, d.records));
      return out;
    }
    const versions = docs.map((d) => versionOf(d.records));
    const stored = new Map<string, Schemas['Record'][]>();
    for (const account of new Set(accounts)) {
      const uris = docs.filter((_, i) => accounts[i] === account).map((d) => d.docUri);
      const points = await this.scrollAll((offset) => currentVersionsBody(account, uris, undefined, offset));
      for (const p of points) {
        const k = `${account}\u0000${String(p.payload?.[P.docUri])}`;
        const list = stored.get(k);
        if (list) list.push(p);
        else stored.set(k, [p]);
      }
    }
    const changed = docs.map((d, i) => !isCurrent(stored.get(`${accounts[i]}\u0000${d.docUri}`) ?? [], versions[i]!));
    const todo = docs.map((d, i) => ({ ...d, account: accounts[i]!, version: versions[i]! })).filter((_, i) => changed[i]);
    if (todo.length === 0) return changed;
    try {
      for (const body of stageBatchBodies(todo)) await this.client.upsert(this.collection, { wait: true, ...body });
      const operations = todo.flatMap((d) => commitBody(d.account, d.docUri, d.version, d.records.map((r) => r.uri)).operations);
      await this.client.batchUpdate(this.collection, { wait: true, operations });
    } finally {
      // The accounts' statistics changed (or may have, when the commit failed midway).
      for (const account of new Set(todo.map((d) => d.account))) this.corpus.invalidate(account);
    }
    return changed;
  }

  /**
   * Delete the points of `account`'s document `uri` (and its point whose URI is `uri`); with
   * `subtree`, also every point of the account under `uri/`. Counted first, so the figure is
   * exact unless a concurrent write lands in between.
   * @returns points removed
   * @throws InvalidRecordError when `account` is empty
   */
  async deleteDocument(account: string, uri: string, opts: { subtree?: boolean } = {}): Promise<number> {
    this.assertOpen();
    if (!account) throw new InvalidRecordError(`deleteDocument(${JSON.stringify(uri)}) needs an account`);
    const subtree = !!opts.subtree;
    const { count } = await this.client.count(this.collection, deleteCountBody(account, uri, subtree));
    if (count === 0) return 0;
    try {
      await this.client.delete(this.collection, { wait: true, ...deleteBody(account, uri, subtree) });
    } finally {
      this.corpus.invalidate(account);
    }
    return count;
  }

  /**
   * Run a batch of hybrid searches: every search's candidates in one `POST /points/query/batch`
   * and, beside it, the statistics of the accounts searched with text (cached; see `stats.ts`);
   * the shared ranking orders them; one `POST /points` then reads the hits' summaries and term
   * counts, and the ranking scores and thresholds them.
   * @returns hits per query, best first, ranked and scored as the embedded index ranks them
   * @throws UnsupportedFilterError for a filter Qdrant cannot evaluate
   * @throws InvalidRecordError for a query vector of the wrong dimension
   */
  async search(queries: SearchQuery[]): Promise<SearchHit[][]> {
    this.assertOpen();
    for (const q of queries) {
      if (q.vector && q.vector.length !== this.dimension) throw new InvalidRecordError(`query vector has length ${q.vector.length}, expected ${this.dimension}`);
    }
    const tuning = this.tuning;
    const plans = queries.map((q) => planSearch(q, tuning));
    const body = batchBody(plans);
    if (body.searches.length === 0) return plans.map(() => []);
    const lookups = new Map<string, Set<string>>();
    for (const p of plans) {
      if (!p.terms || p.terms.empty) continue;
      const keys = lookups.get(p.account) ?? new Set<string>();
      for (const k of p.terms.lookups()) keys.add(k);
      lookups.set(p.account, keys);
    }
    const [batch, ...stats] = await Promise.all([
      this.client.queryBatch(this.collection, body),
      ...[...lookups].map(([account, keys]) => this.corpus.stats(account, [...keys])),
    ]);
    const statsOf = new Map<string, CorpusStats>([...lookups.keys()].map((a, i) => [a, stats[i]!]));
    const answers = splitBatch(plans, batch);

    const memo = new Map<string, DocTerms | null>();
    const ranked = plans.map((p, i) => {
      const cands = candidatesOf(p, answers[i]!, tuning.minorWeight, memo);
      const scorer = scorerOf(p, statsOf.get(p.account), tuning);
      return { cands, scorer, fused: fusedOf(p, cands, scorer, tuning) };
    });
    const ids = new Map<string, Schemas['ExtendedPointId']>();
    for (const r of ranked) for (const h of r.fused) ids.set(h.key, r.cands.ids.get(h.key)!);
    const points = new Map<string, Record<string, unknown>>();
    if (ids.size > 0) {
      const read = await this.client.retrieve(this.collection, hitsBody([...ids.values()], plans.some((p) => p.withOverview)));
      for (const r of read) points.set(keyOf(r.id), (r.payload ?? {}) as Record<string, unknown>);
    }
    return plans.map((p, i) => hitsOf(p, ranked[i]!.fused, ranked[i]!.cands, ranked[i]!.scorer, points, tuning, memo));
  }

  /**
   * Points by indexed URI; `summary` omits body, overview, vector and lexical text, `full`
   * returns the whole {@link NodeRecord}. @returns null where missing or invisible
   */
  async get(uris: string[], visibility: Visibility, fields: FieldSet): Promise<Array<NodeRecord | NodeContent | NodeSummary | null>> {
    this.assertOpen();
    if (uris.length === 0) return [];
    const points = await this.scrollAll((offset) => getBody(uris, visibility, fields, offset));
    const byUri = new Map<string, NodeRecord | NodeSummary>();
    for (const p of points) {
      const payload = p.payload as Record<string, unknown> | null | undefined;
      const uri = typeof payload?.[P.uri] === 'string' ? (payload[P.uri] as string) : '';
      if (byUri.has(uri)) continue;
      byUri.set(uri, fields === 'full' ? toRecord(payload, p.vector, this.dimension) : fields === 'content' ? toContent(payload) : toSummary(payload, false));
    }
    return uris.map((u) => byUri.get(u) ?? null);
  }

  /** Every live, visible point of a document in passage order (empty when missing or invisible). */
  async getDocument(docUri: string, visibility: Visibility): Promise<NodeRecord[]> {
    this.assertOpen();
    const points = await this.scrollAll((offset) => documentBody(docUri, visibility, offset));
    const seen = new Set<string>();
    const out: NodeRecord[] = [];
    for (const p of points) {
      const r = toRecord(p.payload as Record<string, unknown> | null | undefined, p.vector, this.dimension);
      if (seen.has(r.uri)) continue;
      seen.add(r.uri);
      out.push(r);
    }
    return out.sort((a, b) => a.passageIndex - b.passageIndex || (a.uri < b.uri ? -1 : a.uri > b.uri ? 1 : 0));
  }

  /** Dense vectors by indexed URI, at their written scale; null where missing or invisible. */
  async vectors(uris: string[], visibility: Visibility): Promise<Array<Float32Array | null>> {
    this.assertOpen();
    if (uris.length === 0) return [];
    const points = await this.scrollAll((offset) => vectorsBody(uris, visibility, offset));
    const byUri = new Map<string, Float32Array>();
    for (const p of points) {
      const payload = (p.payload ?? {}) as Record<string, unknown>;
      const uri = typeof payload[P.uri] === 'string' ? (payload[P.uri] as string) : '';
      const v = denseOf(p.vector, payload[P.vectorNorm]);
      if (v && !byUri.has(uri)) byUri.set(uri, v);
    }
    return uris.map((u) => byUri.get(u) ?? null);
  }

  /** True when a live, visible point has this URI or lives under `uri/`. */
  async exists(uri: string, visibility: Visibility): Promise<boolean> {
    this.assertOpen();
    const page = await this.client.scroll(this.collection, existsBody(uri, visibility));
    return page.points.length > 0;
  }

  /**
   * Live point and distinct-document counts, for one account or the whole collection. A
   * document is (account, doc_uri), so the whole-collection figure sums one `doc_uri` facet per
   * account (one request per account: meant for admin and benches, not the request path).
   */
  async stats(account?: string): Promise<IndexStats> {
    this.assertOpen();
    const { count } = await this.client.count(this.collection, statsCountBody(account));
    if (count === 0) return { points: 0, documents: 0 };
    if (account !== undefined) {
      const facet = await this.client.facet(this.collection, statsFacetBody(count, account));
      return { points: count, documents: facet.hits.length };
    }
    const accounts = await this.client.facet(this.collection, statsAccountsBody(count));
    let documents = 0;
    for (const hit of accounts.hits) {
      if (typeof hit.value !== 'string') continue;
      documents += (await this.client.facet(this.collection, statsFacetBody(hit.count, hit.value))).hits.length;
    }
    return { points: count, documents };
  }

  /** True while Qdrant answers and the collection exists. */
  async ping(): Promise<boolean> {
    if (this.closed) return false;
    try {
      return (await this.client.collectionExists(this.collection)).exists;
    } catch {
      return false;
    }
  }

  /** Stop using the index (the HTTP client holds no connection that needs closing). */
  async close(): Promise<void> {
    this.closed = true;
  }
}
