import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LexicalEmbedder, lexicalTermCounts } from '@ctxmesh/embedder';
import { describeVectorIndexContract, makeRecord } from '../contract/vector-index.contract';
import type { NodeRecord, Visibility } from '../ports/vector-index';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import fc from 'fast-check';
import { IndexDimensionMismatchError, InvalidRecordError, UnsupportedFilterError } from '../ports/errors';
import { EmbeddedVectorIndex, IndexClosedError, IndexSchemaMismatchError, TopK } from './vector-index';

const dbs: EmbeddedDb[] = [];
afterAll(() => {
  for (const db of dbs) db.close();
});

describeVectorIndexContract('embedded (SQLite in memory)', async () => {
  const db = openEmbeddedDb(':memory:');
  dbs.push(db);
  return new EmbeddedVectorIndex(db, { dimension: 256 });
});

/**
 * Either-class document frequencies of an account as the ranking reads them: one-code-point
 * terms from `vi_terms`, longer ones from the lexical index's main class (its tail merged
 * first); and `vi_terms` must hold no longer term.
 */
async function eitherDf(index: EmbeddedVectorIndex, db: EmbeddedDb, account: string): Promise<Record<string, number>> {
  await index.optimize();
  expect(db.prepare('SELECT term FROM vi_terms WHERE length(term) > 1').all()).toEqual([]);
  const rows = [
    ...(db.prepare('SELECT term, df FROM vi_terms WHERE account = ?').all(account) as Array<{ term: string; df: number }>),
    ...(db.prepare('SELECT term, df FROM vi_lex_terms WHERE account = ? AND cls = 0 AND length(term) > 1 AND df > 0').all(account) as Array<{ term: string; df: number }>),
  ];
  return Object.fromEntries(rows.sort((a, b) => (a.term < b.term ? -1 : 1)).map((r) => [r.term, r.df]));
}

