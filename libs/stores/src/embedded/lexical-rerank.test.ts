import { LexicalEmbedder, lexicalTerms } from '@ctxmesh/embedder';
import { makeRecord } from '../contract/vector-index.contract';
import type { HybridTuning } from '../tuning';
import type { Visibility } from '../ports/vector-index';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import { IDF_FLOOR, TfIdfScorer, bagOfCounts, bagOfEncoded, encodeTermCounts, robertsonIdf, termBag, termCounts } from './lexical-rerank';
import { EmbeddedVectorIndex } from './vector-index';

describe('robertsonIdf', () => {
  it('is ln((n − df + 0.5) / (df + 0.5)) for a term in fewer than half the documents', () => {
    expect(robertsonIdf(1, 10)).toBeCloseTo(Math.log(9.5 / 1.5), 12);
    expect(robertsonIdf(0, 1)).toBeCloseTo(Math.log(1.5 / 0.5), 12);
  });

  it('floors a term in half the documents or more, so it carries (almost) no weight', () => {
    expect(robertsonIdf(5, 10)).toBe(IDF_FLOOR);
    expect(robertsonIdf(10, 10)).toBe(IDF_FLOOR);
  });

  it('decreases as the term gets more common', () => {
    expect(robertsonIdf(1, 100)).toBeGreaterThan(robertsonIdf(2, 100));
    expect(robertsonIdf(2, 100)).toBeGreaterThan(robertsonIdf(20, 100));
  });
});

describe('termBag', () => {
  const twice = 1 + Math.log(2);

  it('weighs stemmed words 1 + ln(count), skipping stop words', () => {
    expect(termBag('The dancer danced and dances', 0.6)).toEqual(
      new Map([
        ['dancer', 1],
        ['danc', twice],
      ]),
    );
  });

  it('weighs CJK bigrams like words and unigrams minorWeight times that', () => {
    expect(termBag('魔术魔术', 0.25)).toEqual(
      new Map([
        ['魔术', twice],
        ['术魔', 1],
        ['魔', 0.25 * twice],
        ['术', 0.25 * twice],
      ]),
    );
  });

  it('adds both weights of a character that is a one-character run and a unigram elsewhere', () => {
    expect(termBag('猫，小猫咪', 0.5).get('猫')).toBe(1.5);
  });

  it('multiplies a capitalised word only when asked (queries)', () => {
    expect(termBag('Bart met bart', 0.6).get('bart')).toBe(twice);
    expect(termBag('Bart met bart', 0.6, 2).get('bart')).toBe(2 * twice);
    expect(termBag('Bart met bart', 0.6, 2).get('met')).toBe(1);
  });
});

describe('TfIdfScorer', () => {
  const flat = (): number => 1;

  it('scores a document with exactly the query’s terms 1 and a disjoint one 0', () => {
    const c = new TfIdfScorer(termBag('lighthouse keeper', 0.6), flat);
    expect(c.score(termBag('the keeper of the lighthouse', 0.6))).toBeCloseTo(1, 12);
    expect(c.score(termBag('sourdough bread', 0.6))).toBe(0);
    expect(c.score(new Map())).toBe(0);
  });

  it('measures coverage as the share of the query’s IDF-weighted mass a document holds, whatever else it says', () => {
    const idf = (t: string): number => (t === 'lighthous' || t === 'lighthouse' ? 3 : 1);
    const q = termBag('lighthouse keeper', 0.6);
    const c = new TfIdfScorer(q, idf);
    expect(c.coverage(termBag('the keeper of the lighthouse, and a great many other things besides', 0.6))).toBeCloseTo(1, 12);
    expect(c.coverage(termBag('sourdough bread', 0.6))).toBe(0);
    const half = c.coverage(termBag('a keeper', 0.6));
    const rare = c.coverage(termBag('a lighthouse', 0.6));
    expect(half).toBeGreaterThan(0);
    expect(rare).toBeGreaterThan(half);
    expect(half + rare).toBeLessThanOrEqual(1 + 1e-12);
  });

  it('scores 0 for a query without terms', () => {
    expect(new TfIdfScorer(new Map(), flat).score(termBag('anything at all', 0.6))).toBe(0);
  });

  it('weighs a term more the more often the query repeats it', () => {
    const once = new TfIdfScorer(termBag('rocket launch', 0.6), flat);
    const thrice = new TfIdfScorer(termBag('rocket rocket rocket launch', 0.6), flat);
    const doc = termBag('rocket engine', 0.6);
    expect(thrice.score(doc)).toBeGreaterThan(once.score(doc));
    expect(thrice.score(doc)).toBeGreaterThan(thrice.score(termBag('launch engine', 0.6)));
  });

  it('counts a match’s IDF twice, once from each side', () => {
    const idf = (t: string): number => (t === 'lighthous' ? 2 : 0.5);
    const c = new TfIdfScorer(termBag('lighthouse keeper', 0.6), idf);
    expect(c.score(termBag('lighthouse harbor', 0.6)) / c.score(termBag('keeper harbor', 0.6))).toBeCloseTo(16, 9);
  });

  it('normalises a document by the length of its own term-frequency vector', () => {
    const c = new TfIdfScorer(termBag('lighthouse', 0.6), (t) => (t === 'lighthous' ? 3 : 0.01));
    expect(c.score(termBag('lighthouse', 0.6)) / c.score(termBag('lighthouse harbor cafe', 0.6))).toBeCloseTo(Math.sqrt(3), 9);
  });
});

