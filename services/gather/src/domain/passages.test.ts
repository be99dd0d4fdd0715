import { FakeIndex, summary } from './__tests__/fake-index';
import { documentOf, linkedUris, linkFilter, MAX_FOLLOWED_LINKS } from './links';
import { candidatePoolSize, mergePoints, passageCandidates, passageText, queriesOf, subjectOf, workspaceScope } from './passages';
import type { CallerScope } from '@ctxmesh/stores';

const scope = (over: Partial<CallerScope> = {}): CallerScope => ({ account: 'acme', user: 'alice', role: 'user', actorPeer: null, workspace: null, ...over });
const hit = (uri: string, score: number, over = {}) => ({ node: summary(uri, over), score });
const vis = { account: 'acme', user: 'alice', actorPeer: null, openPeers: false, allUsers: false, workspace: 'default' };

describe('candidatePoolSize', () => {
  it('is max(4·topK, 40) by default, the asked size otherwise, never below topK nor above 400', () => {
    expect(candidatePoolSize(8, 0)).toBe(40);
    expect(candidatePoolSize(20, 0)).toBe(80);
    expect(candidatePoolSize(8, 12)).toBe(12);
    expect(candidatePoolSize(30, 5)).toBe(30);
    expect(candidatePoolSize(100, 1000)).toBe(400);
  });
});

describe('queriesOf', () => {
  it('drops blanks and repeats and rejects when nothing is left', () => {
    expect(queriesOf(['a', ' ', 'a', 'b'])).toEqual(['a', 'b']);
    expect(() => queriesOf(['  '])).toThrow('Search query or image_url must not be empty.');
  });
});

describe('workspaceScope', () => {
  it('falls back to the default workspace and keeps a named one', () => {
    expect(workspaceScope(scope()).workspace).toBe('default');
    expect(workspaceScope(scope({ workspace: 'proj' })).workspace).toBe('proj');
  });
});

describe('subjectOf', () => {
  it("defaults to the caller's user", () => {
    expect(subjectOf(scope(), '')).toBe('alice');
    expect(subjectOf(scope(), ' alice ')).toBe('alice');
  });
  it('lets root and admin name any subject but refuses another user for an ordinary user', () => {
    expect(subjectOf(scope({ role: 'root' }), 'carol')).toBe('carol');
    expect(subjectOf(scope({ role: 'admin' }), 'carol')).toBe('carol');
    expect(() => subjectOf(scope(), 'carol')).toThrow(expect.objectContaining({ name: 'AccessDeniedError', uri: 'viking://user/carol/memories' }));
  });
  it('refuses a subject that is not one URI segment', () => {
    for (const bad of ['a/b', '..x/', 'sp ace']) expect(() => subjectOf(scope({ role: 'root' }), bad)).toThrow(/subject must be/);
  });
});

describe('mergePoints', () => {
  it('keeps the best score per point URI, best first, ties in first appearance', () => {
    const out = mergePoints([
      [hit('viking://resources/a.md#p1', 0.5), hit('viking://resources/b.md', 0.4)],
      [hit('viking://resources/b.md', 0.9), hit('viking://resources/c.md', 0.5)],
    ]);
    expect(out.map((h) => [h.node.uri, h.score])).toEqual([
      ['viking://resources/b.md', 0.9],
      ['viking://resources/a.md#p1', 0.5],
      ['viking://resources/c.md', 0.5],
    ]);
  });
});

describe('passageCandidates', () => {
  it("drops a chunked document's own point, keeps its passages and unchunked documents", async () => {
    const long = 'viking://resources/long.md';
    const short = 'viking://resources/short.md';
    const index = new FakeIndex(4, () => [], new Map([[`${long}#p1`, summary(`${long}#p1`, { docUri: long, passageIndex: 1 })]]));
    const out = await passageCandidates(
      [hit(long, 0.9), hit(`${long}#p2`, 0.8, { docUri: long, passageIndex: 2 }), hit(short, 0.7)],
      index,
      vis,
    );
    expect(out).toEqual([
      { uri: `${long}#p2`, docUri: long, score: 0.8 },
      { uri: short, docUri: short, score: 0.7 },
    ]);
    expect(index.gets[0].uris).toEqual([`${long}#p1`, `${short}#p1`]);
  });
});

describe('passageText', () => {
  it("serves a chunk's body as stored and an unchunked document's prepared body", () => {
    expect(passageText({ uri: 'viking://resources/a.md#p2', body: '  chunk  ', passageIndex: 2 })).toBe('  chunk  ');
    expect(passageText({ uri: 'viking://resources/a.md', body: '  whole  ', passageIndex: 0 })).toBe('whole');
    expect(passageText({ uri: 'viking://user/alice/memories/m.md', body: 'fact\n<!-- MEMORY_FIELDS {"k":1} -->', passageIndex: 0 })).toBe('fact');
  });
});

describe('graph assist helpers', () => {
  it('maps a passage URI to its document', () => {
    expect(documentOf('viking://resources/a.md#p3')).toBe('viking://resources/a.md');
    expect(documentOf('viking://resources/a.md')).toBe('viking://resources/a.md');
  });
  it('follows links in seed order without the seeds themselves or repeats, at most the bound', () => {
    expect(linkedUris(['viking://a', 'viking://b'], [['viking://b', 'viking://c'], null, ['viking://c', 'viking://d']])).toEqual(['viking://c', 'viking://d']);
    const many = Array.from({ length: MAX_FOLLOWED_LINKS + 10 }, (_, i) => `viking://resources/n${i}`);
    expect(linkedUris(['viking://a'], [many])).toHaveLength(MAX_FOLLOWED_LINKS);
  });
  it("selects a linked document's points and anything under a linked directory", () => {
    expect(linkFilter(['viking://resources/x.md', 'viking://resources/dir'])).toEqual({
      op: 'or',
      conds: [
        { op: 'must', field: 'doc_uri', conds: ['viking://resources/x.md', 'viking://resources/dir'] },
        { op: 'prefix', field: 'uri', prefix: 'viking://resources/x.md/' },
        { op: 'prefix', field: 'uri', prefix: 'viking://resources/dir/' },
      ],
    });
  });
});
