/**
 * QdrantVectorIndex against Qdrant.
 *
 * Qdrant cannot run on our machines. What is proved here without one: the adapter, through the
 * real `@qdrant/js-client-rest` client and real HTTP, sends exactly the requests its typed
 * builders produce (paths, methods, query strings, JSON bodies) and turns canned Qdrant answers
 * into the port's results; and the adapter-neutral VectorIndex contract suite passes against an
 * in-memory model of Qdrant's documented semantics (`qdrant-model.ts`), which checks how the
 * adapter composes its requests. Only with QDRANT_URL set does the same contract suite run
 * against a real Qdrant (bottom of this file) — the one check of Qdrant's actual behaviour.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { describeVectorIndexContract, makeRecord, type VectorIndexContractOptions } from '../src/contract/vector-index.contract';
import { type EmbeddedDb, openEmbeddedDb } from '../src/embedded/db';
import { EmbeddedVectorIndex } from '../src/embedded/vector-index';
import { IndexDimensionMismatchError, InvalidRecordError, UnsupportedFilterError } from '../src/ports/errors';
import type { SearchQuery } from '../src/ports/vector-index';
import { aliceVisibility, sampleRecord } from '../src/qdrant/__tests__/fixtures';
import { pointId } from '../src/qdrant/ids';
import { QdrantVectorIndex } from '../src/qdrant/qdrant-vector-index';
import { documentBody, existsBody, getBody, statsAccountsBody, statsCountBody, statsFacetBody, vectorsBody } from '../src/qdrant/reads';
import { createCollectionBody, payloadIndexBodies, P } from '../src/qdrant/schema';
import { batchBody, hitsBody, planSearch } from '../src/qdrant/search';
import { lengthFacetBody, liveCountBody, termCountBody } from '../src/qdrant/stats';
import { encodeTermCounts } from '../src/ranking/terms';
import * as ranking from '../src/ranking/relevance';
import { DEFAULT_TUNING } from '../src/tuning';
import { commitBody, currentVersionBody, currentVersionsBody, deleteBody, deleteCountBody, stageBatchBodies, stageBodies } from '../src/qdrant/writes';
import { ModelError, QdrantModel } from './qdrant-model';

const QDRANT_URL = process.env.QDRANT_URL;
const COLLECTION = 'ctxmesh_test';

/** One request as the fake server saw it. */
interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

type Reply = { status?: number; result: unknown };
type Handler = (req: Seen) => Reply;

/**
 * A recording fake of Qdrant's REST API on port 0: answers each `METHOD /path` from a table of
 * canned replies (in the `{result, status, time}` envelope) and records every request.
 */
class FakeQdrant {
  readonly seen: Seen[] = [];
  private readonly routes = new Map<string, Handler[]>();
  private server: Server | null = null;
  url = '';

  /** @param fallback answers requests no canned reply matches (e.g. a {@link QdrantModel}) */
  constructor(private readonly fallback: Handler | null = null) {}

  /** Queue a reply for `METHOD /path` (used once; the last one queued repeats). */
  on(method: string, path: string, handler: Handler | Reply): this {
    const key = `${method} ${path}`;
    const list = this.routes.get(key) ?? [];
    list.push(typeof handler === 'function' ? handler : () => handler);
    this.routes.set(key, list);
    return this;
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((done) => this.server!.close(() => done()));
  }

  /** Requests seen since the last call, then forget them. */
  take(): Seen[] {
    return this.seen.splice(0, this.seen.length);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const seen: Seen = {
      method: req.method ?? '',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      body: raw === '' ? undefined : JSON.parse(raw),
    };
    this.seen.push(seen);
    const list = this.routes.get(`${seen.method} ${seen.path}`);
    if ((!list || list.length === 0) && this.fallback) {
      const reply = this.fallback(seen);
      this.send(res, reply);
      return;
    }
    if (!list || list.length === 0) {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: { error: `no fake route for ${seen.method} ${seen.path}` }, time: 0 }));
      return;
    }
    this.send(res, (list.length > 1 ? list.shift()! : list[0]!)(seen));
  }

  private send(res: ServerResponse, reply: Reply): void {
    const status = reply.status ?? 200;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(status < 300 ? { result: reply.result, status: 'ok', time: 0.001 } : { status: { error: String(reply.result) }, time: 0 }));
  }
}

