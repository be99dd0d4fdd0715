import { LexicalEmbedder } from '@ctxmesh/embedder';
import { makeRecord } from '../contract/vector-index.contract';
import type { HybridTuning } from '../tuning';
import type { Visibility } from '../ports/vector-index';
import { type EmbeddedDb, openEmbeddedDb } from './db';
import { IDF_FLOOR, TfIdfCosine, robertsonIdf, termBag } from './lexical-cosine';
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
  it('counts stemmed words, skipping stop words', () => {
    expect(termBag('The dancer danced and dances', 0.6)).toEqual(
      new Map([
        ['dancer', 1],
        ['danc', 2],
      ]),
    );
  });

  it('weighs CJK bigrams 1 and unigrams by minorWeight per occurrence', () => {
    expect(termBag('魔术魔术', 0.25)).toEqual(
      new Map([
        ['魔术', 2],
        ['术魔', 1],
        ['魔', 0.5],
        ['术', 0.5],
      ]),
    );
  });

  it('multiplies a capitalised word only when asked (queries)', () => {
    expect(termBag('Bart met bart', 0.6).get('bart')).toBe(2);
    expect(termBag('Bart met bart', 0.6, 2).get('bart')).toBe(4);
    expect(termBag('Bart met bart', 0.6, 2).get('met')).toBe(1);
  });
});

describe('TfIdfCosine', () => {
  const flat = (): number => 1;

  it('scores a document with the same terms 1 and a disjoint one 0', () => {
    const c = new TfIdfCosine(termBag('lighthouse keeper', 0.6), flat);
    expect(c.score(termBag('the keeper of the lighthouse', 0.6))).toBeCloseTo(1, 12);
    expect(c.score(termBag('sourdough bread', 0.6))).toBe(0);
    expect(c.score(new Map())).toBe(0);
  });

  it('scores 0 for a query without terms', () => {
    expect(new TfIdfCosine(new Map(), flat).score(termBag('anything at all', 0.6))).toBe(0);
  });

  it('weighs a term by how often the query repeats it', () => {
    const once = new TfIdfCosine(termBag('rocket launch', 0.6), flat);
    const thrice = new TfIdfCosine(termBag('rocket rocket rocket launch', 0.6), flat);
    const doc = termBag('rocket engine', 0.6);
    expect(thrice.score(doc)).toBeGreaterThan(once.score(doc));
    expect(thrice.score(doc)).toBeGreaterThan(thrice.score(termBag('launch engine', 0.6)));
  });

  it('penalises a document by the IDF-weighted norm of its other terms', () => {
    const idf = (t: string): number => (t === 'harbor' ? 0.01 : 1.5);
    const c = new TfIdfCosine(termBag('lighthouse', 0.6), idf);
    // Same match; the other term is common in one document and rare in the other.
    expect(c.score(termBag('lighthouse harbor', 0.6))).toBeGreaterThan(0.99);
    expect(c.score(termBag('lighthouse zebra', 0.6))).toBeCloseTo(Math.SQRT1_2, 12);
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
  // "harbor" is in 4 of 6 rows (no evidence), "zebra" in one (very specific). BM25 prefers the
  // shorter `zebra` row; the cosine prefers the row that is about little besides the lighthouse.
  const corpus = async (index: EmbeddedVectorIndex): Promise<void> => {
    await put(index, 'zebra', 'lighthouse zebra');
    await put(index, 'harbor', 'lighthouse harbor harbor');
    await put(index, 'cafe', 'harbor cafe');
    await put(index, 'boats', 'harbor boats');
    await put(index, 'market', 'harbor market');
    await put(index, 'trail', 'mountain trail');
  };

  it('keeps the BM25 order when the depth is 0', async () => {
    const index = open({ lexicalRerankDepth: 0 });
    await corpus(index);
    expect(await order(index, 'lighthouse')).toEqual(['zebra', 'harbor']);
  });

  it('re-orders the head of the BM25 list by TF-IDF cosine', async () => {
    const index = open();
    await corpus(index);
    expect(await order(index, 'lighthouse')).toEqual(['harbor', 'zebra']);
  });

  it('follows document frequencies that change after a search', async () => {
    const index = open();
    await corpus(index);
    expect(await order(index, 'lighthouse')).toEqual(['harbor', 'zebra']);
    // Now "zebra" is common and "harbor" no longer is: the zebra row is the one about the lighthouse.
    for (const n of [1, 2, 3, 4]) await put(index, `z${n}`, `zebra crossing ${n}`);
    expect(await order(index, 'lighthouse')).toEqual(['zebra', 'harbor']);
  });

  it('re-derives a rewritten row’s terms even when SQLite hands its id to the new row', async () => {
    const index = open();
    await corpus(index);
    await put(index, 'last', 'lighthouse quartz');
    const before = await order(index, 'lighthouse');
    expect(before[0]).toBe('harbor');
    expect(before.indexOf('last')).toBeGreaterThan(0);
    // Rewriting the newest row deletes the highest id, which the insert then reuses: a bag kept
    // by id would still say "quartz".
    await put(index, 'last', 'lighthouse');
    expect(await order(index, 'lighthouse')).toEqual(['last', 'harbor', 'zebra']);
  });
});
