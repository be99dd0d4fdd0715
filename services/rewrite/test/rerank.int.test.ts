/** RewriteService.Rerank over real gRPC, against a scripted /rerank endpoint on loopback. */
import { eventually } from '@ctxmesh/testing';
import { chatCompletionsUrl, defaultSettings, rerankUrl } from '../src';
import { modelSettings, startRewriteFixture, type RewriteFixture } from './fixture';
import { ScriptedProvider } from './scripted-provider';

const DOCS = [
  { id: 'a', text: 'lunch menu' },
  { id: 'b', text: 'kubectl rollout undo reverts a deployment' },
  { id: 'c', text: 'deploys run from CI' },
];

let provider: ScriptedProvider;
let fx: RewriteFixture;
beforeAll(async () => {
  provider = await ScriptedProvider.start();
  fx = await startRewriteFixture(modelSettings(provider.url));
});
afterEach(() => provider.reset());
afterAll(async () => {
  await fx.close();
  await provider.close();
});

describe('RewriteService.Rerank', () => {
  it('RewriteService.Rerank - Jina/Cohere {results:[{index, relevance_score}]} - OK scores by id, best first', async () => {
    provider.script({
      kind: 'json',
      body: {
        model: 'test-reranker',
        results: [
          { index: 1, relevance_score: 0.91, document: { text: DOCS[1].text } },
          { index: 2, relevance_score: 0.4 },
          { index: 0, relevance_score: 0.02 },
        ],
        usage: { total_tokens: 30 },
      },
    });
    const res = await fx.rerank({ query: 'undo a deploy', documents: DOCS, timeoutMs: 8000 });
    expect(res).toEqual({
      status: 'ok',
      scores: [
        { id: 'b', score: 0.91 },
        { id: 'c', score: 0.4 },
        { id: 'a', score: 0.02 },
      ],
    });
    const [req] = provider.requests;
    expect(req.path).toBe('/rerank');
    expect(req.headers.authorization).toBe('Bearer rk-test');
    expect(req.body).toEqual({ model: 'test-reranker', query: 'undo a deploy', documents: DOCS.map((d) => d.text), top_n: 3 });
  });

  it('RewriteService.Rerank - TEI bare [{index, score}] out of order - OK sorted descending', async () => {
    provider.script({
      kind: 'json',
      body: [
        { index: 0, score: 0.1 },
        { index: 2, score: 0.7 },
        { index: 1, score: 0.7 },
      ],
    });
    const res = await fx.rerank({ query: 'undo a deploy', documents: DOCS, timeoutMs: 8000 });
    // A tie keeps request order.
    expect(res.scores).toEqual([
      { id: 'b', score: 0.7 },
      { id: 'c', score: 0.7 },
      { id: 'a', score: 0.1 },
    ]);
  });

  it('RewriteService.Rerank - raw logits outside 0..1 - OK squashed into 0..1, order kept', async () => {
    provider.script({
      kind: 'json',
      body: {
        results: [
          { index: 0, relevance_score: -4 },
          { index: 1, relevance_score: 6 },
          { index: 2, relevance_score: 0 },
        ],
      },
    });
    const res = await fx.rerank({ query: 'q', documents: DOCS, timeoutMs: 8000 });
    expect(res.scores.map((s) => s.id)).toEqual(['b', 'c', 'a']);
    expect(res.scores[1].score).toBeCloseTo(0.5, 10);
    for (const s of res.scores) {
      expect(s.score).toBeGreaterThan(0);
      expect(s.score).toBeLessThan(1);
    }
  });

  it('RewriteService.Rerank - provider slower than timeout_ms - OK timeout with no scores, request aborted', async () => {
    provider.script({ kind: 'never' });
    expect(await fx.rerank({ query: 'q', documents: DOCS, timeoutMs: 150 })).toEqual({ scores: [], status: 'timeout' });
    await eventually(() => provider.requests[0]?.aborted);
  });

  it('RewriteService.Rerank - gRPC deadline shorter than timeout_ms - OK timeout before the deadline', async () => {
    provider.script({ kind: 'never' });
    expect(await fx.rerank({ query: 'q', documents: DOCS, timeoutMs: 8000 }, 2_000)).toEqual({ scores: [], status: 'timeout' });
    await eventually(() => provider.requests[0]?.aborted);
  });

  it.each([
    ['HTTP 500', { kind: 'text' as const, status: 500, text: 'oops' }],
    ['HTTP 502', { kind: 'text' as const, status: 502, text: 'bad gateway' }],
    ['an index out of range', { kind: 'json' as const, body: { results: [{ index: 7, relevance_score: 0.5 }] } }],
    ['a repeated index', { kind: 'json' as const, body: [{ index: 0, score: 0.5 }, { index: 0, score: 0.4 }] }],
    ['an unknown shape', { kind: 'json' as const, body: { scores: [0.1, 0.2, 0.3] } }],
  ])('RewriteService.Rerank - provider answers %s - OK failed with no scores', async (_name, answer) => {
    provider.script(answer);
    expect(await fx.rerank({ query: 'q', documents: DOCS, timeoutMs: 8000 })).toEqual({ scores: [], status: 'failed' });
  });

  it('RewriteService.Rerank - no documents - OK ok, no provider call', async () => {
    expect(await fx.rerank({ query: 'q', documents: [], timeoutMs: 8000 })).toEqual({ scores: [], status: 'ok' });
    expect(provider.requests).toHaveLength(0);
  });
});

describe('RewriteService.Rerank configuration', () => {
  it('RewriteService.Rerank - TEI style - OK sends {query, texts, raw_scores:false} without a model', async () => {
    const p = await ScriptedProvider.start();
    const f = await startRewriteFixture(
      defaultSettings({ rerank: { url: rerankUrl(`${p.url}/`), apiKey: '', model: '', style: 'tei' } }),
    );
    try {
      p.script({ kind: 'json', body: [{ index: 0, score: 0.3 }, { index: 1, score: 0.9 }] });
      const res = await f.rerank({ query: 'q', documents: DOCS.slice(0, 2), timeoutMs: 8000 });
      expect(res).toEqual({ status: 'ok', scores: [{ id: 'b', score: 0.9 }, { id: 'a', score: 0.3 }] });
      expect(p.requests[0].body).toEqual({ query: 'q', texts: [DOCS[0].text, DOCS[1].text], raw_scores: false });
      expect(p.requests[0].headers.authorization).toBeUndefined();
    } finally {
      await f.close();
      await p.close();
    }
  });

  it('RewriteService.Rerank - no rerank endpoint configured - OK off', async () => {
    const f = await startRewriteFixture(defaultSettings({ llm: { url: chatCompletionsUrl('http://127.0.0.1:9'), apiKey: '', model: 'm' } }));
    try {
      expect(await f.rerank({ query: 'q', documents: DOCS, timeoutMs: 8000 })).toEqual({ scores: [], status: 'off' });
    } finally {
      await f.close();
    }
  });
});