/** Route a request to the model, turning its errors into Qdrant-style error answers. */
function modelHandler(model: QdrantModel): Handler {
  return (req) => {
    try {
      return { result: model.handle(req.method, req.path, req.body) };
    } catch (e) {
      if (e instanceof ModelError) return { status: e.status, result: e.message };
      throw e;
    }
  };
}

/** JSON round trip: what a body looks like on the wire (Float32 → number, undefined dropped). */
function wire<T>(x: T): unknown {
  return JSON.parse(JSON.stringify(x));
}

const DIM = 4;
const collectionPath = `/collections/${COLLECTION}`;

function collectionInfo(size: number, indexed: string[] = []): unknown {
  return {
    status: 'green',
    optimizer_status: 'ok',
    points_count: 0,
    segments_count: 1,
    config: {
      params: { vectors: { dense: { size, distance: 'Cosine' } }, sparse_vectors: { lexical: { modifier: 'idf' } } },
      hnsw_config: { m: 16, ef_construct: 100, full_scan_threshold: 10000 },
      optimizer_config: {},
      wal_config: {},
    },
    payload_schema: Object.fromEntries(indexed.map((k) => [k, { data_type: 'keyword', points: 0 }])),
  };
}

const UPDATED = { operation_id: 1, status: 'completed' };

async function openAgainst(fake: FakeQdrant): Promise<QdrantVectorIndex> {
  const allIndexed = payloadIndexBodies().map((b) => b.field_name);
  fake.on('GET', `${collectionPath}/exists`, { result: { exists: true } }).on('GET', collectionPath, { result: collectionInfo(DIM, allIndexed) });
  const index = await QdrantVectorIndex.open({ url: fake.url, collection: COLLECTION, dimension: DIM });
  fake.take();
  return index;
}

