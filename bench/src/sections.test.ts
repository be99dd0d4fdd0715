import { measureBudgetHonesty } from './budget';
import { NotCapturedError, type RequestCapture } from './capture';
import type { BenchQuery, CorpusDoc } from './corpus';
import type { JsonClient, JsonResponse } from './http';
import { ingestThroughGateway } from './ingest';
import type { InProcessKernel } from './inproc';
import { measureLatency } from './latency';

// The sections' bookkeeping against scripted gateways: what is counted, compared and reported
// for each kind of answer. (The real request path is covered by kernel.test.ts.)

type Handler = (path: string, body: Record<string, unknown>, headers?: Record<string, string>) => JsonResponse | Promise<JsonResponse>;

function fakeClient(handler: Handler): JsonClient & { calls: Array<{ path: string; body: Record<string, unknown> }> } {
  const calls: Array<{ path: string; body: Record<string, unknown> }> = [];
  const c = {
    calls,
    post: async (path: string, body: unknown, headers?: Record<string, string>) => {
      calls.push({ path, body: body as Record<string, unknown> });
      return handler(path, body as Record<string, unknown>, headers);
    },
  };
  return c as unknown as JsonClient & { calls: typeof calls };
}

const q = (id: number, lang: 'en' | 'zh', target = `viking://resources/t${id}.md`): BenchQuery => ({ id, text: `query ${id}`, lang, target, targetKind: 'resource', targetIndex: id });

describe('measureBudgetHonesty', () => {
  it('counts violations, overruns and estimator errors from the answers', async () => {
    // Scripted: the estimate answers at exactly the budget; o200k_base overshoots once.
    const client = fakeClient((_path, body) => {
      const max = body.max_tokens as number;
      const exact = body.tokenizer === 'o200k_base';
      const used = exact && max === 128 ? max + 1 : max;
      const rendered = body.query === 'query 1' ? '部署之前先检查灰度流量。' : 'deploy the canary first and watch it';
      return { status: 200, ms: exact ? 12 : 10, body: { result: { entries: [{ text: rendered }], rendered, stats: { used_tokens: used, max_tokens: max } } } };
    });
    const out = await measureBudgetHonesty(client, [q(0, 'en'), q(1, 'zh')], [64, 128]);
    expect(client.calls).toHaveLength(2 * 2 * 2);
    // The estimate side never names a tokenizer (the plugins' default request).
    expect(client.calls.filter((c) => !('tokenizer' in c.body))).toHaveLength(4);
    expect(out.requests).toBe(4);
    expect(out.errors).toBe(0);
    expect(out.violations).toEqual({ estimate: 0, o200k_base: 2 });
    expect(out.maxUsedRatio.estimate).toBe(1);
    expect(out.maxUsedRatio.o200k_base).toBeCloseTo(129 / 128, 10);
    expect(out.latency.ratioP50).toBeCloseTo(1.2, 10);
    expect(out.entryError.en.samples).toBe(2);
    expect(out.entryError.zh.samples).toBe(2);
    // The estimator weighs a Chinese character 1.5 tokens, more than o200k_base spends on it.
    expect(out.entryError.zh.meanSigned).toBeGreaterThan(0);
    expect(out.maxExactRenderedRatio).toBeGreaterThan(0);
  });

  it('counts failed requests without taking them into the figures', async () => {
    const client = fakeClient(() => ({ status: 500, ms: 1, body: { error: 'boom' } }));
    const out = await measureBudgetHonesty(client, [q(0, 'en')], [64]);
    expect(out.errors).toBe(2);
    expect(out.maxUsedRatio).toEqual({ estimate: null, o200k_base: null });
    expect(out.firstError).toContain('HTTP 500');
  });
});

