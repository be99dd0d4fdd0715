import type { NodeSummary, SearchHit } from '@ctxmesh/stores';
import { missingDocuments, passageDocOf } from '@ctxmesh/stores';
import { bucketByContextType, collapsePassages, mergeByUri, type NodeHit } from './hits';

const D = 'viking://resources/guide.md';

function node(uri: string, over: Partial<NodeSummary> = {}): NodeSummary {
  return {
    uri,
    docUri: uri,
    parentUri: uri.slice(0, uri.lastIndexOf('/')),
    contextType: 'resource',
    category: 'resources',
    level: 2,
    account: 'a',
    owner: '',
    peer: '',
    workspace: 'default',
    subject: '',
    tags: ['env=prod'],
    createdAt: 0,
    updatedAt: 0,
    validFrom: null,
    validTo: null,
    title: 't',
    abstract: `abstract of ${uri}`,
    contentHash: 'h',
    passageIndex: 0,
    links: [],
    overview: `overview of ${uri}`,
    ...over,
  };
}
const passage = (i: number): NodeSummary => node(`${D}#p${i}`, { docUri: D, passageIndex: i, abstract: '', overview: '' });
const hit = (n: NodeSummary, score: number): SearchHit => ({ node: n, score });
const nh = (uri: string, score: number, contextType: NodeHit['contextType'] = 'resource'): NodeHit => ({
  uri,
  contextType,
  level: 2,
  score,
  abstract: uri,
  overview: '',
  tags: [],
  category: '',
});

describe('passageDocOf', () => {
  it('names the document of a passage and nothing for whole nodes and sidecars', () => {
    expect(passageDocOf(passage(2))).toBe(D);
    expect(passageDocOf(node(D))).toBeNull();
    expect(passageDocOf(node('viking://resources/docs/.overview.md'))).toBeNull();
  });
});

describe('collapsePassages', () => {
  it('folds passages into their document with the best score and the document’s texts', () => {
    const out = collapsePassages([hit(passage(3), 0.8), hit(node('viking://resources/other.md'), 0.6), hit(passage(1), 0.5), hit(node(D), 0.4)]);
    expect(out.map((h) => [h.uri, h.score])).toEqual([
      [D, 0.8],
      ['viking://resources/other.md', 0.6],
    ]);
    expect(out[0]).toMatchObject({ abstract: `abstract of ${D}`, overview: `overview of ${D}`, level: 2, tags: ['env=prod'] });
  });

  it('takes a fetched document point when only passages hit', () => {
    const docs = new Map([[D, node(D, { abstract: 'the guide', overview: undefined })]]);
    expect(collapsePassages([hit(passage(2), 0.7)], docs)).toEqual([
      { uri: D, contextType: 'resource', level: 2, score: 0.7, abstract: 'the guide', overview: '', tags: ['env=prod'], category: 'resources' },
    ]);
  });

  it('keeps an orphan passage as its document with an empty abstract', () => {
    const out = collapsePassages([hit(passage(2), 0.7)]);
    expect(out.map((h) => [h.uri, h.abstract, h.score])).toEqual([[D, '', 0.7]]);
  });

  it('leaves directory sidecars as separate nodes and orders by score, ties by arrival', () => {
    const a = node('viking://resources/docs/.abstract.md', { level: 0 });
    const o = node('viking://resources/docs/.overview.md', { level: 1 });
    expect(collapsePassages([hit(a, 0.5), hit(o, 0.5), hit(node(D), 0.9)]).map((h) => [h.uri, h.level])).toEqual([
      [D, 2],
      [a.uri, 0],
      [o.uri, 1],
    ]);
  });

  it('counts a non-finite score as 0', () => {
    expect(collapsePassages([hit(node(D), Number.NaN)])[0].score).toBe(0);
  });
});

describe('missingDocuments', () => {
  it('lists documents of passages whose own point did not hit, once each', () => {
    const other = 'viking://resources/b.md';
    const hits = [hit(passage(1), 0.9), hit(passage(2), 0.8), hit(node(`${other}#p1`, { docUri: other, passageIndex: 1 }), 0.7), hit(node(other), 0.1)];
    expect(missingDocuments(hits)).toEqual([D]);
  });
});

describe('bucketByContextType', () => {
  it('splits by context type keeping order', () => {
    const b = bucketByContextType([nh('m1', 0.9, 'memory'), nh('r1', 0.8), nh('s1', 0.7, 'skill'), nh('m2', 0.6, 'memory')]);
    expect([b.memories.map((h) => h.uri), b.resources.map((h) => h.uri), b.skills.map((h) => h.uri)]).toEqual([['m1', 'm2'], ['r1'], ['s1']]);
  });
});

describe('mergeByUri', () => {
  it('keeps each URI’s best hit, sorts by score and cuts to the limit', () => {
    const merged = mergeByUri(
      [
        [nh('a', 0.5), nh('b', 0.4)],
        [nh('b', 0.9), nh('c', 0.3), nh('a', 0.2)],
      ],
      2,
    );
    expect(merged.map((h) => [h.uri, h.score])).toEqual([
      ['b', 0.9],
      ['a', 0.5],
    ]);
    expect(mergeByUri([[nh('a', 0.5)]], 0)).toEqual([]);
  });
});