describe(`QdrantVectorIndex offline, through a recording fake Qdrant${QDRANT_URL ? '' : ' (QDRANT_URL unset: the contract suite against a real Qdrant does not run in this process)'}`, () => {
  let fake: FakeQdrant;

  beforeAll(() => {
    if (!QDRANT_URL) {
      // Say it where the test output shows it: only the request-level behaviour is proved here.
      process.stdout.write('vector-index.qdrant: QDRANT_URL is unset — running the offline HTTP checks only; set QDRANT_URL to run the VectorIndex contract suite against Qdrant.\n');
    }
  });

  beforeEach(async () => {
    fake = new FakeQdrant();
    await fake.start();
  });

  afterEach(async () => {
    await fake.stop();
  });

  it('creates a missing collection with its vectors, then every payload index', async () => {
    fake
      .on('GET', `${collectionPath}/exists`, { result: { exists: false } })
      .on('PUT', collectionPath, { result: true })
      .on('GET', collectionPath, { result: collectionInfo(DIM, [P.account]) })
      .on('PUT', `${collectionPath}/index`, { result: UPDATED });
    const index = await QdrantVectorIndex.open({ url: fake.url, collection: COLLECTION, dimension: DIM });
    const seen = fake.take();
    expect(seen.slice(0, 3).map((s) => `${s.method} ${s.path}`)).toEqual([`GET ${collectionPath}/exists`, `PUT ${collectionPath}`, `GET ${collectionPath}`]);
    expect(seen[1]!.body).toEqual(wire(createCollectionBody({ dimension: DIM })));
    const indexes = seen.slice(3);
    expect(indexes.every((s) => s.method === 'PUT' && s.path === `${collectionPath}/index` && s.query.wait === 'true')).toBe(true);
    // The account index already exists, so it is not created again.
    expect(indexes.map((s) => s.body)).toEqual(wire(payloadIndexBodies().filter((b) => b.field_name !== P.account)));
    expect(index.dimension).toBe(DIM);
  });

  it('refuses a collection of another dimension', async () => {
    fake.on('GET', `${collectionPath}/exists`, { result: { exists: true } }).on('GET', collectionPath, { result: collectionInfo(8) });
    await expect(QdrantVectorIndex.open({ url: fake.url, collection: COLLECTION, dimension: DIM })).rejects.toThrow(IndexDimensionMismatchError);
  });

  it('stages a new document version, then commits it in one batch', async () => {
    const index = await openAgainst(fake);
    const records = [0, 1].map((i) => sampleRecord({ uri: `viking://resources/guide/intro.md#p${i}`, passageIndex: i, contentHash: 'h2' }));
    fake
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: 'old', payload: { [P.version]: 'h1', [P.state]: 'live' } }], next_page_offset: null } })
      .on('PUT', `${collectionPath}/points`, { result: UPDATED })
      .on('POST', `${collectionPath}/points/batch`, { result: [UPDATED, UPDATED, UPDATED] });
    await expect(index.replaceDocument('viking://resources/guide/intro.md', records)).resolves.toBe(true);
    const seen = fake.take();
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([
      `POST ${collectionPath}/points/scroll`,
      `PUT ${collectionPath}/points`,
      `POST ${collectionPath}/points/batch`,
    ]);
    expect(seen[0]!.body).toEqual(wire(currentVersionBody('acme', 'viking://resources/guide/intro.md')));
    expect(seen[1]!.query.wait).toBe('true');
    expect(seen[1]!.body).toEqual(wire(stageBodies(records, 'h2')[0]));
    expect((seen[1]!.body as { points: Array<{ id: string }> }).points.map((p) => p.id)).toEqual(records.map((r) => pointId('acme', r.uri, 'h2')));
    expect(seen[2]!.query.wait).toBe('true');
    expect(seen[2]!.body).toEqual(wire(commitBody('acme', 'viking://resources/guide/intro.md', 'h2', records.map((r) => r.uri))));
  });

  it('replaceDocuments: one scroll for the stored versions, the changed documents staged together, one commit batch', async () => {
    const index = await openAgainst(fake);
    const doc = (name: string, hash: string) => ({ docUri: `viking://resources/guide/${name}.md`, records: [sampleRecord({ uri: `viking://resources/guide/${name}.md`, docUri: `viking://resources/guide/${name}.md`, contentHash: hash })] });
    const [a, b, c] = [doc('a', 'ha2'), doc('b', 'hb1'), doc('c', 'hc1')];
    fake
      .on('POST', `${collectionPath}/points/scroll`, {
        result: {
          points: [
            { id: 'a-old', payload: { [P.docUri]: a.docUri, [P.version]: 'ha1', [P.state]: 'live' } },
            { id: 'b-live', payload: { [P.docUri]: b.docUri, [P.version]: 'hb1', [P.state]: 'live' } },
          ],
          next_page_offset: null,
        },
      })
      .on('PUT', `${collectionPath}/points`, { result: UPDATED })
      .on('POST', `${collectionPath}/points/batch`, { result: [UPDATED, UPDATED, UPDATED, UPDATED, UPDATED, UPDATED] });
    await expect(index.replaceDocuments([a, b, c])).resolves.toEqual([true, false, true]);
    const seen = fake.take();
    expect(seen.map((x) => `${x.method} ${x.path}`)).toEqual([`POST ${collectionPath}/points/scroll`, `PUT ${collectionPath}/points`, `POST ${collectionPath}/points/batch`]);
    expect(seen[0]!.body).toEqual(wire(currentVersionsBody('acme', [a.docUri, b.docUri, c.docUri])));
    expect(seen[1]!.body).toEqual(wire(stageBatchBodies([{ records: a.records, version: 'ha2' }, { records: c.records, version: 'hc1' }])[0]));
    expect(seen[2]!.query.wait).toBe('true');
    expect(seen[2]!.body).toEqual(
      wire({ operations: [...commitBody('acme', a.docUri, 'ha2', [a.docUri]).operations, ...commitBody('acme', c.docUri, 'hc1', [c.docUri]).operations] }),
    );
  });

  it('writes nothing when the live version already has the same content hash', async () => {
    const index = await openAgainst(fake);
    fake.on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: 'x', payload: { [P.version]: 'sha256:aaaa', [P.state]: 'live' } }], next_page_offset: null } });
    await expect(index.replaceDocument('viking://resources/guide/intro.md', [sampleRecord()])).resolves.toBe(false);
    expect(fake.take().map((s) => s.path)).toEqual([`${collectionPath}/points/scroll`]);
  });

  it('pages through the stored version with the scroll offset', async () => {
    const index = await openAgainst(fake);
    fake
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: 'a', payload: { [P.version]: 'sha256:aaaa', [P.state]: 'live' } }], next_page_offset: 'b' } })
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: 'b', payload: { [P.version]: 'sha256:aaaa', [P.state]: 'live' } }], next_page_offset: null } });
    await expect(index.replaceDocument('viking://resources/guide/intro.md', [sampleRecord()])).resolves.toBe(false);
    const seen = fake.take();
    expect(seen.map((s) => (s.body as { offset?: string }).offset)).toEqual([undefined, 'b']);
  });

  it('rejects a record that does not fit before sending anything', async () => {
    const index = await openAgainst(fake);
    await expect(index.replaceDocument('viking://resources/guide/intro.md', [sampleRecord({ vector: new Float32Array(3) })])).rejects.toThrow(InvalidRecordError);
    await expect(index.replaceDocument('viking://resources/guide/intro.md', [sampleRecord({ docUri: 'viking://resources/other.md' })])).rejects.toThrow(InvalidRecordError);
    expect(fake.take()).toEqual([]);
  });

  it('deletes a document or a subtree after counting what goes', async () => {
    const index = await openAgainst(fake);
    fake.on('POST', `${collectionPath}/points/count`, { result: { count: 3 } }).on('POST', `${collectionPath}/points/delete`, { result: UPDATED });
    await expect(index.deleteDocument('acme', 'viking://resources/guide', { subtree: true })).resolves.toBe(3);
    const seen = fake.take();
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual([`POST ${collectionPath}/points/count`, `POST ${collectionPath}/points/delete`]);
    expect(seen[0]!.body).toEqual(wire(deleteCountBody('acme', 'viking://resources/guide', true)));
    expect(seen[1]!.body).toEqual(wire(deleteBody('acme', 'viking://resources/guide', true)));
    expect(seen[1]!.query.wait).toBe('true');
  });

  it('does not send a delete when nothing matches', async () => {
    const index = await openAgainst(fake);
    fake.on('POST', `${collectionPath}/points/count`, { result: { count: 0 } });
    await expect(index.deleteDocument('acme', 'viking://resources/none.md')).resolves.toBe(0);
    expect(fake.take().map((s) => s.path)).toEqual([`${collectionPath}/points/count`]);
  });

  it('fetches every search’s candidates in one query batch beside the account’s statistics, then the ranked hits in one read', async () => {
    const index = await openAgainst(fake);
    const q1: SearchQuery = { visibility: aliceVisibility(), vector: Float32Array.from([2, 0, 0, 0]), text: 'install search', targets: [], filter: null, limit: 3 };
    const q2: SearchQuery = { ...q1, vector: null, text: 'install' };
    const counts = (terms: Record<string, number>) => encodeTermCounts({ main: new Map(Object.entries(terms)), minor: new Map() });
    const hit = (uri: string, extra: Record<string, unknown> = {}) => ({ [P.uri]: uri, [P.contextType]: 'resource', [P.account]: 'acme', ...extra });
    const a = counts({ install: 1, search: 1 });
    const z = counts({ search: 1, cat: 1 });
    // Ten live rows of 2 tokens each; "install" in one, "search" in two.
    const df: Record<string, number> = { '0:install': 1, '0:search': 2 };
    fake
      .on('POST', `${collectionPath}/points/query/batch`, {
        result: [
          // q1's dense leg: 'g' is gone by the time the hits are read.
          { points: [{ id: 'a', version: 1, score: 0.9, payload: hit('viking://resources/a.md') }, { id: 'g', version: 1, score: 0.5, payload: hit('viking://resources/g.md') }] },
          // q1's lexical candidates, re-scored by the dense query.
          { points: [{ id: 'z', version: 1, score: 0.6, payload: { [P.uri]: 'viking://resources/z.md', [P.lexCounts]: z } }, { id: 'a', version: 1, score: 0.9, payload: { [P.uri]: 'viking://resources/a.md', [P.lexCounts]: a } }] },
          // q2's lexical candidates (no dense leg: sparse scores).
          { points: [{ id: 'a', version: 1, score: 3.1, payload: { [P.uri]: 'viking://resources/a.md', [P.lexCounts]: a } }] },
        ],
      })
      .on('POST', `${collectionPath}/points/query/batch`, { result: [{ points: [{ id: 'a', version: 1, score: 3.1, payload: { [P.uri]: 'viking://resources/a.md', [P.lexCounts]: a } }] }] })
      .on('POST', `${collectionPath}/points/count`, (req) => {
        const cond = ((req.body as Schemas['CountRequest']).filter!.must as Schemas['FieldCondition'][]).find((c) => c.key === P.lexTerms);
        const match = cond?.match as { value?: string; any?: string[] } | undefined;
        const values = match ? (match.any ?? [match.value!]) : [];
        return { result: { count: cond ? values.reduce((n, v) => n + (df[v] ?? 0), 0) : 10 } };
      })
      .on('POST', `${collectionPath}/facet`, { result: { hits: [{ value: '1', count: 10 }] } })
      .on('POST', `${collectionPath}/points`, {
        result: [
          { id: 'a', payload: hit('viking://resources/a.md', { [P.lexCounts]: a }) },
          { id: 'z', payload: hit('viking://resources/z.md', { [P.lexCounts]: z }) },
        ],
      });
    const results = await index.search([q1, q2]);
    const seen = fake.take();
    const route = (s: Seen) => `${s.method} ${s.path}`;
    // The batch and the statistics go out together; the read of the hits comes last, once.
    expect(route(seen[seen.length - 1]!)).toBe(`POST ${collectionPath}/points`);
    expect(seen.filter((s) => route(s) === `POST ${collectionPath}/points/query/batch`).map((s) => s.body)).toEqual([wire(batchBody([planSearch(q1), planSearch(q2)]))]);
    const statsBodies = seen.filter((s) => s.path.endsWith('/points/count') || s.path.endsWith('/facet')).map((s) => JSON.stringify(s.body));
    const wantStats = [liveCountBody('acme'), lengthFacetBody('acme'), termCountBody('acme', ['0:install']), termCountBody('acme', ['0:search'])].map((b) => JSON.stringify(wire(b)));
    expect(statsBodies.sort()).toEqual(wantStats.sort());
    expect(seen[seen.length - 1]!.body).toEqual(wire(hitsBody(['a', 'z', 'g'], false)));
    // q1: a leads both legs; z follows on its cosine; g was deleted meanwhile. Scores are the
    // shared relevance model's of the features the hits carry.
    expect(results[0]!.map((h) => h.node.uri)).toEqual(['viking://resources/a.md', 'viking://resources/z.md']);
    expect(results[0]!.map((h) => h.features!.cosine)).toEqual([expect.closeTo(0.9, 6), expect.closeTo(0.6, 6)]);
    for (const h of [...results[0]!, ...results[1]!]) expect(h.score).toBe(ranking.relevanceScore(h.features!, DEFAULT_TUNING.relevance));
    // q2 (lexical only): the cosine is the set cosine of {install} and {install, search}, 1/√2.
    expect(results[1]!.map((h) => [h.node.uri, h.features!.cosine])).toEqual([['viking://resources/a.md', expect.closeTo(Math.SQRT1_2, 9)]]);
    // Within the statistics' lifetime a search asks only for the batch and the hits.
    await index.search([q2]);
    expect(fake.take().map(route)).toEqual([`POST ${collectionPath}/points/query/batch`, `POST ${collectionPath}/points`]);
  });

  it('answers searches with no leg without calling Qdrant, and rejects bad queries first', async () => {
    const index = await openAgainst(fake);
    const empty: SearchQuery = { visibility: aliceVisibility(), vector: null, text: '', targets: [], filter: null, limit: 5 };
    await expect(index.search([empty])).resolves.toEqual([[]]);
    await expect(index.search([{ ...empty, vector: new Float32Array(2) }])).rejects.toThrow(InvalidRecordError);
    await expect(index.search([{ ...empty, text: 'x', filter: { op: 'must', field: 'colour', conds: [] } }])).rejects.toThrow(UnsupportedFilterError);
    expect(fake.take()).toEqual([]);
  });

  it('reads summaries, full records, documents, vectors and existence with the right selectors', async () => {
    const index = await openAgainst(fake);
    const vis = aliceVisibility();
    const r = sampleRecord({ vector: Float32Array.from([3, 0, 4, 0]) });
    const payload = (over: Record<string, unknown> = {}) => ({
      [P.uri]: r.uri,
      [P.docUri]: r.docUri,
      [P.contextType]: 'resource',
      [P.account]: 'acme',
      [P.body]: r.body,
      [P.vectorNorm]: 5,
      [P.passageIndex]: 0,
      ...over,
    });
    fake
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: '1', payload: payload() }], next_page_offset: null } }) // get summary
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: '1', payload: payload(), vector: { dense: [0.6, 0, 0.8, 0] } }], next_page_offset: null } }) // get full
      .on('POST', `${collectionPath}/points/scroll`, {
        result: {
          points: [
            { id: '2', payload: payload({ [P.uri]: `${r.uri}#p1`, [P.passageIndex]: 1 }), vector: { dense: [1, 0, 0, 0] } },
            { id: '1', payload: payload(), vector: { dense: [0.6, 0, 0.8, 0] } },
          ],
          next_page_offset: null,
        },
      }) // document
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [{ id: '1', payload: { [P.uri]: r.uri, [P.vectorNorm]: 5 }, vector: { dense: [0.6, 0, 0.8, 0] } }], next_page_offset: null } }) // vectors
      .on('POST', `${collectionPath}/points/scroll`, { result: { points: [], next_page_offset: null } }); // exists

    const [summary, missing] = await index.get([r.uri, 'viking://resources/missing.md'], vis, 'summary');
    expect(summary).toMatchObject({ uri: r.uri, docUri: r.docUri });
    expect(summary).not.toHaveProperty('body');
    expect(missing).toBeNull();
    const [full] = await index.get([r.uri], vis, 'full');
    expect(full).toMatchObject({ uri: r.uri, body: r.body });
    expect(Array.from((full as { vector: Float32Array }).vector)).toEqual([3, 0, 4, 0]);
    const doc = await index.getDocument(r.docUri, vis);
    expect(doc.map((d) => d.passageIndex)).toEqual([0, 1]);
    const [vec, none] = await index.vectors([r.uri, 'viking://resources/missing.md'], vis);
    expect(Array.from(vec!)).toEqual([3, 0, 4, 0]);
    expect(none).toBeNull();
    await expect(index.exists('viking://resources/guide', vis)).resolves.toBe(false);

    const bodies = fake.take().map((s) => s.body);
    expect(bodies).toEqual(
      wire([
        getBody([r.uri, 'viking://resources/missing.md'], vis, 'summary'),
        getBody([r.uri], vis, 'full'),
        documentBody(r.docUri, vis),
        vectorsBody([r.uri, 'viking://resources/missing.md'], vis),
        existsBody('viking://resources/guide', vis),
      ]),
    );
  });

  it('counts live points and distinct documents for stats', async () => {
    const index = await openAgainst(fake);
    fake
      .on('POST', `${collectionPath}/points/count`, { result: { count: 5 } })
      .on('POST', `${collectionPath}/facet`, { result: { hits: [{ value: 'viking://a', count: 3 }, { value: 'viking://b', count: 2 }] } });
    await expect(index.stats('acme')).resolves.toEqual({ points: 5, documents: 2 });
    expect(fake.take().map((s) => s.body)).toEqual(wire([statsCountBody('acme'), statsFacetBody(5, 'acme')]));
  });

  it('counts whole-collection documents per account, so one URI in two accounts is two documents', async () => {
    const index = await openAgainst(fake);
    fake
      .on('POST', `${collectionPath}/points/count`, { result: { count: 5 } })
      .on('POST', `${collectionPath}/facet`, { result: { hits: [{ value: 'acme', count: 3 }, { value: 'globex', count: 2 }] } })
      .on('POST', `${collectionPath}/facet`, { result: { hits: [{ value: 'viking://resources/a.md', count: 2 }, { value: 'viking://resources/b.md', count: 1 }] } })
      .on('POST', `${collectionPath}/facet`, { result: { hits: [{ value: 'viking://resources/a.md', count: 2 }] } });
    await expect(index.stats()).resolves.toEqual({ points: 5, documents: 3 });
    expect(fake.take().map((s) => s.body)).toEqual(wire([statsCountBody(), statsAccountsBody(5), statsFacetBody(3, 'acme'), statsFacetBody(2, 'globex')]));
  });

  it('reports readiness from the collection check and surfaces server errors', async () => {
    const index = await openAgainst(fake);
    fake.on('GET', `${collectionPath}/exists`, { result: { exists: true } });
    await expect(index.ping()).resolves.toBe(true);
    fake.on('POST', `${collectionPath}/points/count`, { status: 500, result: 'boom' });
    await expect(index.stats()).rejects.toThrow();
    await fake.stop();
    await expect(index.ping()).resolves.toBe(false);
    await index.close();
    await expect(index.ping()).resolves.toBe(false);
    await expect(index.stats()).rejects.toThrow(/closed/);
  });
});