describe('EmbeddedVectorIndex', () => {
  const embedder = new LexicalEmbedder({ dimension: 256 });
  const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ctxmesh-vi-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers a search whose scope holds no rows without running either leg (a peer scan of a user without peers)', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256 });
    for (let i = 0; i < 40; i++) {
      const uri = `viking://user/u/memories/events/m${i}.md`;
      await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, `the lighthouse keeper logged storm ${i}`)]);
    }
    const q = (targets: string[]) => ({ visibility: vis, vector: embedder.embedOne('lighthouse storm'), text: 'lighthouse storm', targets, filter: null, limit: 10 });
    const [mine] = await index.search([q([])]);
    expect(mine).toHaveLength(10);
    const before = index.lexicalStats();
    expect(await index.search([q(['viking://user/u/peers'])])).toEqual([[]]);
    // The empty scope touched no posting (before, its lexical leg walked every one of both terms).
    expect(index.lexicalStats()).toEqual(before);
  });

  it('hands the passage hits of a search counting documents their document point, when it did not hit and is visible', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256 });
    const put = async (doc: string, owner: Partial<NodeRecord> = {}) => {
      const passages = [1, 2].map((i) => makeRecord(embedder, 'a', `${doc}#p${i}`, `lighthouse keeper storm log ${i}`, { docUri: doc, passageIndex: i }));
      await index.replaceDocument(doc, [makeRecord(embedder, 'a', doc, 'an unrelated title', { docUri: doc, abstract: `abstract of ${doc}`, ...owner }), ...passages]);
    };
    const mine = 'viking://resources/guide.md';
    const other = 'viking://resources/theirs.md';
    await put(mine);
    // Its passages are account-wide, its document point is another user's.
    await put(other, { owner: 'v' });
    const q = { visibility: vis, vector: embedder.embedOne('lighthouse storm'), text: 'lighthouse storm', targets: [], filter: null, limit: 10 };
    // The threshold keeps the unrelated document points from hitting themselves.
    const [hits] = await index.search([{ ...q, documents: true, scoreThreshold: 0.35 }]);
    expect(hits.map((h) => h.node.uri).sort()).toEqual([`${other}#p1`, `${other}#p2`, `${mine}#p1`, `${mine}#p2`].sort());
    for (const h of hits.filter((x) => x.node.docUri === mine)) expect(h.document).toMatchObject({ uri: mine, abstract: `abstract of ${mine}`, docUri: mine });
    expect(hits.every((h) => h.document?.overview === undefined)).toBe(true);
    // With overviews asked for, the attached points carry theirs.
    const [withOv] = await index.search([{ ...q, documents: true, scoreThreshold: 0.35, withOverview: true }]);
    for (const h of withOv.filter((x) => x.node.docUri === mine)) expect(h.document?.overview).toBe('overview of an unrelated title');
    for (const h of hits.filter((x) => x.node.docUri === other)) expect(h.document).toBeUndefined();
    // A document point that hit is not handed again.
    const [all] = await index.search([{ ...q, documents: true }]);
    expect(all.some((h) => h.node.uri === mine)).toBe(true);
    expect(all.every((h) => h.document === undefined || h.document.uri !== mine)).toBe(true);
    // A row search leaves them to the caller.
    const [rows] = await index.search([q]);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((h) => h.document === undefined)).toBe(true);
  });

  it('lets two adapters on one file see each other’s committed writes and deletes', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256 });
      const q = (text: string) => ({ visibility: vis, vector: embedder.embedOne(text), text, targets: [], filter: null, limit: 5 });
      expect(await reader.search([q('lighthouse keeper')])).toEqual([[]]);
      await writer.replaceDocument('viking://resources/l.md', [makeRecord(embedder, 'a', 'viking://resources/l.md', 'the lighthouse keeper')]);
      const [[hit]] = await reader.search([q('lighthouse keeper')]);
      expect(hit.node.uri).toBe('viking://resources/l.md');
      await writer.deleteDocument('a', 'viking://resources/l.md');
      expect(await reader.search([q('lighthouse keeper')])).toEqual([[]]);
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('warms a reader’s scan cache from the file: every committed row, then the writes since, and refuses once closed', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256 });
      expect(await reader.warm()).toBe(0);
      await writer.replaceDocument('viking://resources/l.md', [makeRecord(embedder, 'a', 'viking://resources/l.md', 'the lighthouse keeper')]);
      await writer.replaceDocument('viking://resources/m.md', [makeRecord(embedder, 'b', 'viking://resources/m.md', 'the mill by the river')]);
      expect(await reader.warm()).toBe(2);
      await writer.deleteDocument('b', 'viking://resources/m.md');
      await writer.replaceDocument('viking://resources/n.md', [makeRecord(embedder, 'a', 'viking://resources/n.md', 'north light'), makeRecord(embedder, 'a', 'viking://resources/n.md#p1', 'north light, first passage', { docUri: 'viking://resources/n.md', level: 2 })]);
      expect(await reader.warm()).toBe(3);
      const [[hit]] = await reader.search([{ visibility: vis, vector: embedder.embedOne('lighthouse keeper'), text: 'lighthouse keeper', targets: [], filter: null, limit: 1 }]);
      expect(hit.node.uri).toBe('viking://resources/l.md');
      await reader.close();
      await expect(reader.warm()).rejects.toBeInstanceOf(IndexClosedError);
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('keeps two accounts’ points of one URI apart across adapters sharing a file (change log and scan cache)', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256 });
      const uri = 'viking://resources/l.md';
      const visB: Visibility = { ...vis, account: 'b' };
      const q = (v: Visibility) => ({ visibility: v, vector: null, text: 'lighthouse', targets: [], filter: null, limit: 5 });
      // The reader loads its cache now, so the writes below reach it through the change log.
      expect(await reader.search([q(vis), q(visB)])).toEqual([[], []]);
      await writer.replaceDocument(uri, [makeRecord(embedder, 'a', uri, 'the lighthouse keeper of account a')]);
      await writer.replaceDocument(uri, [makeRecord(embedder, 'b', uri, 'the lighthouse keeper of account b')]);
      const [[hitA], [hitB]] = await reader.search([q(vis), q(visB)]);
      expect([hitA.node.account, hitA.node.abstract]).toEqual(['a', 'the lighthouse keeper of account a']);
      expect([hitB.node.account, hitB.node.abstract]).toEqual(['b', 'the lighthouse keeper of account b']);
      expect(await writer.deleteDocument('a', uri)).toBe(1);
      const [hitsA, hitsB] = await reader.search([q(vis), q(visB)]);
      expect(hitsA).toEqual([]);
      expect(hitsB.map((h) => h.node.abstract)).toEqual(['the lighthouse keeper of account b']);
      // A freshly loaded cache (no change log to replay) agrees.
      const fresh = new EmbeddedVectorIndex(dbB, { dimension: 256 });
      expect((await fresh.search([q(visB)]))[0].map((h) => h.node.account)).toEqual(['b']);
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('counts lexical document frequencies per account, so one tenant’s corpus never drops another’s query terms', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      // In account b "harbour" is in every document; in account a it is rare and decisive.
      for (let i = 0; i < 40; i++) {
        const uri = `viking://resources/b${i}.md`;
        await index.replaceDocument(uri, [makeRecord(embedder, 'b', uri, `harbour report number ${i}`)]);
      }
      await index.replaceDocument('viking://resources/h.md', [makeRecord(embedder, 'a', 'viking://resources/h.md', 'a walk along the harbour')]);
      await index.replaceDocument('viking://resources/w.md', [makeRecord(embedder, 'a', 'viking://resources/w.md', 'a walk in the woods')]);
      await index.replaceDocument('viking://resources/m.md', [makeRecord(embedder, 'a', 'viking://resources/m.md', 'a walk on the moor')]);
      const df = async (account: string, term: string) => (await eitherDf(index, db, account))[term];
      expect([await df('a', 'harbour'), await df('b', 'harbour')]).toEqual([1, 40]);
      // Counted file-wide, "harbour" (41 of 43 rows) would be dropped as near-universal and "walk"
      // kept, matching all three of a's walks; counted in a, "harbour" is the rare, decisive term.
      const [hits] = await index.search([{ visibility: vis, vector: null, text: 'walk harbour', targets: [], filter: null, limit: 3 }]);
      expect(hits.map((h) => h.node.uri)).toEqual(['viking://resources/h.md']);
      await index.deleteDocument('b', 'viking://resources', { subtree: true });
      expect([await df('a', 'harbour'), await df('b', 'harbour')]).toEqual([1, undefined]);
    } finally {
      db.close();
    }
  });

  it("stores a writer's lexical counts as its own count of the same text, and ignores them for a blank lexical text", async () => {
    const dbs = [openEmbeddedDb(':memory:'), openEmbeddedDb(':memory:')];
    try {
      const [counted, own] = dbs.map((db) => new EmbeddedVectorIndex(db, { dimension: 256 }));
      const texts = ['The harbour pilots board at dawn', '港口引航员在黎明登船，检查缆绳', 'Ropes, tides and the 港 master'];
      for (const [i, t] of texts.entries()) {
        const uri = `viking://resources/c${i}.md`;
        const r = makeRecord(embedder, 'a', uri, t, { lexicalText: t });
        await counted!.replaceDocument(uri, [{ ...r, lexicalCounts: lexicalTermCounts(t) }]);
        await own!.replaceDocument(uri, [r]);
      }
      // Blank lexical text: abstract + body are indexed, whatever the counts say.
      const blank = makeRecord(embedder, 'a', 'viking://resources/blank.md', 'lighthouse keeper', { lexicalText: '  ' });
      await counted!.replaceDocument(blank.uri, [{ ...blank, lexicalCounts: lexicalTermCounts('unrelated words') }]);
      await own!.replaceDocument(blank.uri, [blank]);
      const rows = (db: EmbeddedDb) => db.prepare('SELECT b.terms, t.term, t.df FROM vi_bags b, vi_terms t ORDER BY b.id, t.term').all();
      expect(rows(dbs[0]!)).toEqual(rows(dbs[1]!));
      for (const text of ['harbour dawn', '引航员 缆绳', 'lighthouse', 'unrelated']) {
        const q = { visibility: vis, vector: null, text, targets: [], filter: null, limit: 5 };
        const [a] = await counted!.search([q]);
        const [b] = await own!.search([q]);
        expect(a!.map((h) => [h.node.uri, h.score])).toEqual(b!.map((h) => [h.node.uri, h.score]));
      }
      expect((await counted!.search([{ visibility: vis, vector: null, text: 'lighthouse', targets: [], filter: null, limit: 5 }]))[0]!.map((h) => h.node.uri)).toEqual([blank.uri]);
    } finally {
      for (const db of dbs) db.close();
    }
  });

  it('counts a term once per row when the row holds it in both classes, across a group commit of several documents', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      // 港 alone is a main term (a one-character run) and, in 港口, a minor one: one row, df 1.
      const texts = ['港 的 港口', '港口 harbour', 'harbour'];
      await Promise.all(texts.map((t, i) => index.replaceDocument(`viking://resources/z${i}.md`, [makeRecord(embedder, 'a', `viking://resources/z${i}.md`, t)])));
      await index.replaceDocument('viking://resources/y.md', [makeRecord(embedder, 'b', 'viking://resources/y.md', '港 harbour')]);
      const df = (account: string) => eitherDf(index, db, account);
      expect(await df('a')).toEqual({ harbour: 2, 口: 2, 港: 2, 港口: 2 });
      expect(await df('b')).toEqual({ harbour: 1, 港: 1 });
      // Replacing and deleting in one group commit: each row's terms come off once.
      await Promise.all([
        index.replaceDocument('viking://resources/z0.md', [makeRecord(embedder, 'a', 'viking://resources/z0.md', 'harbour')]),
        index.deleteDocument('a', 'viking://resources/z1.md'),
      ]);
      expect(await df('a')).toEqual({ harbour: 2 });
      expect(await df('b')).toEqual({ harbour: 1, 港: 1 });
    } finally {
      db.close();
    }
  });

  it('upgrades a schema-2 file in place: rows, vectors and terms kept, the same URI then writable in another account', async () => {
    const path = join(dir, 'ctx.db');
    const db = openEmbeddedDb(path);
    try {
      const first = new EmbeddedVectorIndex(db, { dimension: 256 });
      await first.replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'a', 'viking://resources/p.md', 'persistent penguin colony')]);
      await first.replaceDocument('viking://resources/q.md', [makeRecord(embedder, 'a', 'viking://resources/q.md', 'quiet penguin island')]);
      await first.close();
      // Rewrite the file into the schema-2 layout: URIs unique across the file, one df per term.
      const nodesSql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'vi_nodes'").get() as { sql: string }).sql;
      db.exec(`
        ${nodesSql.replace('vi_nodes', 'vi_nodes_v2').replace(/\buri TEXT NOT NULL,/, 'uri TEXT NOT NULL UNIQUE,')};
        INSERT INTO vi_nodes_v2 SELECT * FROM vi_nodes;
        DROP TABLE vi_nodes;
        ALTER TABLE vi_nodes_v2 RENAME TO vi_nodes;
        CREATE INDEX vi_nodes_doc ON vi_nodes(doc_uri, passage_index);
        CREATE INDEX vi_nodes_account_uri ON vi_nodes(account, uri);
        CREATE TABLE vi_terms_v2(term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
        INSERT INTO vi_terms_v2 SELECT term, SUM(df) FROM vi_terms GROUP BY term;
        DROP TABLE vi_terms;
        ALTER TABLE vi_terms_v2 RENAME TO vi_terms;
        UPDATE vi_meta SET value = '2' WHERE key = 'schema';
      `);
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      expect((db.prepare("SELECT value FROM vi_meta WHERE key = 'schema'").get() as { value: string }).value).toBe('6');
      expect((await eitherDf(index, db, 'a')).penguin).toBe(2);
      const q = (text: string, v: Visibility = vis) => ({ visibility: v, vector: embedder.embedOne(text), text, targets: [], filter: null, limit: 5 });
      const [hits] = await index.search([q('persistent penguin colony')]);
      expect(hits[0].node.uri).toBe('viking://resources/p.md');
      expect(hits[0].score).toBeGreaterThan(0.9);
      expect(await index.replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'b', 'viking://resources/p.md', 'penguin of account b')])).toBe(true);
      expect(((await index.get(['viking://resources/p.md'], vis, 'full')) as NodeRecord[])[0].body).toBe('persistent penguin colony');
      expect(await index.stats()).toEqual({ points: 3, documents: 3 });
    } finally {
      db.close();
    }
  });

  it('upgrades a schema-3 file (FTS5 lexical index) in place: postings built from the stored term counts or, without them, the text; FTS5 dropped', async () => {
    const path = join(dir, 'ctx.db');
    const db = openEmbeddedDb(path);
    try {
      const first = new EmbeddedVectorIndex(db, { dimension: 256 });
      await first.replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'a', 'viking://resources/p.md', 'persistent penguin colony')]);
      await first.replaceDocument('viking://resources/q.md', [makeRecord(embedder, 'a', 'viking://resources/q.md', 'quiet walrus island')]);
      // More rows than one page of the upgrade, so it pages.
      const filler = Array.from({ length: 2_100 }, (_, i) => `viking://resources/f/${i}.md`);
      await first.replaceDocuments(filler.map((u) => ({ docUri: u, records: [makeRecord(embedder, 'a', u, 'filler')] })));
      await first.close();
      // The schema-3 layout: an FTS5 table instead of vi_lex_*; one row without stored term counts.
      db.exec(`
        DROP TABLE vi_lex_blocks; DROP TABLE vi_lex_terms; DROP TABLE vi_lex_rows;
        CREATE VIRTUAL TABLE vi_fts USING fts5(main, minor, scope, content='', contentless_delete=1);
        DELETE FROM vi_bags WHERE uri = 'viking://resources/q.md';
        UPDATE vi_meta SET value = '3' WHERE key = 'schema';
      `);
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      expect((db.prepare("SELECT value FROM vi_meta WHERE key = 'schema'").get() as { value: string }).value).toBe('6');
      expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'vi_fts'").get()).toBeUndefined();
      const lexOnly = (text: string) => ({ visibility: vis, vector: null, text, targets: [], filter: null, limit: 5 });
      const [[p], [w]] = await index.search([lexOnly('penguin'), lexOnly('walrus')]);
      expect(p?.node.uri).toBe('viking://resources/p.md');
      expect(w?.node.uri).toBe('viking://resources/q.md');
      // 6 terms of the two documents; 'filler' in 2,100 rows, in blocks of 128.
      expect(index.lexicalSize()).toEqual({ terms: 7, blocks: 6 + Math.ceil(2_100 / 128), postings: 6 + 2_100 });
    } finally {
      db.close();
    }
  });

  it('upgrades a schema-5 file in place: the longer terms leave vi_terms, and every search ranks and scores as before', async () => {
    const path = join(dir, 'v5.db');
    const db = openEmbeddedDb(path);
    const texts = ['the harbour pilots board at dawn', '港口引航员在黎明登船', 'harbour 港 tides', 'a walk on the moor'];
    const queries = ['harbour dawn', '港口 引航员', '港', 'walk moor harbour'].map((text) => ({ visibility: vis, vector: embedder.embedOne(text), text, targets: [], filter: null, limit: 5 }));
    let before: unknown;
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      for (const [i, t] of texts.entries()) await index.replaceDocument(`viking://resources/u${i}.md`, [makeRecord(embedder, 'a', `viking://resources/u${i}.md`, t)]);
      before = (await index.search(queries)).map((hs) => hs.map((h) => [h.node.uri, h.score]));
      await index.optimize();
      // What a version-5 writer left: every term's row (its frequencies as the lexical index has them).
      db.exec(`INSERT INTO vi_terms(account, term, df) SELECT account, term, df FROM vi_lex_terms WHERE cls = 0 AND length(term) > 1 AND df > 0;
        UPDATE vi_meta SET value = '5' WHERE key = 'schema';`);
      expect((db.prepare('SELECT count(*) AS n FROM vi_terms WHERE length(term) > 1').get() as { n: number }).n).toBeGreaterThan(5);
    } finally {
      db.close();
    }
    const again = openEmbeddedDb(path);
    try {
      const index = new EmbeddedVectorIndex(again, { dimension: 256 });
      expect((again.prepare("SELECT value FROM vi_meta WHERE key = 'schema'").get() as { value: string }).value).toBe('6');
      expect(again.prepare('SELECT term FROM vi_terms WHERE length(term) > 1').all()).toEqual([]);
      expect((await index.search(queries)).map((hs) => hs.map((h) => [h.node.uri, h.score]))).toEqual(before);
    } finally {
      again.close();
    }
  });

  it('upgrades a schema-4 file (block-max index without its tail) in place: blocks kept and searchable, later writes pending until merged', async () => {
    const path = join(dir, 'ctx.db');
    const db = openEmbeddedDb(path);
    try {
      const first = new EmbeddedVectorIndex(db, { dimension: 256 });
      await first.replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'a', 'viking://resources/p.md', 'persistent penguin colony')]);
      await first.replaceDocument('viking://resources/q.md', [makeRecord(embedder, 'a', 'viking://resources/q.md', 'quiet walrus island')]);
      // Every row in the blocks, as a schema-4 file holds them; then the schema-4 layout.
      await first.optimize();
      const size = first.lexicalSize();
      await first.close();
      db.exec(`
        DROP TABLE vi_lex_pending; DROP TABLE vi_lex_tail;
        ALTER TABLE vi_lex_terms DROP COLUMN merged;
        UPDATE vi_meta SET value = '4' WHERE key = 'schema';
      `);
      const index = new EmbeddedVectorIndex(db, { dimension: 256, lexicalTail: { mergeAt: 1e9, idleMs: 1e9 } });
      expect((db.prepare("SELECT value FROM vi_meta WHERE key = 'schema'").get() as { value: string }).value).toBe('6');
      expect(index.lexicalSize()).toEqual(size);
      const lexOnly = (text: string) => ({ visibility: vis, vector: null, text, targets: [], filter: null, limit: 5 });
      expect((await index.search([lexOnly('penguin')]))[0].map((h) => h.node.uri)).toEqual(['viking://resources/p.md']);
      await index.replaceDocument('viking://resources/r.md', [makeRecord(embedder, 'a', 'viking://resources/r.md', 'penguin rookery')]);
      expect(index.lexicalPending()).toBe(1);
      const both = (await index.search([lexOnly('penguin')]))[0].map((h) => h.node.uri).sort();
      expect(both).toEqual(['viking://resources/p.md', 'viking://resources/r.md']);
      await index.optimize();
      expect(index.lexicalPending()).toBe(0);
      expect((await index.search([lexOnly('penguin')]))[0].map((h) => h.node.uri).sort()).toEqual(both);
    } finally {
      db.close();
    }
  });

  it('merges the lexical tail in the background from `mergeAt` pending rows, and leaves fewer for optimize()', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256, lexicalTail: { mergeAt: 5, idleMs: 1e9 } });
    const write = (i: number, text: string) => index.replaceDocument(`viking://resources/${i}.md`, [makeRecord(embedder, 'a', `viking://resources/${i}.md`, text)]);
    const turns = async (n: number) => {
      for (let i = 0; i < n && index.lexicalPending() > 0; i++) await new Promise((r) => setImmediate(r));
    };
    await Promise.all(Array.from({ length: 8 }, (_, i) => write(i, `amber heron ${i}`)));
    // Eight pending rows, five or more: merged in steps after the commit, between other work.
    await turns(100);
    expect(index.lexicalPending()).toBe(0);
    await write(9, 'amber owl');
    await turns(20);
    // One row, below `mergeAt` while writes may go on: it waits for a pause (idleMs) or optimize().
    expect(index.lexicalPending()).toBe(1);
    expect(index.backgroundRows()).toEqual({ ann: 0, lexical: 1 });
    await index.optimize();
    expect(index.lexicalPending()).toBe(0);
    expect(index.backgroundRows()).toEqual({ ann: 0, lexical: 0 });
    const [hits] = await index.search([{ visibility: vis, vector: null, text: 'amber', targets: [], filter: null, limit: 20 }]);
    expect(hits).toHaveLength(9);
  });

  it('makes writes wait for the merge while the lexical tail holds `maxPending` rows', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256, lexicalTail: { mergeAt: 1e9, maxPending: 6, idleMs: 1e9 } });
    const doc = (i: number) => ({ docUri: `viking://resources/${i}.md`, records: [makeRecord(embedder, 'a', `viking://resources/${i}.md`, `amber heron ${i}`)] });
    // One transaction of ten documents: over the cap at once.
    await index.replaceDocuments(Array.from({ length: 10 }, (_, i) => doc(i)));
    expect(index.lexicalPending()).toBe(10);
    // The next write finds the tail full: the ten are merged before it lands.
    await index.replaceDocument(doc(10).docUri, doc(10).records);
    expect(index.lexicalPending()).toBe(1);
    const [hits] = await index.search([{ visibility: vis, vector: null, text: 'amber heron', targets: [], filter: null, limit: 20 }]);
    expect(hits).toHaveLength(11);
  });

  it('writes a batch of documents in one transaction: all searchable together, or none when one fails', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256 });
    const doc = (uri: string, text: string) => ({ docUri: uri, records: [makeRecord(embedder, 'a', uri, text)] });
    const lexOnly = (text: string) => ({ visibility: vis, vector: null, text, targets: [], filter: null, limit: 10 });
    expect(await index.replaceDocuments([doc('viking://resources/1.md', 'amber heron'), doc('viking://resources/2.md', 'amber falcon'), doc('viking://resources/1.md', 'amber owl')])).toEqual([
      true,
      true,
      true,
    ]);
    // The later version of a document in the same batch wins, and the earlier one left no postings.
    expect((await index.search([lexOnly('heron')]))[0]).toEqual([]);
    expect((await index.search([lexOnly('amber')]))[0].map((h) => h.node.uri).sort()).toEqual(['viking://resources/1.md', 'viking://resources/2.md']);
    const bad = doc('viking://resources/4.md', 'amber broken');
    bad.records[0].vector = new Float32Array(3);
    await expect(index.replaceDocuments([doc('viking://resources/3.md', 'amber sparrow'), bad])).rejects.toBeInstanceOf(InvalidRecordError);
    expect((await index.search([lexOnly('sparrow')]))[0]).toEqual([]);
    expect(index.lexicalSize().postings).toBe(4);
  });

  it('commits the writes of one event-loop turn together (group commit), in call order, each settling after the commit', async () => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 256 });
    const ver = () => (db.prepare('SELECT ver FROM vi_lex_version').get() as { ver: number } | undefined)?.ver ?? 0;
    const uri = (i: number) => `viking://resources/g/${i}.md`;
    const before = ver();
    const writes = Array.from({ length: 20 }, (_, i) => index.replaceDocument(uri(i), [makeRecord(embedder, 'a', uri(i), `gannet ${i}`)]));
    // A delete queued after the writes of its document runs after them.
    const del = index.deleteDocument('a', uri(3));
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 20 }, () => true));
    expect(await del).toBe(1);
    // One transaction: one version for its removals and one for its additions.
    expect(ver() - before).toBeLessThanOrEqual(2);
    const [hits] = await index.search([{ visibility: vis, vector: null, text: 'gannet', targets: [], filter: null, limit: 50 }]);
    expect(hits.map((h) => h.node.uri).sort()).toEqual(Array.from({ length: 20 }, (_, i) => uri(i)).filter((u) => u !== uri(3)).sort());
    // An invalid write is refused alone; the others of its turn land.
    const bad = makeRecord(embedder, 'a', uri(99), 'broken');
    bad.vector = new Float32Array(2);
    const mixed = [index.replaceDocument(uri(50), [makeRecord(embedder, 'a', uri(50), 'gannet fifty')]), index.replaceDocument(uri(99), [bad])];
    await expect(mixed[1]).rejects.toBeInstanceOf(InvalidRecordError);
    expect(await mixed[0]).toBe(true);
  });

  it('loads the same scan cache from vec0\'s chunks as from a scan of the table (the path for a layout it does not know)', async () => {
    const path = join(dir, 'ctx.db');
    const dbW = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbW, { dimension: 256 });
      for (let i = 0; i < 40; i++) {
        const uri = `viking://resources/r${i}.md`;
        await writer.replaceDocument(uri, [makeRecord(embedder, i % 3 === 0 ? 'b' : 'a', uri, `river ${i} ${i % 2 ? 'otter' : 'heron'} bank`)]);
      }
      for (let i = 0; i < 40; i += 5) await writer.deleteDocument(i % 3 === 0 ? 'b' : 'a', `viking://resources/r${i}.md`);
      // A node whose vector is missing (no write leaves one so) stays out of the cache, both ways.
      dbW.prepare("DELETE FROM vi_vec WHERE rowid = (SELECT id FROM vi_nodes WHERE uri = 'viking://resources/r7.md')").run();
      const load = async (vectorLoad: 'chunks' | 'scan') => {
        const db = openEmbeddedDb(path);
        try {
          const reader = new EmbeddedVectorIndex(db, { dimension: 256, vectorLoad });
          const rows = await reader.warm();
          const q = (account: string, text: string) => ({ visibility: { ...vis, account }, vector: embedder.embedOne(text), text, targets: [], filter: null, limit: 50 });
          const hits = await reader.search([q('a', 'otter bank'), q('b', 'heron river')]);
          await reader.close();
          return { rows, hits: hits.map((list) => list.map((h) => [h.node.uri, h.score])) };
        } finally {
          db.close();
        }
      };
      const viaChunks = await load('chunks');
      expect(viaChunks.rows).toBe(31);
      expect(viaChunks.hits[0]!.length).toBeGreaterThan(10);
      expect(viaChunks.hits.flat().map(([uri]) => uri)).not.toContain('viking://resources/r7.md');
      expect(viaChunks.hits.flat().map(([uri]) => uri)).toContain('viking://resources/r9.md');
      expect(await load('scan')).toEqual(viaChunks);
    } finally {
      dbW.close();
    }
  });

  it('reloads a reader that fell behind the pruned change log', async () => {
    const path = join(dir, 'ctx.db');
    const dbA = openEmbeddedDb(path);
    const dbB = openEmbeddedDb(path);
    try {
      const writer = new EmbeddedVectorIndex(dbA, { dimension: 256, changeLogKeep: 5 });
      const reader = new EmbeddedVectorIndex(dbB, { dimension: 256, changeLogKeep: 5 });
      const q = { visibility: vis, vector: null, text: 'otter', targets: [], filter: null, limit: 50 };
      await writer.replaceDocument('viking://resources/o0.md', [makeRecord(embedder, 'a', 'viking://resources/o0.md', 'otter zero')]);
      expect((await reader.search([q]))[0]).toHaveLength(1);
      // 30 more writes and a delete: far more than the 5 change-log rows kept.
      for (let i = 1; i <= 30; i++) {
        const uri = `viking://resources/o${i}.md`;
        await writer.replaceDocument(uri, [makeRecord(embedder, 'a', uri, `otter number ${i}`)]);
      }
      await writer.deleteDocument('a', 'viking://resources/o0.md');
      expect(Number((dbA.prepare("SELECT value FROM vi_meta WHERE key = 'pruned_through'").get() as { value: string }).value)).toBeGreaterThan(1);
      const [hits] = await reader.search([q]);
      expect(hits.map((h) => h.node.uri).sort()).toEqual(Array.from({ length: 30 }, (_, i) => `viking://resources/o${i + 1}.md`).sort());
    } finally {
      dbA.close();
      dbB.close();
    }
  });

  it('keeps its data across reopening the file', async () => {
    const path = join(dir, 'ctx.db');
    const db1 = openEmbeddedDb(path);
    await new EmbeddedVectorIndex(db1, { dimension: 256 }).replaceDocument('viking://resources/p.md', [makeRecord(embedder, 'a', 'viking://resources/p.md', 'persistent penguin')]);
    db1.close();
    const db2 = openEmbeddedDb(path);
    try {
      const index = new EmbeddedVectorIndex(db2, { dimension: 256 });
      const [[hit]] = await index.search([{ visibility: vis, vector: null, text: 'penguin', targets: [], filter: null, limit: 3 }]);
      expect(hit.node.uri).toBe('viking://resources/p.md');
    } finally {
      db2.close();
    }
  });

  it('refuses to open a file created with another dimension', () => {
    const path = join(dir, 'ctx.db');
    const db = openEmbeddedDb(path);
    try {
      new EmbeddedVectorIndex(db, { dimension: 256 });
      expect(() => new EmbeddedVectorIndex(db, { dimension: 512 })).toThrow(IndexDimensionMismatchError);
    } finally {
      db.close();
    }
  });

  it('refuses a file written with another table layout', () => {
    const db = openEmbeddedDb(':memory:');
    try {
      new EmbeddedVectorIndex(db, { dimension: 256 });
      db.prepare("UPDATE vi_meta SET value = '0' WHERE key = 'schema'").run();
      expect(() => new EmbeddedVectorIndex(db, { dimension: 256 })).toThrow(IndexSchemaMismatchError);
    } finally {
      db.close();
    }
  });

  it('fails calls after close and reports not ready, leaving the shared handle open', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      await index.close();
      expect(await index.ping()).toBe(false);
      await expect(index.search([])).rejects.toBeInstanceOf(IndexClosedError);
      expect(db.open).toBe(true);
    } finally {
      db.close();
    }
  });

  it('rejects an unknown filter field and a query vector of the wrong dimension', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      await index.replaceDocument('viking://resources/x.md', [makeRecord(embedder, 'a', 'viking://resources/x.md', 'x marks the spot')]);
      const base = { visibility: vis, vector: null, text: 'spot', targets: [], limit: 3 };
      await expect(index.search([{ ...base, filter: { op: 'must', field: 'owner', conds: ['u'] } }])).rejects.toBeInstanceOf(UnsupportedFilterError);
      await expect(index.search([{ ...base, filter: null, vector: new Float32Array(8) }])).rejects.toBeInstanceOf(InvalidRecordError);
    } finally {
      db.close();
    }
  });

  it('scores a long page that holds every word of a short question above the noise floor, and unrelated pages below it', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      const filler = 'The team also covered caching, tracing, on-call rotations, dashboards, quarterly planning and hiring. ';
      // The answer is one sentence of five; far longer pages reach search as passages.
      const page = `# Deploy guide\n\n${filler.repeat(2)}We deploy the gateway with blue/green releases.\n\n${filler.repeat(2)}`;
      const docs = [
        ['viking://resources/docs/deploy.md', page],
        ['viking://resources/docs/bread.md', 'Sourdough bread needs a starter, flour, water and a long cold proof overnight.'],
        ['viking://resources/docs/garden.md', 'Tomatoes in the garden want sun, deep watering and stakes by July.'],
      ] as const;
      for (const [uri, text] of docs) await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, text)]);
      const [vector] = await embedder.embed(['how do we deploy the gateway']);
      const [hits] = await index.search([{ visibility: vis, vector, text: 'how do we deploy the gateway', targets: [], filter: null, limit: 3 }]);
      expect(hits[0].node.uri).toBe('viking://resources/docs/deploy.md');
      // The diluted cosine alone is low; holding the whole question lifts it over the floor.
      expect(hits[0].features).toMatchObject({ coverage: expect.closeTo(1, 9), rank: 0 });
      expect(hits[0].features!.cosine).toBeLessThan(0.35);
      expect(hits[0].score).toBeGreaterThanOrEqual(0.35);
      for (const h of hits.slice(1)) expect(h.score).toBeLessThan(0.35);
      // A question about nothing the store holds scores nothing at the floor.
      const [off] = await embedder.embed(['quantum chromodynamics on a lattice']);
      const [noise] = await index.search([{ visibility: vis, vector: off, text: 'quantum chromodynamics on a lattice', targets: [], filter: null, limit: 3 }]);
      expect(noise.length).toBeGreaterThan(0);
      for (const h of noise) expect(h.score).toBeLessThan(0.35);
    } finally {
      db.close();
    }
  });

  it('finds lexical hits under a narrow target even when other rows fill the shared top rows', async () => {
    const db = openEmbeddedDb(':memory:');
    try {
      const index = new EmbeddedVectorIndex(db, { dimension: 256 });
      // 1,100 resources mention "harbour" more often than the one memory under the target.
      for (let i = 0; i < 1100; i++) {
        const uri = `viking://resources/bulk/r${i}.md`;
        await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, `harbour harbour harbour notes ${i}`)]);
      }
      const target = 'viking://user/u/memories/events/h.md';
      await index.replaceDocument(target, [makeRecord(embedder, 'a', target, 'a walk by the harbour at dawn with many other words in it')]);
      const [hits] = await index.search([{ visibility: vis, vector: null, text: 'harbour', targets: ['viking://user/u/memories'], filter: null, limit: 3 }]);
      expect(hits.map((h) => h.node.uri)).toEqual([target]);
    } finally {
      db.close();
    }
  });
});

describe('TopK', () => {
  it('keeps the k highest scores, best first, like a full sort', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { maxLength: 200 }), fc.integer({ min: 1, max: 20 }), (scores, k) => {
        const top = new TopK(k);
        scores.forEach((s, i) => {
          if (s > top.floor) top.push(i, s);
        });
        // `+ 0` turns -0 into 0: toEqual tells them apart, while the heap (rightly) keeps either of two equal scores.
        const got = top.sorted().map((i) => scores[i] + 0);
        const want = [...scores].sort((a, b) => b - a).slice(0, k).map((x) => x + 0);
        expect(got).toEqual(want);
      }),
    );
  });
});
