import { Budget, Code, CtxError, type CallContext } from '@ctxmesh/rpc';
import { Metadata } from '@grpc/grpc-js';
import pino from 'pino';
import { defaultSettings } from './config';
import { createHandlers } from './server';

const LLM = { url: 'http://llm.invalid/v1/chat/completions', apiKey: '', model: 'm' };
const ctxOf = (budget: Budget): CallContext => ({ budget, log: pino({ level: 'silent' }), metadata: new Metadata(), requestId: 't' });
const hanging = ((_u: string, init: RequestInit) =>
  new Promise((_r, reject) => init.signal?.addEventListener('abort', () => reject(init.signal!.reason)))) as unknown as typeof fetch;
const DIGEST = {
  query: 'q',
  rendered: 'r',
  servedUris: ['viking://a.md'],
  maxBullets: 3,
  timeoutMs: 30_000,
  sources: [{ uri: 'viking://a.md', text: 'q is here.' }],
  onlyIfModel: false,
};

describe('createHandlers', () => {
  it('clamps the digest fuse to the budget in process and reports timeout', async () => {
    const h = createHandlers({ settings: defaultSettings({ llm: LLM }), fetch: hanging });
    const budget = Budget.ofMs(100);
    const res = await h.rewriteDigest(DIGEST, ctxOf(budget));
    budget.dispose();
    expect(res).toEqual({ status: 'timeout', digest: '', engine: 'model' });
  });

  it('reports failed (not timeout) when the caller cancels', async () => {
    const h = createHandlers({ settings: defaultSettings({ llm: LLM }), fetch: hanging });
    const cancel = new AbortController();
    const budget = Budget.ofMs(60_000, { signals: [cancel.signal] });
    const pending = h.expandQuery({ query: 'q', messages: [{ role: 'user', text: 'hi' }], archiveOverview: '', timeoutMs: 5000 }, ctxOf(budget));
    cancel.abort(new CtxError(Code.CANCELLED, 'CANCELLED', 'cancelled'));
    expect(await pending).toEqual({ status: 'failed', queries: ['q'], reason: 'CANCELLED' });
    budget.dispose();
  });

  it('answers timeout without calling the provider when the budget is already spent', async () => {
    let calls = 0;
    const counting = (async () => {
      calls++;
      return new Response('{}');
    }) as unknown as typeof fetch;
    const h = createHandlers({ settings: defaultSettings({ llm: LLM, rerank: { url: 'http://r/rerank', apiKey: '', model: 'x', style: 'documents' } }), fetch: counting });
    const budget = Budget.ofMs(0);
    expect(await h.rerank({ query: 'q', documents: [{ id: 'a', text: 't' }], timeoutMs: 100 }, ctxOf(budget))).toEqual({ scores: [], status: 'timeout' });
    expect(await h.rewriteQuery({ query: 'q', timeoutMs: 100 }, ctxOf(budget))).toEqual({ queries: ['q'], status: 'timeout' });
    expect(calls).toBe(0);
  });

  it('uses the extractive digest without a model and the default of six bullets for max_bullets 0', async () => {
    const h = createHandlers({ settings: defaultSettings() });
    const sources = Array.from({ length: 8 }, (_, i) => ({ uri: `viking://e${i}.md`, text: `Redis fact number ${i} is here.` }));
    const res = await h.rewriteDigest(
      { ...DIGEST, query: 'redis fact', servedUris: sources.map((s) => s.uri), sources, maxBullets: 0 },
      ctxOf(Budget.ofMs(1000)),
    );
    expect(res.status).toBe('ok');
    expect(res.engine).toBe('extractive');
    expect(res.digest.split('\n')).toHaveLength(1 + 6);
  });

  it('reports an extractive digest that finds nothing as failed, never no_relevant (rendered must be kept)', async () => {
    const h = createHandlers({ settings: defaultSettings() });
    const sources = [{ uri: 'viking://resources/a.md', text: 'We had lunch outside. The weather was nice.' }];
    const res = await h.rewriteDigest({ ...DIGEST, query: 'kubernetes rollback', servedUris: [sources[0].uri], sources, maxBullets: 3 }, ctxOf(Budget.ofMs(1000)));
    expect(res).toEqual({ status: 'failed', digest: '', engine: 'extractive' });
  });

  it('answers off without a model when only_if_model is set (rewrite "auto" is decided here)', async () => {
    const h = createHandlers({ settings: defaultSettings() });
    const sources = [{ uri: 'viking://resources/a.md', text: 'Redis fact here.' }];
    const res = await h.rewriteDigest({ ...DIGEST, query: 'redis fact', servedUris: [sources[0].uri], sources, onlyIfModel: true }, ctxOf(Budget.ofMs(1000)));
    expect(res).toEqual({ status: 'off', digest: '', engine: '' });
  });
});