/** The embedded index as the reference of the contract's one-ranking test: both engines must rank alike. */
function embeddedReference(): VectorIndexContractOptions & { close: () => void } {
  const dbs: EmbeddedDb[] = [];
  return {
    reference: {
      name: 'the embedded index',
      open: async () => {
        const db = openEmbeddedDb(':memory:');
        dbs.push(db);
        return new EmbeddedVectorIndex(db, { dimension: 256 });
      },
    },
    close: () => {
      for (const db of dbs.splice(0)) db.close();
    },
  };
}

describe('QdrantVectorIndex over an in-memory model of Qdrant (offline)', () => {
  const fake = new FakeQdrant(modelHandler(new QdrantModel()));
  const embedded = embeddedReference();
  beforeAll(() => fake.start());
  afterAll(async () => {
    embedded.close();
    await fake.stop();
  });
  // One collection for the whole suite: every contract test writes under its own account.
  describeVectorIndexContract('qdrant adapter ↔ Qdrant model', () => QdrantVectorIndex.open({ url: fake.url, collection: COLLECTION, dimension: 256 }), embedded);
});

describe('QdrantVectorIndex replace protocol over the Qdrant model', () => {
  it('keeps a version that was staged but never committed invisible, and a retry commits it', async () => {
    let commits = 0;
    const model = modelHandler(new QdrantModel());
    // The writer of v2 "dies" between staging and committing: the second commit batch fails.
    const fake = new FakeQdrant((req) => (req.path.endsWith('/points/batch') && ++commits === 2 ? { status: 500, result: 'injected failure' } : model(req)));
    await fake.start();
    try {
      const index = await QdrantVectorIndex.open({ url: fake.url, collection: COLLECTION, dimension: 256 });
      const embedder = new LexicalEmbedder({ dimension: 256 });
      const doc = 'viking://resources/protocol.md';
      const version = (hash: string, texts: string[]) =>
        texts.map((t, i) => makeRecord(embedder, 'acme', `${doc}#p${i}`, t, { docUri: doc, passageIndex: i, contentHash: hash }));
      const vis = aliceVisibility();
      const lexical = async (text: string) =>
        (await index.search([{ visibility: vis, vector: null, text, targets: [], filter: null, limit: 10 }]))[0]!.map((h) => h.node.uri);

      expect(await index.replaceDocument(doc, version('v1', ['original alpha text', 'original beta text']))).toBe(true);
      await expect(index.replaceDocument(doc, version('v2', ['replacement gamma text']))).rejects.toThrow();
      // The staged v2 point exists but nothing of it is readable; v1 is whole.
      expect(await lexical('gamma')).toEqual([]);
      expect((await index.getDocument(doc, vis)).map((r) => r.body)).toEqual(['original alpha text', 'original beta text']);
      expect(await index.stats('acme')).toEqual({ points: 2, documents: 1 });

      // The redelivered write re-stages the same ids and commits.
      expect(await index.replaceDocument(doc, version('v2', ['replacement gamma text']))).toBe(true);
      expect(await lexical('gamma')).toEqual([`${doc}#p0`]);
      expect(await lexical('alpha beta')).toEqual([]);
      expect((await index.getDocument(doc, vis)).map((r) => [r.body, r.contentHash])).toEqual([['replacement gamma text', 'v2']]);
      expect(await index.stats('acme')).toEqual({ points: 1, documents: 1 });
      expect(await index.replaceDocument(doc, version('v2', ['replacement gamma text']))).toBe(false);
    } finally {
      await fake.stop();
    }
  });
});

if (QDRANT_URL) {
  describe('QdrantVectorIndex against the Qdrant at QDRANT_URL', () => {
    // A fresh collection per run, dropped afterwards, so no run leaves points behind in a shared
    // server (every test also writes under its own accounts).
    const collection = `ctxmesh_contract_${randomUUID().replace(/-/g, '')}`;
    const apiKey = process.env.QDRANT_API_KEY;
    const embedded = embeddedReference();
    afterAll(async () => {
      embedded.close();
      await new QdrantClient({ url: QDRANT_URL, apiKey, checkCompatibility: false }).deleteCollection(collection);
    });
    describeVectorIndexContract('qdrant (real server)', () => QdrantVectorIndex.open({ url: QDRANT_URL, apiKey, collection, dimension: 256 }), embedded);
  });
}
