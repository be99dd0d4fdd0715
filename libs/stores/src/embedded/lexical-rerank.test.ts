import { LexicalEmbedder } from '@ctxmesh/embedder';
import { makeRecord } from '../contract/vector-index.contract';
import type { HybridTuning } from '../tuning';
import type { Visibility } from '../ports/vector-index';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import { encodeTermCounts } from '../ranking/terms';
import { EmbeddedVectorIndex } from './vector-index';

const FLAT_RELEVANCE = { intercept: 0, weights: [0, 0, 0] };

describe('EmbeddedVectorIndex lexical re-ranking', () => {
  const embedder = new LexicalEmbedder({ dimension: 64 });
  const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
  const dbs: EmbeddedDb[] = [];
  afterAll(() => {
    for (const db of dbs) db.close();
  });
  // These tests read the fused order (BM25, its TF-IDF head): a flat relevance model scores
  // every hit alike, so the hits come back in that order.
  const open = (tuning: Partial<HybridTuning> = {}): EmbeddedVectorIndex => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    return new EmbeddedVectorIndex(db, { dimension: 64, tuning: { relevance: FLAT_RELEVANCE, ...tuning } });
  };
  const put = async (index: EmbeddedVectorIndex, name: string, text: string): Promise<void> => {
    const uri = `viking://resources/${name}.md`;
    await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, text)]);
  };
  const order = async (index: EmbeddedVectorIndex, text: string): Promise<string[]> => {
    const [hits] = await index.search([{ visibility: vis, vector: null, text, targets: [], filter: null, limit: 10 }]);
    return hits.map((h) => /([^/]+)\.md$/.exec(h.node.uri)?.[1] ?? h.node.uri);
  };
  // The query comes back to "harbor" five times and names "lighthouse" once, which is the
  // rarer term. FTS5's BM25 counts each query term once, so it prefers the long `beacon` row
  // (the rare term); TF-IDF relevance weighs the query's repetition and ranks the short
  // `harbor` row first.
  const query = 'harbor harbor harbor harbor harbor lighthouse';
  const corpus = async (index: EmbeddedVectorIndex): Promise<void> => {
    await put(index, 'beacon', 'lighthouse beacon tower stairs lantern glass');
    await put(index, 'harbor', 'the harbor');
    await put(index, 'cafe', 'harbor cafe terrace');
    await put(index, 'trail', 'mountain trail');
    await put(index, 'tomato', 'garden tomato');
    await put(index, 'coat', 'winter coat');
  };

  it('keeps the BM25 order when the depth is 0', async () => {
    const index = open({ lexicalRerankDepth: 0 });
    await corpus(index);
    expect((await order(index, query))[0]).toBe('beacon');
  });

  it('re-orders the head of the BM25 list by TF-IDF relevance', async () => {
    const index = open();
    await corpus(index);
    expect(await order(index, query)).toEqual(['harbor', 'beacon', 'cafe']);
  });

  it('uses the document frequencies of the moment', async () => {
    const index = open();
    await corpus(index);
    expect((await order(index, query))[0]).toBe('harbor');
    // Now "harbor" is in most rows and carries no evidence: the lighthouse row leads.
    for (const n of [1, 2, 3, 4]) await put(index, `h${n}`, `harbor view ${n}`);
    expect((await order(index, query))[0]).toBe('beacon');
  });

  it('re-derives a rewritten row’s terms even when SQLite hands its id to the new row', async () => {
    const index = open();
    await corpus(index);
    await put(index, 'last', 'harbor quartz quartz quartz quartz quartz');
    const before = await order(index, query);
    expect(before.indexOf('last')).toBeGreaterThan(before.indexOf('harbor'));
    // Rewriting the newest row deletes the highest id, which the insert then reuses: a bag kept
    // by id would still hold the quartz.
    await put(index, 'last', 'harbor lighthouse');
    expect((await order(index, query))[0]).toBe('last');
  });
});

describe('EmbeddedVectorIndex stored term counts', () => {
  const embedder = new LexicalEmbedder({ dimension: 64 });
  const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
  const query = 'harbor harbor harbor harbor harbor lighthouse';
  const dbs: EmbeddedDb[] = [];
  afterAll(() => {
    for (const db of dbs) db.close();
  });
  const setup = async (): Promise<EmbeddedDb> => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    const index = new EmbeddedVectorIndex(db, { dimension: 64, tuning: { relevance: FLAT_RELEVANCE } });
    const texts: Array<[string, string]> = [
      ['beacon', 'lighthouse beacon tower stairs lantern glass'],
      ['harbor', 'the harbor'],
      ['cafe', 'harbor cafe terrace'],
      ['trail', 'mountain trail'],
      ['tomato', 'garden tomato'],
      ['coat', 'winter coat'],
    ];
    for (const [name, text] of texts) {
      const uri = `viking://resources/${name}.md`;
      await index.replaceDocument(uri, [makeRecord(embedder, 'a', uri, text)]);
    }
    return db;
  };
  // A fresh index on the file: its bag memo is empty, so it reads what the tables hold now.
  const order = async (db: EmbeddedDb): Promise<string[]> => {
    const [hits] = await new EmbeddedVectorIndex(db, { dimension: 64, tuning: { relevance: FLAT_RELEVANCE } }).search([{ visibility: vis, vector: null, text: query, targets: [], filter: null, limit: 10 }]);
    return hits.map((h) => /([^/]+)\.md$/.exec(h.node.uri)?.[1] ?? h.node.uri);
  };
  const padded = encodeTermCounts({ main: new Map([['harbor', 1], ['quartz', 9], ['onyx', 9], ['jade', 9]]), minor: new Map() });
  const tamper = (db: EmbeddedDb, set: string): void => {
    db.prepare(`UPDATE vi_bags SET ${set} WHERE uri = 'viking://resources/harbor.md'`).run();
  };

  it('writes one row of term counts per point and drops it with the point', async () => {
    const db = await setup();
    expect(db.prepare('SELECT COUNT(*) FROM vi_bags').pluck().get()).toBe(6);
    await new EmbeddedVectorIndex(db, { dimension: 64, tuning: { relevance: FLAT_RELEVANCE } }).deleteDocument('a', 'viking://resources/cafe.md');
    expect(db.prepare('SELECT COUNT(*) FROM vi_bags').pluck().get()).toBe(5);
  });

  it('ranks from the stored counts', async () => {
    const db = await setup();
    expect((await order(db))[0]).toBe('harbor');
    tamper(db, `terms = '${padded}'`);
    // The stored counts now claim the harbor row is mostly about other things.
    expect((await order(db))[0]).toBe('beacon');
  });

  it('falls back to the text for a row without counts, with counts of another row, or with unreadable ones', async () => {
    for (const set of [`content_hash = 'stale', terms = '${padded}'`, `uri = 'viking://resources/other.md', terms = '${padded}'`, `terms = 'garbage'`]) {
      const db = await setup();
      tamper(db, set);
      expect((await order(db))[0]).toBe('harbor');
    }
    const db = await setup();
    db.prepare('DELETE FROM vi_bags').run();
    expect(await order(db)).toEqual(['harbor', 'beacon', 'cafe']);
  });
});
