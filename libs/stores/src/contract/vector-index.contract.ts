/**
 * VectorIndex contract. Every adapter runs this suite: the embedded SQLite index in
 * `embedded/vector-index.test.ts`, Qdrant in its integration test when `QDRANT_URL` is set.
 *
 * Adapter-neutral: vectors come from the built-in `LexicalEmbedder` at the index's dimension
 * (so the index dimension must be a power of two in 64..4096), and every test writes under its
 * own random account, so a harness may hand out one shared collection.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import type { FilterNode, NodeRecord, NodeSummary, SearchHit, SearchQuery, VectorIndex, Visibility } from '../ports/vector-index';

/** Owner and peer implied by a viking:// URI (the indexer's rule; kept local so the suite has no kernel dependency). */
function ownership(uri: string): { owner: string; peer: string } {
  const segs = uri.slice('viking://'.length).split('/');
  if (segs[0] !== 'user' || segs.length < 2) return { owner: '', peer: '' };
  return { owner: segs[1], peer: segs[2] === 'peers' && segs.length > 3 ? segs[3] : '' };
}

function contextTypeOf(uri: string): NodeRecord['contextType'] {
  if (uri.includes('/memories/') || uri.endsWith('/memories')) return 'memory';
  if (uri.includes('/skills/')) return 'skill';
  return 'resource';
}

/** A fully populated record for `uri` with `text` as abstract and body. */
export function makeRecord(embedder: LexicalEmbedder, account: string, uri: string, text: string, over: Partial<NodeRecord> = {}): NodeRecord {
  const { owner, peer } = ownership(uri);
  const docUri = over.docUri ?? uri;
  return {
    uri,
    docUri,
    parentUri: uri.slice(0, uri.lastIndexOf('/')),
    contextType: contextTypeOf(uri),
    category: uri.includes('/memories/events/') ? 'events' : uri.includes('/skills/') ? 'skills' : 'resources',
    level: 2,
    account,
    owner,
    peer,
    workspace: 'default',
    subject: '',
    tags: [],
    createdAt: Date.parse('2025-01-10T00:00:00.000Z'),
    updatedAt: Date.parse('2025-01-10T00:00:00.000Z'),
    validFrom: null,
    validTo: null,
    title: uri.slice(uri.lastIndexOf('/') + 1),
    abstract: text,
    overview: `overview of ${text}`,
    body: text,
    contentHash: 'h-' + text.length + '-' + Buffer.from(text).toString('base64').slice(0, 16),
    passageIndex: 0,
    links: [],
    vector: embedder.embedOne(text),
    lexicalText: '',
    ...over,
  };
}

/** Options of {@link describeVectorIndexContract}. */
export interface VectorIndexContractOptions {
  /**
   * An index of another engine to rank against: the suite writes one shared corpus into both
   * (in opposite orders) and requires the same top-10 order and the same scores to 1e-6.
   * @default another index from `makeIndex` (so every engine at least ranks independently of write order and row ids)
   */
  reference?: { name: string; open: () => Promise<VectorIndex> };
}

/**
 * The shared ranking corpus: English, Chinese and mixed texts whose order depends on every part
 * of the ranking — BM25 with a term in most rows (left out), a query that repeats a term (the
 * TF-IDF re-ranking), a long page that holds a short question (the coverage floor), CJK
 * one-character runs beside bigrams and unigrams, two scopes.
 */
const RANKING_CORPUS: ReadonlyArray<[uri: string, text: string]> = [
  ['viking://resources/en/deploy.md', 'Deployment notes: the pipeline failed because the Redis connection timed out during startup.'],
  ['viking://resources/en/deploy-fix.md', 'Notes on the fix: raise the Redis connect timeout and retry the deployment pipeline.'],
  ['viking://resources/en/pie.md', 'My grandmother bakes an apple pie every Sunday afternoon; notes on her recipe.'],
  ['viking://resources/en/revenue.md', 'Quarterly revenue grew thanks to the new pricing model, say the finance notes.'],
  ['viking://resources/en/beacon.md', 'lighthouse beacon tower stairs lantern glass notes'],
  ['viking://resources/en/harbor.md', 'the harbor notes'],
  ['viking://resources/en/cafe.md', 'harbor cafe terrace'],
  ['viking://resources/en/keeper.md', 'The lighthouse keeper kept notes of every ship that passed the harbor in winter.'],
  [
    'viking://resources/en/handbook.md',
    'Operations handbook. Chapter one covers hiring, payroll and the office kitchen. Chapter two covers the deployment pipeline, ' +
      'its stages, its owners, and what to do when the Redis connection times out at startup: check the network, then the credentials. ' +
      'Chapter three covers holidays, travel bookings and expense reports, with notes.',
  ],
  ['viking://resources/en/trip.md', 'Trip to 东京 next week: plans, train tickets and hotel notes.'],
  ['viking://resources/zh/deploy.md', '部署流水线因为启动时Redis连接超时而失败。'],
  ['viking://resources/zh/pie.md', '我奶奶每个星期天下午都会烤苹果派。'],
  ['viking://resources/zh/party.md', '元旦晚会上Bart表演了魔术，大家都很喜欢。'],
  ['viking://resources/zh/party2.md', '圣诞节晚会上大家一起跳舞，还有魔术表演。'],
  ['viking://resources/zh/cat.md', '猫，小猫咪在窗台上晒太阳。'],
  ['viking://resources/zh/kite.md', '周末和家人去海边放风筝。'],
  ['viking://user/alice/memories/events/m1.md', 'Alice adopted a grey kitten named Pixel; notes from the shelter.'],
  ['viking://user/alice/memories/events/m2.md', '爱丽丝上周去东京旅行，买了很多猫咪玩具。'],
  ['viking://user/alice/memories/events/m3.md', 'Alice fixed the Redis timeout in the deployment pipeline last Friday.'],
  ['viking://user/alice/memories/events/m4.md', '爱丽丝的奶奶教她做苹果派。'],
];

/**
 * Register the VectorIndex contract tests.
 * @param name adapter name shown in test titles
 * @param makeIndex returns a ready index; called once per test, closed after it
 */
