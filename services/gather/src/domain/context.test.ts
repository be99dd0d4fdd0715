import { LexicalEmbedder } from '@ctxmesh/embedder';
import { DEFAULT_OTHER_PEER_PENALTIES, EMPTY_QUERY_MESSAGE, InvalidArgumentError } from '@ctxmesh/kernel';
import { type SearchQuery, type CallerScope } from '@ctxmesh/stores';
import { gatherContext, isUnsupportedFilter, toSearchLists, type ContextGatherInput } from './context';
import { FakeIndex, summary } from './__tests__/fake-index';
import { reasonOf } from './rejections';
import { NodeSearcher } from './searcher';

const U = 'viking://user/alice';
const scope: CallerScope = { account: 'acme', user: 'alice', role: 'user', actorPeer: null, workspace: null };
const embedder = new LexicalEmbedder({ dimension: 64 });

function input(over: Partial<ContextGatherInput> = {}): ContextGatherInput {
  return {
    scope,
    queries: ['what shipped'],
    imageUrl: null,
    filter: null,
    limit: 10,
    scoreThreshold: null,
    quotas: null,
    peerScope: 'all',
    penalties: { ...DEFAULT_OTHER_PEER_PENALTIES },
    excluded: [],
    asOf: null,
    ...over,
  };
}

const memory = (uri: string) => summary(uri, { contextType: 'memory', category: 'events', owner: 'alice' });

describe('toSearchLists', () => {
  it('maps node hits into the kernel’s three lists by context type', () => {
    const lists = toSearchLists([
      { uri: 'm', contextType: 'memory', level: 2, score: 0.9, abstract: 'a', overview: 'o', tags: [], category: 'events' },
      { uri: 's', contextType: 'skill', level: 2, score: 0.8, abstract: '', overview: 'so', tags: [], category: 'skills' },
    ]);
    expect(lists).toEqual({
      memories: [{ uri: 'm', score: 0.9, abstract: 'a', overview: 'o', category: 'events' }],
      resources: [],
      skills: [{ uri: 's', score: 0.8, abstract: '', overview: 'so', category: 'skills' }],
    });
  });
});

describe('gatherContext', () => {
  it('runs the flat search and the peer scan of one request as one store batch', async () => {
    const index = new FakeIndex(64, (q) => (q.visibility.openPeers ? [{ node: memory(`${U}/peers/bob/memories/events/b.md`), score: 0.6 }] : [{ node: memory(`${U}/memories/events/a.md`), score: 0.8 }]));
    const res = await gatherContext(input(), new NodeSearcher(index, embedder));
    expect(index.searches).toHaveLength(1);
    expect(index.searches[0].map((q) => [q.targets, q.visibility.openPeers, q.limit])).toEqual([
      [[], false, 10],
      [[`${U}/peers`], true, 40],
    ]);
    expect(res.batchSizes).toEqual([2]);
    expect(res.candidates.map((c) => [c.uri, c.origin, c.openContext])).toEqual([
      [`${U}/memories/events/a.md`, 'self', false],
      [`${U}/peers/bob/memories/events/b.md`, 'other_peer', true],
    ]);
  });

  it('batches every call of a bucketed request (queries × targets + peer scans) into one search', async () => {
    const index = new FakeIndex(64);
    const res = await gatherContext(
      input({ queries: ['q1', 'q2'], quotas: { events: 2, resources: 1, skills: 1 }, scope: { ...scope, actorPeer: 'bob' } }),
      new NodeSearcher(index, embedder),
    );
    // events: 2 targets + peer scan; resources: 3 targets; skills: 2 targets — per query.
    expect(index.searches.map((b) => b.length)).toEqual([16]);
    expect(res.searched).toEqual({ events: 0, resources: 0, skills: 0 });
    const filters = index.searches[0].map((q: SearchQuery) => JSON.stringify(q.filter));
    expect(new Set(filters)).toEqual(
      new Set(['memory', 'resource', 'skill'].map((t) => JSON.stringify({ op: 'must', field: 'context_type', conds: [t] }))),
    );
  });

  it('rejects a blank query with the contract’s message and reason EMPTY_QUERY', async () => {
    const err = await gatherContext(input({ queries: ['  '] }), new NodeSearcher(new FakeIndex(64), embedder)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as Error).message).toBe(EMPTY_QUERY_MESSAGE);
    expect(reasonOf(err as InvalidArgumentError)).toBe('EMPTY_QUERY');
  });

  it('rejects an image-only query on a text-only embedder, naming it, without searching', async () => {
    const index = new FakeIndex(64);
    const err = await gatherContext(input({ queries: [''], imageUrl: 'data:image/png;base64,AAAA' }), new NodeSearcher(index, embedder)).catch((e: unknown) => e);
    expect(reasonOf(err as InvalidArgumentError)).toBe('IMAGE_QUERY_UNSUPPORTED');
    expect((err as Error).message).toMatch(/image-capable embedder.*lexical-v1-d64.*text-only — send a text query/);
    expect(index.searches).toEqual([]);
  });

  it('searches the text when both a query and an image are given', async () => {
    const index = new FakeIndex(64);
    await gatherContext(input({ imageUrl: 'https://x/y.png', peerScope: 'actor' }), new NodeSearcher(index, embedder));
    expect(index.searches[0].map((q) => q.text)).toEqual(['what shipped']);
  });

  it('turns a store filter refusal into a BAD_FILTER rejection, and other store errors into retrieval errors', async () => {
    const refusal = Object.assign(new Error("unsupported filter field 'x'"), { name: 'UnsupportedFilterError' });
    expect(isUnsupportedFilter(refusal)).toBe(true);
    const bad = await gatherContext(input(), new NodeSearcher(new FakeIndex(64, () => refusal), embedder)).catch((e: unknown) => e);
    expect(reasonOf(bad as InvalidArgumentError)).toBe('BAD_FILTER');

    const down = await gatherContext(input({ peerScope: 'actor' }), new NodeSearcher(new FakeIndex(64, () => new Error('disk I/O error')), embedder));
    expect(down.candidates).toEqual([]);
    expect(down.retrievalErrors).toEqual(['Error: disk I/O error']);
  });

  it('passes as_of to every search', async () => {
    const index = new FakeIndex(64);
    await gatherContext(input({ asOf: 1234 }), new NodeSearcher(index, embedder));
    expect(index.searches[0].map((q) => q.asOf)).toEqual([1234, 1234]);
  });
});