describe('ingestThroughGateway', () => {
  it('sends every document with wait:true and counts applied and failed writes', async () => {
    const items = Array.from({ length: 10 }, (_, i) => ({ uri: `viking://resources/d${i}.md`, content: `c${i}` }) as CorpusDoc);
    const client = fakeClient((_p, body) => (body.uri === 'viking://resources/d3.md' ? { status: 503, ms: 1, body: { error: 'x' } } : { status: 200, ms: 5, body: { status: 'ok' } }));
    const out = await ingestThroughGateway(client, items, 4);
    expect(client.calls.map((c) => c.body.uri).sort()).toEqual(items.map((d) => d.uri).sort());
    expect(client.calls.every((c) => c.body.wait === true && c.body.mode === 'replace')).toBe(true);
    expect(out).toMatchObject({ docs: 10, applied: 9, errors: 1, concurrency: 4 });
    expect(out.firstError).toContain('d3.md');
    expect(out.writeMs.n).toBe(9);
  });
});

describe('measureLatency', () => {
  const queries = [q(0, 'en'), q(1, 'en'), q(2, 'zh')];

  function fakes(opts: { retrieveRoute: boolean }) {
    const capture = {
      capture: async (path: string, body: unknown) => {
        if (path === '/api/v1/retrieve' && !opts.retrieveRoute) throw new NotCapturedError(404, 'Route not found');
        return { method: 'x', request: { identity: { requestId: '' }, body } };
      },
    } as unknown as RequestCapture;
    let inProcessCalls = 0;
    const kernel = {
      assembleContext: async () => {
        inProcessCalls++;
        return { stages: [{ stage: 'gather', ms: 2 }, { stage: 'tier_read', ms: 1 }] };
      },
      search: async () => {
        inProcessCalls++;
        return {};
      },
      retrieve: async () => {
        inProcessCalls++;
        return {};
      },
    } as unknown as InProcessKernel;
    const client = fakeClient((path, body) => {
      const query = body.query as string;
      const target = queries.find((x) => x.text === query)!.target;
      // The first query's target is found; the others are not. One context call fails.
      const uri = query === 'query 0' ? target : 'viking://resources/other.md';
      if (path === '/api/v1/search/search' && body.mode === 'context' && query === 'query 2') return { status: 503, ms: 3, body: { error: 'x' } };
      return {
        status: 200,
        ms: 8,
        body: { result: { entries: [{ uri }], memories: [], resources: [{ uri }], skills: [] }, telemetry: { summary: { stages: [{ stage: 'gather', duration_ms: 5 }] } } },
      };
    });
    return { capture, kernel, client, calls: () => inProcessCalls };
  }

  it('measures both sides for every query and pass, and derives ratios, hits and stages', async () => {
    const f = fakes({ retrieveRoute: true });
    const out = await measureLatency(f.client, f.kernel, f.capture, queries, { reps: 2, warmup: 1 });
    const ctx = out.endpoints.context!;
    expect(ctx.inProcess!.n).toBe(6);
    // The failing context query is counted as an error, not as a sample.
    expect(ctx.gateway!.n).toBe(4);
    expect(ctx.errors).toEqual({ gateway: 2, inProcess: 0 });
    expect(ctx.note).toContain('HTTP 503');
    expect(out.endpoints.find!.gateway!.n).toBe(6);
    expect(out.endpoints.find!.knownItemHit).toBeCloseTo(1 / 3, 10);
    expect(out.endpoints.retrieve!.inProcess!.n).toBe(6);
    expect(ctx.ratioP50).toBeCloseTo(ctx.gateway!.p50 / ctx.inProcess!.p50, 10);
    expect(out.stages.gateway.gather).toBe(5);
    expect(out.stages.inProcess).toEqual({ gather: 2, tier_read: 1 });
    // 4 endpoints × (1 warm-up + 2 passes × 3 queries) in process.
    expect(f.calls()).toBe(4 * (1 + 6));
  });

  it('reports an endpoint the gateway does not serve as not measured on both sides', async () => {
    const f = fakes({ retrieveRoute: false });
    const out = await measureLatency(f.client, f.kernel, f.capture, queries, { reps: 1, warmup: 0 });
    const r = out.endpoints.retrieve!;
    expect(r.gateway).toBeNull();
    expect(r.inProcess).toBeNull();
    expect(r.ratioP50).toBeNull();
    expect(r.note).toContain('404');
    expect(f.client.calls.some((c) => c.path === '/api/v1/retrieve')).toBe(false);
  });
});
