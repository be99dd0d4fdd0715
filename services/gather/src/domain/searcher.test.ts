import { LexicalEmbedder } from '@ctxmesh/embedder';
import { EmbeddingCache } from './embed-cache';
import { FakeIndex, summary } from './__tests__/fake-index';
import { searchVisibility, type CallerScope } from '@ctxmesh/stores';
import { NodeSearcher, type NodeSearch } from './searcher';

const scope: CallerScope = { account: 'acme', user: 'alice', role: 'user', actorPeer: null, workspace: null };
const D = 'viking://resources/guide.md';

function search(text: string, over: Partial<NodeSearch> = {}): NodeSearch {
  return { text, visibility: searchVisibility(scope, { targets: [] }), targets: [], filter: null, limit: 5, scoreThreshold: null, asOf: 1000, ...over };
}

describe('NodeSearcher', () => {
  const embedder = new LexicalEmbedder({ dimension: 64 });

  it('refuses an embedder whose dimension differs from the index', () => {
    expect(() => new NodeSearcher(new FakeIndex(128), embedder)).toThrow(/dimension 64, the vector index 128/);
  });

  it('runs a batch as one index.search and translates each search into a SearchQuery whose limit counts documents', async () => {
    const index = new FakeIndex(64);
    const s = new NodeSearcher(index, embedder);
    const filter = { op: 'must' as const, field: 'context_type', conds: ['memory'] };
    await s.searchMany([
      search('kitten', { targets: ['viking://user/alice/memories'], filter, limit: 4, scoreThreshold: 0.35, levels: [2] }),
      search('puppy', { levels: [] }),
    ]);
    expect(index.searches).toHaveLength(1);
    const [q1, q2] = index.searches[0];
    expect(q1).toMatchObject({
      text: 'kitten',
      targets: ['viking://user/alice/memories'],
      filter,
      limit: 4,
      documents: true,
      scoreThreshold: 0.35,
      levels: [2],
      asOf: 1000,
      withOverview: true,
      visibility: { account: 'acme', user: 'alice' },
    });
    expect(Array.from(q1.vector as Float32Array)).toEqual(Array.from(embedder.embedOne('kitten')));
    expect(q2.levels).toBeUndefined();
  });

  it('embeds each distinct text once across a batch and across batches', async () => {
    const cache = new EmbeddingCache(16);
    const s = new NodeSearcher(new FakeIndex(64), embedder, cache);
    await s.searchMany([search('kitten'), search('kitten', { targets: ['viking://resources'] }), search('puppy')]);
    await s.searchMany([search('kitten')]);
    expect([cache.calls, cache.embedded]).toEqual([1, 2]);
  });

  it('does not touch the store for blank texts or a zero limit', async () => {
    const index = new FakeIndex(64);
    const out = await new NodeSearcher(index, embedder).searchMany([search('  '), search('kitten', { limit: 0 })]);
    expect(out).toEqual([[], []]);
    expect(index.searches).toEqual([]);
  });

  it('collapses passages, fetching missing document points once per visibility, and cuts to the limit', async () => {
    const p = (i: number) => summary(`${D}#p${i}`, { docUri: D, passageIndex: i, abstract: '' });
    const index = new FakeIndex(
      64,
      (q) =>
        q.text === 'guide'
          ? [
              { node: p(2), score: 0.9 },
              { node: p(1), score: 0.8 },
              { node: summary('viking://resources/a.md'), score: 0.7 },
              { node: summary('viking://resources/b.md'), score: 0.6 },
            ]
          : [{ node: p(3), score: 0.5 }],
      new Map([[D, summary(D, { abstract: 'The guide.' })]]),
    );
    const s = new NodeSearcher(index, embedder);
    const [first, second] = await s.searchMany([search('guide', { limit: 2 }), search('other')]);
    expect(first.map((h) => [h.uri, h.score, h.abstract])).toEqual([
      [D, 0.9, 'The guide.'],
      ['viking://resources/a.md', 0.7, 'abstract of viking://resources/a.md'],
    ]);
    expect(second.map((h) => [h.uri, h.score])).toEqual([[D, 0.5]]);
    expect(index.gets.map((g) => g.uris)).toEqual([[D]]);
  });

  it('takes the document points the store attached to passage hits, and reads only those still missing', async () => {
    const E = 'viking://resources/other.md';
    const p = (doc: string, i: number, attached: boolean) => ({
      node: summary(`${doc}#p${i}`, { docUri: doc, passageIndex: i, abstract: '' }),
      score: 0.9 - i / 10,
      ...(attached ? { document: summary(doc, { abstract: `attached ${doc}` }) } : {}),
    });
    const index = new FakeIndex(64, () => [p(D, 1, true), p(E, 2, false)], new Map([[E, summary(E, { abstract: 'read' })]]));
    const [hits] = await new NodeSearcher(index, embedder).searchMany([search('guide')]);
    expect(hits.map((h) => [h.uri, h.abstract])).toEqual([
      [D, `attached ${D}`],
      [E, 'read'],
    ]);
    expect(index.gets.map((g) => g.uris)).toEqual([[E]]);
  });

  it('fetches documents under each search’s own visibility', async () => {
    const p = summary(`${D}#p1`, { docUri: D, passageIndex: 1 });
    const index = new FakeIndex(64, () => [{ node: p, score: 0.5 }]);
    const open = searchVisibility(scope, { targets: ['viking://user/alice/peers'], openContext: true });
    await new NodeSearcher(index, embedder).searchMany([search('a'), search('b', { visibility: open })]);
    expect(index.gets.map((g) => g.visibility.openPeers).sort()).toEqual([false, true]);
  });
});
