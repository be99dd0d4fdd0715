import { ProviderResponseError } from '@ctxmesh/provider';
import { parseRerankResponse, RerankClient } from './rerank';

describe('parseRerankResponse', () => {
  it('reads {results:[{index, relevance_score}]} (Jina, Cohere)', () => {
    expect(parseRerankResponse({ results: [{ index: 1, relevance_score: 0.8, document: { text: 'x' } }, { index: 0, relevance_score: 0.1 }] }, 2)).toEqual([
      { index: 1, score: 0.8 },
      { index: 0, score: 0.1 },
    ]);
  });

  it('reads a bare [{index, score}] array (TEI) and a {data:[…]} wrapper', () => {
    expect(parseRerankResponse([{ index: 0, score: 0.3 }], 1)).toEqual([{ index: 0, score: 0.3 }]);
    expect(parseRerankResponse({ data: [{ index: 0, relevance_score: 0.4 }] }, 1)).toEqual([{ index: 0, score: 0.4 }]);
  });

  it('accepts a response that leaves documents out', () => {
    expect(parseRerankResponse({ results: [{ index: 2, relevance_score: 0.9 }] }, 3)).toEqual([{ index: 2, score: 0.9 }]);
  });

  it.each([
    ['an unknown shape', { scores: [1] }],
    ['an index out of range', [{ index: 3, score: 0.1 }]],
    ['a negative index', [{ index: -1, score: 0.1 }]],
    ['a fractional index', [{ index: 0.5, score: 0.1 }]],
    ['a repeated index', [{ index: 0, score: 0.1 }, { index: 0, score: 0.2 }]],
    ['a missing score', [{ index: 0 }]],
    ['a non-object item', [0.5]],
  ])('rejects %s', (_name, body) => {
    expect(() => parseRerankResponse(body, 3)).toThrow(ProviderResponseError);
  });
});

describe('RerankClient.requestBody', () => {
  it('sends documents with top_n = every document in the documents style', () => {
    const c = new RerankClient({ url: 'http://r/rerank', apiKey: '', model: 'rr', style: 'documents' });
    expect(c.requestBody('q', ['a', 'b'])).toEqual({ model: 'rr', query: 'q', documents: ['a', 'b'], top_n: 2 });
  });

  it('sends texts and normalised scores in the TEI style', () => {
    const c = new RerankClient({ url: 'http://r/rerank', apiKey: '', model: '', style: 'tei' });
    expect(c.requestBody('q', ['a'])).toEqual({ query: 'q', texts: ['a'], raw_scores: false });
  });
});
