/** budget-render over real gRPC on port 0. */
import { budgetRender } from '@ctxmesh/proto';
import { Budget, callUnary, Code, connect } from '@ctxmesh/rpc';
import { startTestServer, type TestServer } from '@ctxmesh/testing';
import pino from 'pino';
import { countTokens, detailToWire, planAndRender } from '@ctxmesh/kernel';
import { createServer } from '../src';
import { closeExactPool, offloads } from '../src/domain/offload';

let srv: TestServer;
let client: budgetRender.BudgetRenderServiceClient;
beforeAll(async () => {
  srv = await startTestServer([createServer({ log: pino({ level: 'silent' }) })]);
  client = connect(budgetRender.BudgetRenderServiceClient, srv.address);
});
afterAll(async () => {
  client.close();
  await srv.close();
  await closeExactPool();
});

const call = <Req, Res>(m: (r: Req, md: never, o: never, cb: never) => unknown, req: Req) =>
  callUnary(m.bind(client) as never, req, Budget.ofMs(5000), { domain: 'budget-render', pass: [Code.INVALID_ARGUMENT] }) as Promise<Res>;

/** Five resources `r0…r4` scoring 0.9 down to 0.5, with the abstract `abstractOf(i)` and no body. */
function resources(abstractOf: (i: number) => string, over: (i: number) => Partial<budgetRender.PlanItem> = () => ({})): budgetRender.PlanItem[] {
  return Array.from({ length: 5 }, (_, i) => ({
    uri: `viking://resources/r${i}.md`,
    category: 'resources',
    score: 0.9 - i * 0.1,
    origin: 'self',
    isDirectory: false,
    abstract: abstractOf(i),
    overview: '',
    full: '',
    rankedScore: 0.9 - i * 0.1,
    ...over(i),
  }));
}