describe('EmbeddedVectorIndex lexical re-ranking', () => {
  const embedder = new LexicalEmbedder({ dimension: 64 });
  const vis: Visibility = { account: 'a', user: 'u', actorPeer: null, openPeers: false, allUsers: false, workspace: null };
  const dbs: EmbeddedDb[] = [];
  afterAll(() => {
    for (const db of dbs) db.close();
  });
  const open = (tuning: Partial<HybridTuning> = {}): EmbeddedVectorIndex => {
    const db = openEmbeddedDb(':memory:');
    dbs.push(db);
    return new EmbeddedVectorIndex(db, { dimension: 64, tuning });
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

describe('term counts', () => {
  it('give the same bag from their string form, CJK and empty classes included', () => {
    for (const text of ['Redis连接超时, retry the retry!', '', 'lighthouse', '魔术魔术 and 猫，小猫咪']) {
      const counts = termCounts(lexicalTerms(text));
      expect(bagOfEncoded(encodeTermCounts(counts), 0.6)).toEqual(bagOfCounts(counts, 0.6));
      expect(bagOfEncoded(encodeTermCounts(counts), 0)).toEqual(bagOfCounts(counts, 0));
    }
  });

  it('refuse a string they did not write', () => {
    expect(() => bagOfEncoded('lighthouse 2', 0.6)).toThrow(RangeError);
    expect(() => bagOfEncoded('lighthouse\t', 0.6)).toThrow(RangeError);
    expect(() => bagOfEncoded('lighthouse 0\t', 0.6)).toThrow(RangeError);
    expect(() => bagOfEncoded('lighthouse x\t', 0.6)).toThrow(RangeError);
  });

  it('give the same bag as the text', () => {
    const text = 'Bart danced, dancing at the 圣诞节晚会 with Bart';
    expect(bagOfCounts(termCounts(lexicalTerms(text)), 0.6)).toEqual(termBag(text, 0.6));
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
    const index = new EmbeddedVectorIndex(db, { dimension: 64 });
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
    const [hits] = await new EmbeddedVectorIndex(db, { dimension: 64 }).search([{ visibility: vis, vector: null, text: query, targets: [], filter: null, limit: 10 }]);
    return hits.map((h) => /([^/]+)\.md$/.exec(h.node.uri)?.[1] ?? h.node.uri);
  };
  const padded = encodeTermCounts({ main: new Map([['harbor', 1], ['quartz', 9], ['onyx', 9], ['jade', 9]]), minor: new Map() });
  const tamper = (db: EmbeddedDb, set: string): void => {
    db.prepare(`UPDATE vi_bags SET ${set} WHERE uri = 'viking://resources/harbor.md'`).run();
  };

  it('writes one row of term counts per point and drops it with the point', async () => {
    const db = await setup();
    expect(db.prepare('SELECT COUNT(*) FROM vi_bags').pluck().get()).toBe(6);
    await new EmbeddedVectorIndex(db, { dimension: 64 }).deleteDocument('a', 'viking://resources/cafe.md');
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