export function describeVectorIndexContract(name: string, makeIndex: () => Promise<VectorIndex>, opts: VectorIndexContractOptions = {}): void {
  describe(`VectorIndex contract: ${name}`, () => {
    let open: VectorIndex[] = [];
    afterEach(async () => {
      await Promise.all(open.map((i) => i.close()));
      open = [];
    });

    /** A fresh index, a fresh account, and helpers bound to both. */
    async function setup() {
      const index = await makeIndex();
      open.push(index);
      const embedder = new LexicalEmbedder({ dimension: index.dimension });
      const account = `acct-${randomUUID()}`;
      const rec = (uri: string, text: string, over: Partial<NodeRecord> = {}): NodeRecord => makeRecord(embedder, over.account ?? account, uri, text, over);
      const put = async (uri: string, text: string, over: Partial<NodeRecord> = {}): Promise<boolean> => index.replaceDocument(over.docUri ?? uri, [rec(uri, text, over)]);
      const vis = (over: Partial<Visibility> = {}): Visibility => ({ account, user: 'alice', actorPeer: null, openPeers: false, allUsers: false, workspace: null, ...over });
      const query = (text: string, over: Partial<SearchQuery> = {}): SearchQuery => ({
        visibility: vis(),
        vector: text === '' ? null : embedder.embedOne(text),
        text,
        targets: [],
        filter: null,
        limit: 20,
        ...over,
      });
      const search = async (text: string, over: Partial<SearchQuery> = {}): Promise<SearchHit[]> => (await index.search([query(text, over)]))[0];
      const uris = async (text: string, over: Partial<SearchQuery> = {}): Promise<string[]> => (await search(text, over)).map((h) => h.node.uri).sort();
      return { index, embedder, account, rec, put, vis, query, search, uris };
    }

    const U = 'viking://user/alice';
    /** Sorted copy, to compare URI sets. */
    const S = (a: string[]): string[] => [...a].sort();
    const COMMON = 'shared marker quartz';

    describe('replaceDocument', () => {
      it('inserts a document and makes it searchable', async () => {
        const t = await setup();
        expect(await t.put(`${U}/memories/events/a.md`, 'Alice adopted a grey kitten named Pixel')).toBe(true);
        const hits = await t.search('grey kitten Pixel');
        expect(hits.map((h) => h.node.uri)).toEqual([`${U}/memories/events/a.md`]);
        expect(hits[0].node.abstract).toBe('Alice adopted a grey kitten named Pixel');
      });

      it('is idempotent by content hash: the same hash changes nothing and returns false', async () => {
        const t = await setup();
        const uri = `${U}/memories/events/a.md`;
        expect(await t.put(uri, 'first version about sailing')).toBe(true);
        expect(await t.index.replaceDocument(uri, [t.rec(uri, 'first version about sailing', { title: 'changed title' })])).toBe(false);
        const [got] = await t.index.get([uri], t.vis(), 'summary');
        expect(got?.title).toBe('a.md');
        expect(await t.index.stats(t.account)).toEqual({ points: 1, documents: 1 });
      });

      it('reads a point at each field set: summary, content (overview and body, no vector or lexical text) and full', async () => {
        const t = await setup();
        const uri = 'viking://resources/fields/guide.md';
        await t.put(uri, 'check the pressure gauge daily', { overview: '## Gauge\nDaily checks.' });
        const [summary] = await t.index.get([uri], t.vis(), 'summary');
        const [content] = await t.index.get([uri, 'viking://resources/fields/none.md'], t.vis(), 'content');
        const [full] = (await t.index.get([uri], t.vis(), 'full')) as NodeRecord[];
        expect(summary).not.toHaveProperty('body');
        expect(content).toMatchObject({ uri, abstract: summary?.abstract, overview: '## Gauge\nDaily checks.', body: 'check the pressure gauge daily' });
        expect(content).not.toHaveProperty('vector');
        expect(content).not.toHaveProperty('lexicalText');
        expect({ ...content, overview: undefined, body: undefined }).toEqual({ ...summary, overview: undefined, body: undefined });
        expect(full.body).toBe('check the pressure gauge daily');
        expect(full.vector.length).toBeGreaterThan(0);
        expect(await t.index.get(['viking://resources/fields/none.md'], t.vis(), 'content')).toEqual([null]);
      });

      it('replaces every point of a document when the hash changes', async () => {
        const t = await setup();
        const doc = 'viking://resources/guide.md';
        const passages = (texts: string[], hash: string) =>
          texts.map((x, i) => t.rec(`${doc}#p${i}`, x, { docUri: doc, passageIndex: i, contentHash: hash }));
        expect(await t.index.replaceDocument(doc, passages(['install the compressor', 'configure the valve', 'drain the tank'], 'v1'))).toBe(true);
        expect((await t.index.getDocument(doc, t.vis())).map((r) => r.uri)).toEqual([`${doc}#p0`, `${doc}#p1`, `${doc}#p2`]);
        expect(await t.index.replaceDocument(doc, passages(['calibrate the gauge'], 'v2'))).toBe(true);
        const after = await t.index.getDocument(doc, t.vis());
        expect(after.map((r) => [r.uri, r.body, r.contentHash])).toEqual([[`${doc}#p0`, 'calibrate the gauge', 'v2']]);
        expect(await t.uris('drain the tank valve compressor', { vector: null })).toEqual([]);
      });

      it('is atomic: a failing batch leaves the previous version whole and nothing new searchable', async () => {
        const t = await setup();
        const doc = 'viking://resources/atomic.md';
        await t.index.replaceDocument(doc, [t.rec(`${doc}#p0`, 'original alpha content', { docUri: doc, contentHash: 'v1' })]);
        const bad = t.rec(`${doc}#p1`, 'broken beta content', { docUri: doc, contentHash: 'v2', vector: new Float32Array(3) });
        const good = t.rec(`${doc}#p0`, 'replacement gamma content', { docUri: doc, contentHash: 'v2' });
        await expect(t.index.replaceDocument(doc, [good, bad])).rejects.toThrow();
        expect((await t.index.getDocument(doc, t.vis())).map((r) => r.body)).toEqual(['original alpha content']);
        expect(await t.uris('replacement gamma', { vector: null })).toEqual([]);
        expect(await t.uris('broken beta', { vector: null })).toEqual([]);
        expect(await t.uris('original alpha', { vector: null })).toEqual([`${doc}#p0`]);
      });

      it('rejects records of another document', async () => {
        const t = await setup();
        await expect(t.index.replaceDocument('viking://resources/a.md', [t.rec('viking://resources/b.md', 'x y z')])).rejects.toThrow();
      });

      it('refuses an empty record list (it names no account) and keeps the document', async () => {
        const t = await setup();
        await t.put('viking://resources/kept.md', 'durable content');
        await expect(t.index.replaceDocument('viking://resources/kept.md', [])).rejects.toThrow(/deleteDocument/);
        expect(await t.index.exists('viking://resources/kept.md', t.vis())).toBe(true);
      });

      it('rejects records of several accounts before writing anything', async () => {
        const t = await setup();
        const doc = 'viking://resources/mixed.md';
        const mixed = [t.rec(`${doc}#p0`, 'first tenant passage', { docUri: doc }), t.rec(`${doc}#p1`, 'second tenant passage', { docUri: doc, passageIndex: 1, account: `b-${t.account}` })];
        await expect(t.index.replaceDocument(doc, mixed)).rejects.toThrow();
        expect(await t.index.exists(doc, t.vis())).toBe(false);
        expect(await t.index.exists(doc, t.vis({ account: `b-${t.account}` }))).toBe(false);
      });
    });

    describe('replaceDocuments', () => {
      it('writes several documents in one call, each as replaceDocument would, later ones seeing earlier ones', async () => {
        const t = await setup();
        const a = 'viking://resources/batch/a.md';
        const b = 'viking://resources/batch/b.md';
        await t.put(a, 'old alpha text', { contentHash: 'a1' });
        await t.put(b, 'unchanged beta text', { contentHash: 'b1' });
        const c = 'viking://resources/batch/c.md';
        const out = await t.index.replaceDocuments([
          { docUri: a, records: [t.rec(a, 'new alpha text', { contentHash: 'a2' })] },
          { docUri: b, records: [t.rec(b, 'unchanged beta text', { contentHash: 'b1' })] },
          { docUri: c, records: [t.rec(c, 'fresh gamma text', { contentHash: 'c1' })] },
        ]);
        expect(out).toEqual([true, false, true]);
        const again = await t.index.replaceDocuments([
          { docUri: a, records: [t.rec(a, 'newer alpha text', { contentHash: 'a3' })] },
          { docUri: a, records: [t.rec(a, 'newest alpha text', { contentHash: 'a4' })] },
        ]);
        expect(again).toEqual([true, true]);
        const got = await t.index.get([a, b, c], t.vis(), 'full');
        expect(got.map((r) => (r as NodeRecord | null)?.body)).toEqual(['newest alpha text', 'unchanged beta text', 'fresh gamma text']);
        expect(await t.uris('gamma', { vector: null })).toEqual([c]);
        expect(await t.uris('old alpha', { vector: null })).toEqual([a]);
        expect((await t.search('old alpha', { vector: null }))[0]!.node.abstract).toBe('newest alpha text');
        expect(await t.index.stats(t.account)).toEqual({ points: 3, documents: 3 });
      });

      it('validates every document first: one bad document writes nothing of the batch', async () => {
        const t = await setup();
        const a = 'viking://resources/batch/ok.md';
        const bad = 'viking://resources/batch/bad.md';
        await expect(
          t.index.replaceDocuments([
            { docUri: a, records: [t.rec(a, 'valid delta text')] },
            { docUri: bad, records: [t.rec(bad, 'broken vector text', { vector: new Float32Array(3) })] },
          ]),
        ).rejects.toThrow();
        expect(await t.index.exists(a, t.vis())).toBe(false);
        expect(await t.uris('valid delta', { vector: null })).toEqual([]);
        expect(await t.index.replaceDocuments([])).toEqual([]);
      });
    });

    describe('deleteDocument', () => {
      it('removes one document and reports the points removed', async () => {
        const t = await setup();
        const doc = 'viking://resources/manual.md';
        await t.index.replaceDocument(doc, [0, 1].map((i) => t.rec(`${doc}#p${i}`, `manual part ${i}`, { docUri: doc, passageIndex: i, contentHash: 'm' })));
        await t.put('viking://resources/other.md', 'other manual text');
        expect(await t.index.deleteDocument(t.account, doc)).toBe(2);
        expect(await t.index.exists(doc, t.vis())).toBe(false);
        expect(await t.index.exists('viking://resources/other.md', t.vis())).toBe(true);
      });

      it('removes a whole subtree, and only that subtree', async () => {
        const t = await setup();
        await t.put('viking://resources/proj/a.md', 'alpha');
        await t.put('viking://resources/proj/sub/b.md', 'beta');
        await t.put('viking://resources/proj/.abstract.md', 'project abstract', { level: 0 });
        await t.put('viking://resources/project2/c.md', 'gamma');
        expect(await t.index.deleteDocument(t.account, 'viking://resources/proj', { subtree: true })).toBe(3);
        expect(await t.index.exists('viking://resources/proj', t.vis())).toBe(false);
        expect(await t.index.exists('viking://resources/project2/c.md', t.vis())).toBe(true);
      });
    });

    describe('tenancy: two accounts holding the same URI', () => {
      /** The suite's account (A) and a second one (B), both fresh, and helpers for B. */
      async function twoAccounts() {
        const t = await setup();
        const b = `b-${t.account}`;
        const recB = (uri: string, text: string, over: Partial<NodeRecord> = {}): NodeRecord => t.rec(uri, text, { ...over, account: b });
        const putB = (uri: string, text: string, over: Partial<NodeRecord> = {}): Promise<boolean> => t.index.replaceDocument(over.docUri ?? uri, [recB(uri, text, over)]);
        const visB = (over: Partial<Visibility> = {}): Visibility => t.vis({ ...over, account: b });
        return { ...t, b, recB, putB, visB };
      }
      const R = 'viking://resources/shared/a.md';

      it('write: the second account gets its own point and the first keeps its own', async () => {
        const t = await twoAccounts();
        expect(await t.put(R, 'alpha tenant notes about lighthouses')).toBe(true);
        expect(await t.putB(R, 'beta tenant notes about volcanoes')).toBe(true);
        const [a] = (await t.index.get([R], t.vis(), 'full')) as NodeRecord[];
        const [b] = (await t.index.get([R], t.visB(), 'full')) as NodeRecord[];
        expect([a.account, a.body]).toEqual([t.account, 'alpha tenant notes about lighthouses']);
        expect([b.account, b.body]).toEqual([t.b, 'beta tenant notes about volcanoes']);
        expect(await t.index.stats(t.account)).toEqual({ points: 1, documents: 1 });
        expect(await t.index.stats(t.b)).toEqual({ points: 1, documents: 1 });
      });

      it('write: the same content in both accounts is written twice, not skipped as already stored', async () => {
        const t = await twoAccounts();
        const doc = 'viking://resources/shared/same.md';
        const passages = (rec: typeof t.rec) => [0, 1].map((i) => rec(`${doc}#p${i}`, `identical passage ${i}`, { docUri: doc, passageIndex: i, contentHash: 'same-hash' }));
        expect(await t.index.replaceDocument(doc, passages(t.rec))).toBe(true);
        expect(await t.index.replaceDocument(doc, passages(t.recB))).toBe(true);
        expect((await t.index.getDocument(doc, t.vis())).map((r) => [r.uri, r.account])).toEqual([[`${doc}#p0`, t.account], [`${doc}#p1`, t.account]]);
        expect((await t.index.getDocument(doc, t.visB())).map((r) => [r.uri, r.account])).toEqual([[`${doc}#p0`, t.b], [`${doc}#p1`, t.b]]);
        expect(await t.index.replaceDocument(doc, passages(t.recB))).toBe(false);
      });

      it('replace: a new version in one account leaves the other account’s version whole', async () => {
        const t = await twoAccounts();
        const doc = 'viking://resources/shared/guide.md';
        const version = (rec: typeof t.rec, hash: string, texts: string[]) => texts.map((x, i) => rec(`${doc}#p${i}`, x, { docUri: doc, passageIndex: i, contentHash: hash }));
        await t.index.replaceDocument(doc, version(t.rec, 'a1', ['install the compressor', 'configure the valve', 'drain the tank']));
        await t.index.replaceDocument(doc, version(t.recB, 'b1', ['feed the goldfish', 'clean the aquarium']));
        expect(await t.index.replaceDocument(doc, version(t.rec, 'a2', ['calibrate the gauge']))).toBe(true);
        expect((await t.index.getDocument(doc, t.vis())).map((r) => r.body)).toEqual(['calibrate the gauge']);
        expect((await t.index.getDocument(doc, t.visB())).map((r) => r.body)).toEqual(['feed the goldfish', 'clean the aquarium']);
        expect(await t.index.stats(t.b)).toEqual({ points: 2, documents: 1 });
      });

      it('replace: a URI moving to another document moves only within its own account', async () => {
        const t = await twoAccounts();
        const moved = 'viking://resources/shared/moved.md#p0';
        await t.index.replaceDocument('viking://resources/shared/old.md', [t.rec(moved, 'alpha passage before the move', { docUri: 'viking://resources/shared/old.md' })]);
        await t.index.replaceDocument('viking://resources/shared/new.md', [t.recB(moved, 'beta passage in its new home', { docUri: 'viking://resources/shared/new.md' })]);
        const [a] = (await t.index.get([moved], t.vis(), 'summary')) as NodeSummary[];
        expect(a.docUri).toBe('viking://resources/shared/old.md');
        // Within account A the URI does move, and the old document loses it.
        await t.index.replaceDocument('viking://resources/shared/new.md', [t.rec(moved, 'alpha passage after the move', { docUri: 'viking://resources/shared/new.md' })]);
        expect(await t.index.getDocument('viking://resources/shared/old.md', t.vis())).toEqual([]);
        const [b] = (await t.index.get([moved], t.visB(), 'full')) as NodeRecord[];
        expect([b.docUri, b.body]).toEqual(['viking://resources/shared/new.md', 'beta passage in its new home']);
      });

      it('search, get, vectors and exists each answer from the caller’s account only', async () => {
        const t = await twoAccounts();
        await t.put(R, `${COMMON} alpha lighthouse keeper`);
        await t.putB(R, `${COMMON} beta volcano observer`);
        const [hitA] = await t.search(COMMON);
        const [hitB] = await t.search(COMMON, { visibility: t.visB() });
        expect([hitA.node.account, hitA.node.abstract]).toEqual([t.account, `${COMMON} alpha lighthouse keeper`]);
        expect([hitB.node.account, hitB.node.abstract]).toEqual([t.b, `${COMMON} beta volcano observer`]);
        expect(await t.uris('volcano observer', { vector: null })).toEqual([]);
        expect(await t.uris('lighthouse keeper', { vector: null, visibility: t.visB() })).toEqual([]);
        const [vA] = await t.index.vectors([R], t.vis());
        const [vB] = await t.index.vectors([R], t.visB());
        const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i], 0);
        expect(cos(vA as Float32Array, t.embedder.embedOne(`${COMMON} alpha lighthouse keeper`))).toBeCloseTo(1, 4);
        expect(cos(vB as Float32Array, t.embedder.embedOne(`${COMMON} beta volcano observer`))).toBeCloseTo(1, 4);
        expect(await t.index.exists('viking://resources/shared', t.visB())).toBe(true);
        expect(await t.index.exists('viking://resources/shared', t.vis({ account: `c-${t.account}` }))).toBe(false);
      });

      it('delete: deleting a document in one account leaves the other account’s point', async () => {
        const t = await twoAccounts();
        await t.put(R, 'alpha copy');
        await t.putB(R, 'beta copy');
        expect(await t.index.deleteDocument(t.account, R)).toBe(1);
        expect(await t.index.exists(R, t.vis())).toBe(false);
        expect(((await t.index.get([R], t.visB(), 'full')) as NodeRecord[])[0].body).toBe('beta copy');
        expect(await t.index.deleteDocument(t.account, R)).toBe(0);
      });

      it('delete: a subtree delete removes only the given account’s subtree', async () => {
        const t = await twoAccounts();
        for (const put of [t.put, t.putB]) {
          await put('viking://resources/proj/a.md', 'alpha file');
          await put('viking://resources/proj/sub/b.md', 'beta file');
        }
        await t.putB('viking://resources/project2/c.md', 'gamma file');
        expect(await t.index.deleteDocument(t.b, 'viking://resources/proj', { subtree: true })).toBe(2);
        expect(await t.index.exists('viking://resources/proj', t.visB())).toBe(false);
        expect(await t.index.exists('viking://resources/project2/c.md', t.visB())).toBe(true);
        expect(S((await t.index.get(['viking://resources/proj/a.md', 'viking://resources/proj/sub/b.md'], t.vis(), 'summary')).map((n) => n?.uri ?? 'gone'))).toEqual([
          'viking://resources/proj/a.md',
          'viking://resources/proj/sub/b.md',
        ]);
        expect(await t.index.stats(t.account)).toEqual({ points: 2, documents: 2 });
      });

      it('delete: an empty account is refused, not read as every account', async () => {
        const t = await twoAccounts();
        await t.put(R, 'alpha copy');
        await expect(t.index.deleteDocument('', R)).rejects.toThrow();
        expect(await t.index.exists(R, t.vis())).toBe(true);
      });

      it('stats of the whole index count a document per account', async () => {
        const t = await twoAccounts();
        const before = await t.index.stats();
        await t.put(R, 'alpha copy');
        await t.putB(R, 'beta copy');
        const after = await t.index.stats();
        expect({ points: after.points - before.points, documents: after.documents - before.documents }).toEqual({ points: 2, documents: 2 });
      });
    });

    describe('visibility', () => {
      async function world() {
        const t = await setup();
        await t.put(`${U}/memories/events/own.md`, `${COMMON} own memory`);
        await t.put('viking://user/bob/memories/events/bob.md', `${COMMON} bob memory`);
        await t.put('viking://resources/pub.md', `${COMMON} public resource`);
        await t.put('viking://agent/skills/s.md', `${COMMON} agent skill`);
        await t.put(`${U}/peers/p1/memories/events/x.md`, `${COMMON} peer one memory`);
        await t.put(`${U}/peers/p2/memories/events/y.md`, `${COMMON} peer two memory`);
        await t.put('viking://resources/pub-other.md', `${COMMON} other account`, { account: `other-${t.account}` });
        return t;
      }
      const base = [`${U}/memories/events/own.md`, 'viking://agent/skills/s.md', 'viking://resources/pub.md'];

      it('default scope: own space plus account-wide resources and agent; no other user, no peer, no other account', async () => {
        const t = await world();
        expect(await t.uris(COMMON)).toEqual(S(base));
      });

      it('an actor peer sees its own peer subtree only', async () => {
        const t = await world();
        expect(await t.uris(COMMON, { visibility: t.vis({ actorPeer: 'p1' }) })).toEqual([...base, `${U}/peers/p1/memories/events/x.md`].sort());
      });

      it('open peers sees every peer of the user', async () => {
        const t = await world();
        const got = await t.uris(COMMON, { visibility: t.vis({ openPeers: true }), targets: [`${U}/peers`] });
        expect(got).toEqual([`${U}/peers/p1/memories/events/x.md`, `${U}/peers/p2/memories/events/y.md`]);
      });

      it('other users stay invisible when targeted without allUsers', async () => {
        const t = await world();
        expect(await t.uris(COMMON, { targets: ['viking://user/bob'] })).toEqual(S([]));
        expect(await t.index.get(['viking://user/bob/memories/events/bob.md'], t.vis(), 'summary')).toEqual([null]);
      });

      it('allUsers sees another user only when targeted', async () => {
        const t = await world();
        const root = t.vis({ allUsers: true });
        expect(await t.uris(COMMON, { visibility: root })).toEqual(S(base));
        expect(await t.uris(COMMON, { visibility: root, targets: ['viking://user/bob'] })).toEqual(S(['viking://user/bob/memories/events/bob.md']));
      });

      it('another account is never visible, whatever the targets', async () => {
        const t = await world();
        expect(await t.uris(COMMON, { targets: ['viking://resources'], visibility: t.vis({ allUsers: true, openPeers: true }) })).toEqual(S(['viking://resources/pub.md']));
        expect(await t.index.exists('viking://resources/pub-other.md', t.vis())).toBe(false);
        expect(await t.index.get(['viking://resources/pub-other.md'], t.vis(), 'full')).toEqual([null]);
      });

      it('a workspace restricts every read to that workspace', async () => {
        const t = await setup();
        await t.put('viking://resources/ws-a.md', `${COMMON} in alpha`, { workspace: 'alpha' });
        await t.put('viking://resources/ws-b.md', `${COMMON} in beta`, { workspace: 'beta' });
        expect(await t.uris(COMMON, { visibility: t.vis({ workspace: 'alpha' }) })).toEqual(S(['viking://resources/ws-a.md']));
        expect(await t.uris(COMMON)).toEqual(S(['viking://resources/ws-a.md', 'viking://resources/ws-b.md']));
        expect(await t.index.exists('viking://resources/ws-b.md', t.vis({ workspace: 'alpha' }))).toBe(false);
      });
    });

    describe('targets', () => {
      it('are path prefixes: a target matches itself and its subtree, not a sibling sharing the prefix', async () => {
        const t = await setup();
        await t.put('viking://resources/docs/a.md', `${COMMON} a`);
        await t.put('viking://resources/docs-old/b.md', `${COMMON} b`);
        await t.put('viking://resources/docs', `${COMMON} docs node`);
        expect(await t.uris(COMMON, { targets: ['viking://resources/docs'] })).toEqual(S(['viking://resources/docs', 'viking://resources/docs/a.md']));
        expect(await t.uris(COMMON, { targets: ['viking://resources/docs/'] })).toEqual(S(['viking://resources/docs', 'viking://resources/docs/a.md']));
      });

      it('union several targets', async () => {
        const t = await setup();
        await t.put(`${U}/memories/events/e.md`, `${COMMON} event`);
        await t.put(`${U}/memories/entities/n.md`, `${COMMON} entity`);
        await t.put('viking://resources/r.md', `${COMMON} resource`);
        expect(await t.uris(COMMON, { targets: [`${U}/memories/events`, 'viking://resources'] })).toEqual(S([`${U}/memories/events/e.md`, 'viking://resources/r.md']));
      });
    });

    describe('filters', () => {
      async function tagged() {
        const t = await setup();
        await t.put(`${U}/memories/events/m1.md`, `${COMMON} one`, {
          tags: ['env=prod', 'team=search'],
          level: 2,
          subject: 'carol',
          updatedAt: Date.parse('2025-03-01T00:00:00Z'),
          createdAt: Date.parse('2024-01-01T00:00:00Z'),
        });
        await t.put('viking://resources/r1.md', `${COMMON} two`, {
          tags: ['env=dev'],
          level: 1,
          updatedAt: Date.parse('2025-06-01T00:00:00Z'),
          createdAt: Date.parse('2025-05-01T00:00:00Z'),
        });
        await t.put('viking://agent/skills/k1.md', `${COMMON} three`, { level: 0, updatedAt: Date.parse('2025-09-01T00:00:00Z') });
        return t;
      }
      const f = async (filter: FilterNode): Promise<string[]> => {
        const t = await tagged();
        return t.uris(COMMON, { filter });
      };

      it('must on context_type and category', async () => {
        expect(await f({ op: 'must', field: 'context_type', conds: ['memory', 'skill'] })).toEqual(S(['viking://agent/skills/k1.md', `${U}/memories/events/m1.md`]));
        expect(await f({ op: 'must', field: 'category', conds: ['resources'] })).toEqual(S(['viking://resources/r1.md']));
      });

      it('must_not excludes', async () => {
        expect(await f({ op: 'must_not', field: 'context_type', conds: ['memory'] })).toEqual(S(['viking://agent/skills/k1.md', 'viking://resources/r1.md']));
      });

      it('must on search_tags matches any tag', async () => {
        expect(await f({ op: 'must', field: 'search_tags', conds: ['env=prod'] })).toEqual(S([`${U}/memories/events/m1.md`]));
        expect(await f({ op: 'must', field: 'search_tags', conds: ['env=dev', 'team=search'] })).toEqual(S([`${U}/memories/events/m1.md`, 'viking://resources/r1.md']));
      });

      it('range on level', async () => {
        expect(await f({ op: 'range', field: 'level', gte: 1 })).toEqual(S([`${U}/memories/events/m1.md`, 'viking://resources/r1.md']));
        expect(await f({ op: 'range', field: 'level', lt: 1 })).toEqual(S(['viking://agent/skills/k1.md']));
      });

      it('time_range on updated_at and created_at with ISO bounds', async () => {
        expect(await f({ op: 'time_range', field: 'updated_at', gte: '2025-05-01T00:00:00.000Z', lte: '2025-07-01T00:00:00.000Z' })).toEqual(S(['viking://resources/r1.md']));
        expect(await f({ op: 'time_range', field: 'created_at', lte: '2024-12-31T23:59:59.999Z' })).toEqual(S([`${U}/memories/events/m1.md`]));
      });

      it('prefix on uri', async () => {
        expect(await f({ op: 'prefix', field: 'uri', prefix: 'viking://agent/' })).toEqual(S(['viking://agent/skills/k1.md']));
      });

      it('must on subject, doc_uri and workspace', async () => {
        expect(await f({ op: 'must', field: 'subject', conds: ['carol'] })).toEqual(S([`${U}/memories/events/m1.md`]));
        expect(await f({ op: 'must', field: 'doc_uri', conds: ['viking://resources/r1.md'] })).toEqual(S(['viking://resources/r1.md']));
        expect(await f({ op: 'must', field: 'workspace', conds: ['elsewhere'] })).toEqual(S([]));
      });

      it('and / or nest', async () => {
        const filter: FilterNode = {
          op: 'or',
          conds: [
            { op: 'and', conds: [{ op: 'must', field: 'context_type', conds: ['resource'] }, { op: 'must', field: 'search_tags', conds: ['env=dev'] }] },
            { op: 'range', field: 'level', lte: 0 },
          ],
        };
        expect(await f(filter)).toEqual(S(['viking://agent/skills/k1.md', 'viking://resources/r1.md']));
      });
    });

    describe('levels and asOf', () => {
      it('keeps only the requested levels', async () => {
        const t = await setup();
        await t.put('viking://resources/d/.abstract.md', `${COMMON} abstract`, { level: 0 });
        await t.put('viking://resources/d/.overview.md', `${COMMON} overview`, { level: 1 });
        await t.put('viking://resources/d/f.md', `${COMMON} file`, { level: 2 });
        expect(await t.uris(COMMON, { levels: [0, 2] })).toEqual(S(['viking://resources/d/.abstract.md', 'viking://resources/d/f.md']));
        expect(await t.uris(COMMON, { levels: [] })).toHaveLength(3);
      });

      it('asOf keeps validFrom ≤ asOf < validTo with open ends', async () => {
        const t = await setup();
        const T = (s: string) => Date.parse(s);
        await t.put('viking://resources/old.md', `${COMMON} old fact`, { validFrom: T('2020-01-01T00:00:00Z'), validTo: T('2023-01-01T00:00:00Z') });
        await t.put('viking://resources/cur.md', `${COMMON} current fact`, { validFrom: T('2023-01-01T00:00:00Z'), validTo: null });
        await t.put('viking://resources/always.md', `${COMMON} timeless fact`, { validFrom: null, validTo: null });
        await t.put('viking://resources/until.md', `${COMMON} until fact`, { validFrom: null, validTo: T('2022-06-01T00:00:00Z') });
        expect(await t.uris(COMMON, { asOf: T('2022-01-01T00:00:00Z') })).toEqual(S(['viking://resources/always.md', 'viking://resources/old.md', 'viking://resources/until.md']));
        // The end is exclusive and the start inclusive.
        expect(await t.uris(COMMON, { asOf: T('2023-01-01T00:00:00Z') })).toEqual(S(['viking://resources/always.md', 'viking://resources/cur.md']));
        expect(await t.uris(COMMON, { asOf: null })).toHaveLength(4);
      });
    });

    describe('one ranking on every engine', () => {
      const reference = opts.reference ?? { name: `another ${name} index`, open: makeIndex };

      it(`ranks and scores a shared English and Chinese corpus as ${reference.name} does: same top-10 order, scores within 1e-6`, async () => {
        const t = await setup();
        const ref = await reference.open();
        open.push(ref);
        expect(ref.dimension).toBe(t.index.dimension);
        // Another account: a reference on a shared collection must not see the subject's rows.
        const refAccount = `ref-${t.account}`;
        for (const [uri, text] of RANKING_CORPUS) await t.put(uri, text);
        for (const [uri, text] of [...RANKING_CORPUS].reverse()) await ref.replaceDocument(uri, [t.rec(uri, text, { account: refAccount })]);
        const queries: Array<[string, Partial<SearchQuery>]> = [
          ['Redis connection timeout during deployment startup', {}],
          ['部署流水线失败了，因为启动时Redis连接超时。', {}],
          ['harbor harbor harbor harbor harbor lighthouse', {}],
          ['Why did the deployment pipeline fail at startup?', { scoreThreshold: 0.35 }],
          ['grandmother apple pie Sunday', { scoreThreshold: 0.35 }],
          ['奶奶 苹果派', { scoreThreshold: 0.3 }],
          ['魔术 晚会 Bart', {}],
          ['小猫咪 猫', {}],
          ['Trip to 东京 next week', { limit: 3 }],
          ['lighthouse keeper notes', { vector: null }],
          ['猫咪 东京', { vector: null, scoreThreshold: 0.2 }],
          ['notes', { targets: ['viking://resources/en'] }],
          ['', { vector: t.embedder.embedOne('Redis deployment timeout') }],
        ];
        const run = (index: VectorIndex, account: string) =>
          index.search(queries.map(([text, over]) => t.query(text, { limit: 10, ...over, visibility: t.vis({ account }) })));
        const [got, want] = await Promise.all([run(t.index, t.account), run(ref, refAccount)]);
        queries.forEach(([text], i) => {
          const a = got[i].map((h) => [h.node.uri, h.score] as const);
          const b = want[i].map((h) => [h.node.uri, h.score] as const);
          expect({ text, uris: a.map(([u]) => u) }).toEqual({ text, uris: b.map(([u]) => u) });
          a.forEach(([, score], j) => {
            if (Math.abs(score - b[j][1]) > 1e-6) throw new Error(`${JSON.stringify(text)}: hit ${j} scores ${score} here and ${b[j][1]} in ${reference.name}`);
          });
        });
        // The corpus exercises the ranking: every query finds something, thresholds cut, limits hold.
        expect(got.every((hits) => hits.length > 0)).toBe(true);
        expect(got[3].length).toBeLessThan(10);
        expect(got[8]).toHaveLength(3);
        expect(got[0][0].node.uri).toMatch(/deploy|m3/);
        expect(got[1][0].node.uri).toBe('viking://resources/zh/deploy.md');
      });
    });

    describe('scores and order', () => {
      async function corpus() {
        const t = await setup();
        await t.put('viking://resources/en1.md', 'The deployment pipeline failed because the Redis connection timed out during startup.');
        await t.put('viking://resources/en2.md', 'My grandmother bakes an apple pie every Sunday afternoon.');
        await t.put('viking://resources/en3.md', 'Quarterly revenue grew thanks to the new pricing model.');
        await t.put('viking://resources/zh1.md', '部署流水线因为启动时Redis连接超时而失败。');
        await t.put('viking://resources/zh2.md', '我奶奶每个星期天下午都会烤苹果派。');
        await t.put('viking://resources/zh3.md', '元旦晚会上Bart表演了魔术，大家都很喜欢。');
        return t;
      }

      it('are in [0, 1] and come back best first', async () => {
        const t = await corpus();
        const hits = await t.search('Redis connection timeout during deployment startup');
        expect(hits.length).toBeGreaterThan(0);
        for (const h of hits) {
          expect(h.score).toBeGreaterThanOrEqual(0);
          expect(h.score).toBeLessThanOrEqual(1);
        }
        for (let i = 1; i < hits.length; i++) expect(hits[i].score).toBeLessThanOrEqual(hits[i - 1].score);
        expect(hits[0].node.uri).toBe('viking://resources/en1.md');
      });

      it.each([
        ['English', 'The deploy pipeline fails when the Redis connection times out at startup.', 'viking://resources/en1.md'],
        ['Chinese', '部署流水线失败了，因为启动时Redis连接超时。', 'viking://resources/zh1.md'],
      ])('score a near-verbatim %s match well above 0.35 and unrelated texts below it', async (_lang, q, want) => {
        const t = await corpus();
        const hits = await t.search(q);
        expect(hits[0].node.uri).toBe(want);
        expect(hits[0].score).toBeGreaterThan(0.5);
        for (const h of hits.slice(1)) {
          if (h.node.uri === 'viking://resources/en1.md' || h.node.uri === 'viking://resources/zh1.md') continue;
          expect(h.score).toBeLessThan(0.35);
        }
      });

      it('apply scoreThreshold to the returned score', async () => {
        const t = await corpus();
        const all = await t.search('The deploy pipeline fails when the Redis connection times out at startup.');
        const kept = await t.search('The deploy pipeline fails when the Redis connection times out at startup.', { scoreThreshold: 0.35 });
        expect(kept.length).toBeGreaterThan(0);
        expect(kept.length).toBeLessThan(all.length);
        expect(kept.every((h) => h.score >= 0.35)).toBe(true);
      });

      it('honour limit', async () => {
        const t = await corpus();
        expect(await t.search('Redis pipeline apple pie revenue', { limit: 2 })).toHaveLength(2);
        expect(await t.search('Redis pipeline', { limit: 0 })).toEqual([]);
      });

      it('count documents with `documents`: the hits of the first `limit` documents of the pool a caller would collapse', async () => {
        const t = await setup();
        const D = 'viking://resources/long.md';
        const passages = Array.from({ length: 4 }, (_, i) => t.rec(`${D}#p${i + 1}`, `quartz marker alpha lantern ${'y'.repeat(i + 1)}`, { docUri: D, passageIndex: i + 1 }));
        await t.index.replaceDocument(D, [t.rec(D, 'an unrelated title', { docUri: D }), ...passages]);
        for (const n of [1, 2, 3]) await t.put(`viking://resources/single${n}.md`, `quartz marker beta ${'x'.repeat(n)}`);
        const docOf = (h: SearchHit) => h.node.docUri || h.node.uri;
        /** Passages collapsed into their documents: [document, best score] in order. */
        const collapse = (hits: SearchHit[]) => {
          const best = new Map<string, number>();
          for (const h of hits) best.set(docOf(h), Math.max(best.get(docOf(h)) ?? -1, h.score));
          return [...best];
        };
        const q = 'quartz marker alpha lantern';
        // The pool for two documents is six rows: the passages take most of it.
        const rows = await t.search(q, { limit: 6 });
        const hits = await t.search(q, { limit: 2, documents: true });
        expect(collapse(hits)).toEqual(collapse(rows).slice(0, 2));
        expect(collapse(hits)[0]![0]).toBe(D);
        expect(hits.map((h) => h.node.uri)).toEqual(rows.slice(0, hits.length).map((h) => h.node.uri));
        expect(hits.filter((h) => docOf(h) === D).length).toBeGreaterThan(1);
        expect(new Set(hits.map(docOf)).size).toBe(2);
        // Never more than `limit` documents, and fewer only when fewer match.
        expect(new Set((await t.search(q, { limit: 1, documents: true })).map(docOf))).toEqual(new Set([D]));
        expect(new Set((await t.search('quartz marker', { limit: 10, documents: true })).map(docOf)).size).toBe(4);
      });
    });

    describe('lexical leg', () => {
      it('finds an English word with no query vector', async () => {
        const t = await setup();
        await t.put('viking://resources/a.md', 'Configure the Kubernetes ingress controller');
        await t.put('viking://resources/b.md', 'Bake sourdough bread');
        const hits = await t.search('ingress', { vector: null });
        expect(hits.map((h) => h.node.uri)).toEqual(['viking://resources/a.md']);
        expect(hits[0].score).toBeGreaterThan(0);
        expect(hits[0].score).toBeLessThanOrEqual(1);
      });

      it('finds a two-character Chinese word inside a longer run with no query vector', async () => {
        const t = await setup();
        await t.put('viking://resources/zh-a.md', '元旦晚会上我要表演魔术给大家看');
        await t.put('viking://resources/zh-b.md', '圣诞节晚会上大家一起跳舞');
        await t.put('viking://resources/zh-c.md', '周末和家人去海边放风筝');
        expect((await t.search('魔术', { vector: null })).map((h) => h.node.uri)).toEqual(['viking://resources/zh-a.md']);
        expect((await t.search('晚会', { vector: null })).map((h) => h.node.uri).sort()).toEqual(['viking://resources/zh-a.md', 'viking://resources/zh-b.md']);
        expect(await t.search('火车', { vector: null })).toEqual([]);
      });

      it('matches inflections through the shared stemmer', async () => {
        const t = await setup();
        await t.put('viking://resources/p.md', 'She danced at both parties');
        expect((await t.search('dancing party', { vector: null })).map((h) => h.node.uri)).toEqual(['viking://resources/p.md']);
      });

      it('dense-only search works with empty text', async () => {
        const t = await setup();
        await t.put('viking://resources/d.md', 'vector only retrieval target');
        const q = t.query('vector only retrieval target', { text: '' });
        const [hits] = await t.index.search([q]);
        expect(hits[0].node.uri).toBe('viking://resources/d.md');
        expect(hits[0].score).toBeGreaterThan(0.9);
      });
    });

    describe('search batch', () => {
      it('returns results aligned with the queries', async () => {
        const t = await setup();
        await t.put(`${U}/memories/events/e.md`, 'trip to the mountains');
        await t.put('viking://resources/r.md', 'mountain bike repair guide');
        const res = await t.index.search([
          t.query('mountain', { targets: ['viking://resources'] }),
          t.query('mountain', { targets: [`${U}/memories`] }),
          t.query('nothing matches this zebra', { targets: ['viking://agent'] }),
          t.query('mountain', { targets: ['viking://resources'] }),
          t.query('mountain', { targets: ['viking://resources'], withOverview: true }),
        ]);
        expect(res.map((r) => r.map((h) => h.node.uri))).toEqual([['viking://resources/r.md'], [`${U}/memories/events/e.md`], [], ['viking://resources/r.md'], ['viking://resources/r.md']]);
        expect(res[3][0].score).toBe(res[0][0].score);
        expect(res[3][0].node.overview).toBeUndefined();
        expect(res[4][0].node.overview).toBe('overview of mountain bike repair guide');
      });
    });

    describe('reads', () => {
      it('get returns summaries without body and full records with body and vector', async () => {
        const t = await setup();
        const uri = `${U}/memories/events/g.md`;
        await t.put(uri, 'get me back', { tags: ['k=v'], links: ['viking://resources/x.md'] });
        const [summary, missing] = await t.index.get([uri, `${U}/memories/events/none.md`], t.vis(), 'summary');
        expect(missing).toBeNull();
        expect(summary).toMatchObject({ uri, docUri: uri, abstract: 'get me back', tags: ['k=v'], links: ['viking://resources/x.md'], owner: 'alice', account: t.account });
        expect(summary as object).not.toHaveProperty('body');
        expect(summary as object).not.toHaveProperty('vector');
        const [full] = (await t.index.get([uri], t.vis(), 'full')) as NodeRecord[];
        expect(full.body).toBe('get me back');
        expect(full.overview).toBe('overview of get me back');
        expect(full.vector).toBeInstanceOf(Float32Array);
        expect(full.vector).toHaveLength(t.index.dimension);
      });

      it('withOverview adds the overview to search hits', async () => {
        const t = await setup();
        await t.put('viking://resources/o.md', 'overview carrier text');
        const [plain] = await t.search('overview carrier text');
        const [rich] = await t.search('overview carrier text', { withOverview: true });
        expect((plain.node as NodeSummary).overview).toBeUndefined();
        expect(rich.node.overview).toBe('overview of overview carrier text');
      });

      it('vectors returns the stored vectors and null where missing or invisible', async () => {
        const t = await setup();
        await t.put('viking://resources/v.md', 'vector payload');
        await t.put('viking://user/bob/memories/events/v.md', 'hidden vector');
        const [v, none, hidden] = await t.index.vectors(['viking://resources/v.md', 'viking://resources/none.md', 'viking://user/bob/memories/events/v.md'], t.vis());
        const want = t.embedder.embedOne('vector payload');
        expect(v).toHaveLength(t.index.dimension);
        let dot = 0;
        for (let i = 0; i < want.length; i++) dot += want[i] * (v as Float32Array)[i];
        expect(dot).toBeCloseTo(1, 4);
        expect(none).toBeNull();
        expect(hidden).toBeNull();
      });

      it('exists is true for a point or any point below the URI', async () => {
        const t = await setup();
        await t.put('viking://resources/tree/leaf.md', 'leaf');
        expect(await t.index.exists('viking://resources/tree/leaf.md', t.vis())).toBe(true);
        expect(await t.index.exists('viking://resources/tree', t.vis())).toBe(true);
        expect(await t.index.exists('viking://resources/tre', t.vis())).toBe(false);
      });

      it('stats counts points and documents per account', async () => {
        const t = await setup();
        const doc = 'viking://resources/s.md';
        await t.index.replaceDocument(doc, [0, 1, 2].map((i) => t.rec(`${doc}#p${i}`, `passage ${i}`, { docUri: doc, passageIndex: i, contentHash: 's' })));
        await t.put('viking://resources/s2.md', 'single');
        expect(await t.index.stats(t.account)).toEqual({ points: 4, documents: 2 });
        expect(await t.index.stats(`nobody-${t.account}`)).toEqual({ points: 0, documents: 0 });
      });

      it('ping answers true while open', async () => {
        const t = await setup();
        expect(await t.index.ping()).toBe(true);
      });
    });
  });
}