describe('BudgetRenderService', () => {
  it('BudgetRender.PlanRender - five 200-char resource abstracts at 64 tokens - two uri entries, three dropped', async () => {
    const items = resources(() => 'x'.repeat(200));
    const res = await call<budgetRender.PlanRenderRequest, budgetRender.PlanRenderResponse>(client.planRender, { items, maxTokens: 64, detail: undefined, tokenizer: '', packing: '', priors: [], explain: false, query: '' });
    expect(res.stats).toMatchObject({ returned: 2, dropped: 3, usedTokens: 43, perEntryCap: 24 });
    expect(res.stats?.tierCounts).toEqual([{ name: 'uri', count: 2 }]);
    expect(res.stats?.detail).toBeUndefined();
    expect(res.entries.map((e) => e.detail)).toEqual(['uri', 'uri']);
    expect(res.rendered).toBe(
      '<memory uri="viking://resources/r0.md" type="resources" score="0.90" detail="uri" />\n<memory uri="viking://resources/r1.md" type="resources" score="0.80" detail="uri" />',
    );
  });

  // Issue 12, item 2: an exact plan over large bodies runs in the worker thread, and gives the
  // same answer as the kernel in process; the event loop keeps turning meanwhile.
  it('BudgetRender.PlanRender - o200k_base over two 60,000-character bodies - the kernel\'s plan, off the event loop', async () => {
    const zh = '我们使用蓝绿发布部署网关在出现问题时切换流量回滚'.repeat(2_500);
    const items = [0, 1].map((i) => ({
      uri: `viking://resources/big${i}.md`,
      category: 'resources',
      score: 0.9 - i * 0.1,
      origin: 'self',
      isDirectory: false,
      abstract: `Big document ${i}`,
      overview: zh.slice(0, 2000),
      full: i === 0 ? zh : `${zh}尾`,
    }));
    expect(offloads('o200k_base', 120_000)).toBe(true);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const res = await callUnary(client.planRender.bind(client) as never, { items, maxTokens: 32000, detail: detailToWire('full'), tokenizer: 'o200k_base', packing: '', priors: [], explain: false }, Budget.ofMs(60_000), {
      domain: 'budget-render',
    }) as budgetRender.PlanRenderResponse;
    clearInterval(ticker);
    const want = planAndRender(
      items.map((i) => ({ candidate: { uri: i.uri, category: i.category, score: i.score, abstract: i.abstract, is_directory: false, origin: i.origin }, texts: { overview: i.overview, full: i.full } })),
      32000,
      'full',
      'o200k_base',
    );
    expect(res.rendered).toBe(want.rendered);
    expect(res.stats?.usedTokens).toBe(want.stats.used_tokens);
    expect(res.stats?.detail).toEqual(detailToWire('full'));
    expect(res.stats!.usedTokens).toBeLessThanOrEqual(32000);
    expect(countTokens(res.rendered, 'o200k_base')).toBeLessThanOrEqual(32000);
    expect(ticks).toBeGreaterThan(0);
  }, 60_000);

  it('BudgetRender.PlanRender - packing evidence - the abstracts served instead of bare URIs, priors and floor applied, one fate per item', async () => {
    const items = resources(
      (i) => `resource ${i} explains the deploy`,
      (i) => (i === 4 ? { rankedScore: 0.1 } : {}),
    );
    const res = await call<budgetRender.PlanRenderRequest, budgetRender.PlanRenderResponse>(client.planRender, {
      items,
      maxTokens: 400,
      detail: undefined,
      tokenizer: '',
      packing: 'evidence',
      priors: [{ name: 'resources', count: 3 }, { name: 'events', count: 1 }],
      bestScore: 0.95,
      explain: true,
      query: '',
    });
    // r4 ranks at 0.1, under the evidence floor (0.12; a best of 0.95 opens the block, a quarter of it is 0.2375): left out with room to spare.
    expect(res.entries.map((e) => [e.uri, e.detail])).toEqual([0, 1, 2, 3].map((i) => [`viking://resources/r${i}.md`, 'abstract']));
    expect(res.stats).toMatchObject({ belowFloor: 1, perEntryCap: 200, returned: 4 });
    expect(res.stats!.relevanceFloor).toBe(0.95 / 4);
    expect(res.fates.map((f) => f.fate)).toEqual(['served', 'served', 'served', 'served', 'noise_floor']);
    expect(res.fates[0].costs.find((c) => c.tier === 'overview')).toEqual({ tier: 'overview' });
    expect(res.fates[0].costs.find((c) => c.tier === 'abstract')!.tokens).toBeGreaterThan(0);
    await expect(
      call(client.planRender, { items: [], maxTokens: 100, detail: undefined, tokenizer: '', packing: 'dense', priors: [], explain: false, query: '' }),
    ).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_PACKING' });
  });

  it('BudgetRender.PlanRender - unknown tokenizer - INVALID_ARGUMENT', async () => {
    await expect(
      call(client.planRender, { items: [], maxTokens: 100, detail: undefined, tokenizer: 'gpt2-bogus', packing: '', priors: [], explain: false, query: '' }),
    ).rejects.toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'UNKNOWN_TOKENIZER' });
  });

  it('BudgetRender.CountTokens - estimate and o200k_base - contract examples and exact counts', async () => {
    const est = await call<budgetRender.CountTokensRequest, budgetRender.CountTokensResponse>(client.countTokens, { texts: ['abcd', 'abcde', '中文', '😀'], tokenizer: '' });
    expect(est.counts).toEqual([1, 2, 3, 2]);
    const exact = await call<budgetRender.CountTokensRequest, budgetRender.CountTokensResponse>(client.countTokens, { texts: ['hello world'], tokenizer: 'o200k_base' });
    expect(exact.counts).toEqual([2]);
  });

  it('BudgetRender.TrimPassages - budget below the memories - every passage dropped, total above budget', async () => {
    const res = await call<budgetRender.TrimPassagesRequest, budgetRender.TrimPassagesResponse>(client.trimPassages, {
      passages: [
        { id: 'p1', score: 0.9, text: 'a'.repeat(40) },
        { id: 'p2', score: 0.8, text: 'b'.repeat(40) },
      ],
      fixed: [{ id: 'm1', score: 1, text: 'c'.repeat(80) }],
      tokenBudget: 15,
      tokenizer: '',
    });
    expect(res).toEqual({ keptIds: [], passageTokens: [10, 10], fixedTokens: [20], tokensTotal: 20, droppedCount: 2 });
  });
});
