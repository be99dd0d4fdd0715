import { Budget, Code, CtxError } from '@ctxmesh/rpc';
import { LatencyEstimator, StageNotRunError, StageRunner, stagePriors, type OptionalStage } from './stages';

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe('LatencyEstimator', () => {
  it('uses the prior until runs are recorded, then the 90th percentile of the window', () => {
    const e = new LatencyEstimator({ rerank: 300 }, 10);
    expect(e.expectedMs('rerank')).toBe(300);
    expect(e.expectedMs('unknown')).toBe(0);
    for (let i = 1; i <= 10; i++) e.record('rerank', i * 10);
    expect(e.expectedMs('rerank')).toBe(100);
    for (let i = 0; i < 10; i++) e.record('rerank', 5);
    expect(e.expectedMs('rerank')).toBe(5);
  });
});

describe('StageRunner', () => {
  it('skips an optional stage without entering it when its expected cost does not fit the time budget', async () => {
    const c = clock();
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: 1000, estimator: new LatencyEstimator({ rerank: 8000 }), reserveMs: 20, now: c.now });
    let entered = false;
    const out = await r.optional('rerank', 8000, async () => {
      entered = true;
      return 1;
    });
    expect(out).toBeUndefined();
    expect(entered).toBe(false);
    expect(r.records).toEqual([{ stage: 'rerank', outcome: 'skipped', ms: 0, startMs: 0, reason: 'BUDGET_EXHAUSTED', optional: true }]);
    expect(r.degraded()).toEqual(['rerank']);
  });

  it('clamps an admitted stage to the time left minus the reserve', async () => {
    const c = clock();
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: 1000, estimator: new LatencyEstimator({ rewrite: 100 }), reserveMs: 20, now: c.now });
    c.advance(300);
    let given = 0;
    await r.optional('rewrite', 30_000, async (_b, timeoutMs) => {
      given = timeoutMs;
      return 'x';
    });
    expect(given).toBe(680);
  });

  it('runs optional stages with their own cap when there is no time budget', async () => {
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: null, estimator: new LatencyEstimator({}), reserveMs: 20 });
    let given = 0;
    expect(await r.optional('query_expansion', 5000, async (_b, t) => ((given = t), 'ok'))).toBe('ok');
    expect(given).toBe(5000);
  });

  it('degrades a failed or timed-out optional stage and never throws it', async () => {
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: null, estimator: new LatencyEstimator({}), reserveMs: 0 });
    expect(await r.optional('rerank', 100, async () => Promise.reject(new CtxError(Code.UNAVAILABLE, 'DOWN', 'down')))).toBeUndefined();
    expect(await r.optional('rewrite', 100, async () => Promise.reject(new CtxError(Code.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'slow')))).toBeUndefined();
    expect(r.records.map((x) => [x.stage, x.outcome])).toEqual([
      ['rerank', 'failed'],
      ['rewrite', 'timeout'],
    ]);
    expect(r.degraded()).toEqual(['rerank', 'rewrite']);
  });

  it('never skips a mandatory leg, even past the time budget, and propagates its errors', async () => {
    const c = clock();
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: 10, estimator: new LatencyEstimator({}), reserveMs: 0, now: c.now });
    c.advance(100);
    expect(await r.mandatory('gather', async () => 42)).toBe(42);
    await expect(r.mandatory('budget_render', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(r.records.map((x) => [x.stage, x.outcome, x.optional])).toEqual([
      ['gather', 'ok', false],
      ['budget_render', 'failed', false],
    ]);
  });

  it('does not name stages that were simply not configured as degraded', () => {
    const r = new StageRunner({ budget: Budget.ofMs(1000), timeBudgetMs: null, estimator: new LatencyEstimator({}), reserveMs: 0 });
    r.notRun('rerank', 'NOT_CONFIGURED');
    r.notRun('rewrite', 'NOT_REQUESTED');
    expect(r.degraded()).toEqual([]);
  });

  it('records a stage whose downstream says it is not set up as skipped, not degraded', async () => {
    const r = new StageRunner({ budget: Budget.ofMs(1000), timeBudgetMs: null, estimator: new LatencyEstimator({}), reserveMs: 0 });
    expect(await r.optional('rerank', 100, async () => Promise.reject(new StageNotRunError('NOT_CONFIGURED')))).toBeUndefined();
    r.notRun('graph_assist', 'NOTHING_TO_DO');
    expect(r.records.map((x) => [x.stage, x.outcome, x.reason])).toEqual([
      ['rerank', 'skipped', 'NOT_CONFIGURED'],
      ['graph_assist', 'skipped', 'NOTHING_TO_DO'],
    ]);
    expect(r.degraded()).toEqual([]);
  });

  it('reports the timings of the stages that ran only', async () => {
    const c = clock();
    const r = new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: 100, estimator: new LatencyEstimator({ rerank: 8000 }), reserveMs: 0, now: c.now });
    await r.mandatory('gather', async () => c.advance(12.345));
    await r.optional('rerank', 8000, async () => 1);
    expect(r.measuredTimings()).toEqual({ gather: 12.35 });
    expect(r.timings()).toEqual({ gather: 12.35, rerank: 0 });
  });
});

describe('stagePriors', () => {
  it('expects a stage that never ran to take its whole configured timeout', () => {
    const e = new LatencyEstimator(stagePriors({ expansionTimeoutMs: 5000, rewriteTimeoutMs: 30_000, queryRewriteTimeoutMs: 6000, rerankTimeoutMs: 8000, graphAssistTimeoutMs: 2000 }));
    expect(['query_expansion', 'rewrite', 'query_rewrite', 'rerank', 'graph_assist'].map((s) => e.expectedMs(s))).toEqual([5000, 30_000, 6000, 8000, 2000]);
    e.record('rerank', 40);
    expect(e.expectedMs('rerank')).toBe(40);
  });
});

describe('StageRunner.stage (a declared optional stage)', () => {
  const spec: OptionalStage<{ asked: boolean; configured: boolean; items: number }> = {
    name: 'rerank',
    fuseMs: () => 250,
    skipWhen: [
      ['NOT_REQUESTED', (f) => !f.asked],
      ['NOT_CONFIGURED', (f) => !f.configured],
      ['NOTHING_TO_DO', (f) => f.items === 0],
    ],
  };
  const runner = () => new StageRunner({ budget: Budget.ofMs(60_000), timeBudgetMs: null, estimator: new LatencyEstimator({}), reserveMs: 0 });

  it('records the first rule that holds as the skip and never enters the stage', async () => {
    for (const [facts, reason] of [
      [{ asked: false, configured: false, items: 0 }, 'NOT_REQUESTED'],
      [{ asked: true, configured: false, items: 0 }, 'NOT_CONFIGURED'],
      [{ asked: true, configured: true, items: 0 }, 'NOTHING_TO_DO'],
    ] as const) {
      const r = runner();
      let entered = false;
      expect(await r.stage(spec, facts, async () => ((entered = true), 1))).toBeUndefined();
      expect(entered).toBe(false);
      expect(r.records).toEqual([expect.objectContaining({ stage: 'rerank', outcome: 'skipped', reason, optional: true, ms: 0 })]);
      expect(r.degraded()).toEqual([]);
    }
  });

  it('runs the stage under its fuse when no rule holds', async () => {
    const r = runner();
    let given = 0;
    expect(await r.stage(spec, { asked: true, configured: true, items: 3 }, async (_b, t) => ((given = t), 'ok'))).toBe('ok');
    expect(given).toBe(250);
    expect(r.records).toEqual([expect.objectContaining({ stage: 'rerank', outcome: 'ok', optional: true })]);
  });
});
