import { beforeAfterRows, cpuMsPerRequest, evaluateTargets, fmt, hostProbeText, markdownTable, medianOf, targetRows, textTable, type BenchReport } from './report';
import { summarize } from './stats';
import type { ThroughputRun } from './throughput';

function report(over: Partial<BenchReport> = {}): BenchReport {
  return {
    meta: { mode: 'quick', startedAt: '2026-01-01T00:00:00Z', node: 'v20', cpus: 2, loadAvgStart: [1, 1, 1], gitCommit: 'abc', sizes: [10_000], queries: 10, argv: [] },
    corpus: { seed: 1 },
    sizes: {},
    notes: [],
    failures: {},
    ...over,
  };
}

function latencyAt(gatewayMs: number[], inProcessMs: number[]) {
  const g = summarize(gatewayMs);
  const p = summarize(inProcessMs);
  return {
    endpoints: { context: { gateway: g, inProcess: p, ratioP50: g.p50 / p.p50, ratioP95: g.p95 / p.p95, errors: { gateway: 0, inProcess: 0 }, knownItemHit: 1 } },
    stages: { gateway: {}, inProcess: {} },
  };
}

function run(connections: number, rps: number, errors = 0): ThroughputRun {
  return { connections, seconds: 10, requests: rps * 10, rps, errors, timeouts: 0, non2xx: 0, latencyMs: { p50: 1, p99: 2, mean: 1 }, cpu: {} };
}

function ingest(docsPerSecond: number) {
  return { docs: 2000, applied: 2000, errors: 0, seconds: 2000 / docsPerSecond, docsPerSecond, writeMs: summarize([10]), concurrency: 16 };
}

describe('hostProbeText', () => {
  it('states the probe at the start and the end, and nothing for a report without one', () => {
    const base = report();
    expect(hostProbeText(base)).toBe('');
    const both = report({ meta: { ...base.meta, hostProbeMs: { start: 61.2, end: 140 } } });
    expect(hostProbeText(both)).toBe('host probe 61.2 ms at the start, 140 ms at the end (a fixed CPU workload: higher is a slower host), ');
    const started = report({ meta: { ...base.meta, hostProbeMs: { start: 61.2 } } });
    expect(hostProbeText(started)).toBe('host probe 61.2 ms at the start (a fixed CPU workload: higher is a slower host), ');
  });
});

describe('evaluateTargets', () => {
  it('marks each target met, not met, or not measured from the figures', () => {
    const r = report({
      sizes: {
        '10000': { nodes: 10_000, points: 12_000, load: { docs: 10_000, ms: 1, docsPerSecond: 1, optimizeMs: null }, latency: latencyAt([8, 9, 10], [6, 7, 8]) },
      },
      throughput: { nodes: 10_000, inProcessMesh: [run(1, 100), run(16, 450)], separateProcesses: [run(16, 300, 2)] },
      startup: { runs: [], healthyMsMedian: 4200, idleRssMiBMedian: 260 },
      ingest: { embedded: ingest(1200), nats: ingest(640) },
    });
    const t = Object.fromEntries(evaluateTargets(r).map((x) => [x.id, x]));
    expect(t['context-p50-10k']).toMatchObject({ measured: 9, met: false });
    expect(t['context-p50-100k']).toMatchObject({ measured: null, met: null });
    expect(t['mesh-ratio-10000']!.measured).toBeCloseTo(9 / 7, 10);
    expect(t['mesh-ratio-10000']!.met).toBe(true);
    expect(t['rps-c16']).toMatchObject({ measured: 450, met: true });
    expect(t['ingest-embedded']).toMatchObject({ measured: 1200, met: true });
    expect(t['ingest-nats']).toMatchObject({ measured: 640, met: false });
    expect(t['throughput-errors']).toMatchObject({ measured: 2, met: false });
    expect(t['start-healthy']).toMatchObject({ measured: 4.2, met: true });
    expect(t['start-rss']).toMatchObject({ measured: 260, met: false });
    expect(t['used-le-max']).toMatchObject({ measured: null, met: null });
    expect(t['madial-r5-zh']).toMatchObject({ met: null });
  });

  it('judges the docs corpus ingest only when the ingest section wrote it', () => {
    const ids = (r: BenchReport) => Object.fromEntries(evaluateTargets(r).map((x) => [x.id, x]));
    expect(ids(report({ ingest: { embedded: ingest(1200) } }))['docs-ingest-embedded']).toBeUndefined();
    const t = ids(report({ ingest: { docs: { embedded: ingest(300) } } }));
    expect(t['docs-ingest-embedded']).toMatchObject({ measured: 300, met: false });
    expect(t['docs-ingest-nats']).toMatchObject({ measured: null, met: null });
    expect(t['ingest-embedded']).toMatchObject({ measured: null, met: null });
  });

  it('judges the docs profile ANN recall at the largest size that measured it', () => {
    const ann = (rows: number, recall10: number) => ({ rows, buildMs: 1, recall10, ann: summarize([1]), exact: summarize([2]), crossoverRows: 1 });
    const size = (n: number, a?: ReturnType<typeof ann>) => ({ nodes: n, points: n * 5, load: { docs: n, ms: 1, docsPerSecond: 1, optimizeMs: null }, ...(a ? { ann: a } : {}) });
    const withAnn = (sizes: Record<string, ReturnType<typeof size>>) =>
      Object.fromEntries(evaluateTargets(report({ docs: { sizes, queries: 10 } } as Partial<BenchReport>)).map((x) => [x.id, x]))['docs-ann-recall'];
    expect(withAnn({ '10000': size(10_000, ann(50_000, 0.999)), '100000': size(100_000, ann(500_000, 0.97)) })).toMatchObject({ measured: 0.97, met: false });
    expect(withAnn({ '10000': size(10_000, ann(50_000, 0.99)), '100000': size(100_000) })).toMatchObject({ measured: 0.99, met: true });
    expect(withAnn({ '10000': size(10_000) })).toMatchObject({ measured: null, met: null });
  });

  it('judges the docs profile memory on the user\'s process when npm start served the 100k data, else the bench process', () => {
    const size = (n: number, rssMiB: number) => ({ nodes: n, points: n * 5, load: { docs: n, ms: 1, docsPerSecond: 1, optimizeMs: null }, rssMiB });
    const sizes = { '10000': size(10_000, 900), '100000': size(100_000, 1800) };
    const rss = (docs: object) => Object.fromEntries(evaluateTargets(report({ docs } as Partial<BenchReport>)).map((x) => [x.id, x]))['docs-rss-100k'];
    expect(rss({ sizes, queries: 10, startupOnData: { healthyMs: 900, idleRssMiB: 300, servedRssMiB: 1200, servedErrors: 0, exit: 'code 0' } })).toMatchObject({ measured: 1200, met: true });
    expect(rss({ sizes, queries: 10 })).toMatchObject({ measured: 1800, met: false });
  });

  it('judges the budget figures with their limits and reports the estimator error without a verdict', () => {
    const err = { samples: 3, meanSigned: 0.1, medianAbs: 0.2, p95Abs: 0.3, maxAbs: 0.4, underestimateShare: 0 };
    const r = report({
      budget: {
        nodes: 10_000,
        budgets: [64],
        requests: 1,
        errors: 0,
        maxUsedRatio: { estimate: 0.99, o200k_base: 1.01 },
        violations: { estimate: 0, o200k_base: 1 },
        maxExactRenderedRatio: 0.97,
        exactRenderedViolations: 0,
        estimateExactOverruns: 0,
        latency: { estimate: summarize([10]), o200k_base: summarize([13]), ratioP50: 1.3 },
        entryError: { en: err, zh: { ...err, medianAbs: 0.5 } },
        renderedError: { en: err, zh: err },
      },
    });
    const t = Object.fromEntries(evaluateTargets(r).map((x) => [x.id, x]));
    expect(t['used-le-max']).toMatchObject({ measured: 1.01, met: false });
    expect(t['exact-budget']).toMatchObject({ measured: 0.97, met: true });
    expect(t['exact-latency']).toMatchObject({ measured: 1.3, met: false });
    expect(t['estimator-error-zh']).toMatchObject({ measured: 0.5, met: null });
  });

  it('compares MADial recall@5 per language with its own threshold', () => {
    const scores = (recall5: number) => ({ cases: 160, recall5, recall10: 0.7, ndcg5: 0.5 });
    const r = report({
      madial: {
        protocol: '',
        ctxmesh: { user: { en: scores(0.56), zh: scores(0.58) }, all: {} },
        baselines: [],
        writes: { docs: 0, errors: 0 },
        searchErrors: 0,
        searchMs: summarize([1]),
      },
    });
    const t = Object.fromEntries(evaluateTargets(r).map((x) => [x.id, x]));
    expect(t['madial-r5-en']!.met).toBe(true);
    expect(t['madial-r5-zh']!.met).toBe(false);
    expect(targetRows(r).find((row) => row[0]!.startsWith('MADial') && row[0]!.includes('Chinese'))![2]).toBe('NOT met');
  });
});

describe('cpuMsPerRequest', () => {
  it('divides the mesh processes\' cores by the request rate, without the load generator', () => {
    const t = run(16, 100);
    t.cpu = { gather: { cpuSeconds: 5, cores: 0.5, share: 0.5 }, gateway: { cpuSeconds: 3, cores: 0.3, share: 0.3 }, loadgen: { cpuSeconds: 2, cores: 0.2, share: 0.2 } };
    expect(cpuMsPerRequest(t)).toBeCloseTo(8, 10);
    expect(cpuMsPerRequest(run(1, 0))).toBeNaN();
  });
});

describe('tables', () => {
  it('aligns plain-text columns under a rule', () => {
    const out = textTable([
      ['a', 'bb'],
      ['ccc', 'd'],
    ]).split('\n');
    expect(out).toEqual(['a    bb', '---  --', 'ccc  d']);
  });

  it('writes markdown with escaped pipes', () => {
    expect(markdownTable([['x', 'y'], ['1|2', '3']])).toBe('| x | y |\n|---|---|\n| 1\\|2 | 3 |');
  });

  it('formats numbers by magnitude and missing values as a dash', () => {
    expect(fmt(1234.5)).toBe('1,235');
    expect(fmt(123.4)).toBe('123');
    expect(fmt(12.34)).toBe('12.3');
    expect(fmt(1.234)).toBe('1.23');
    expect(fmt(0, 3)).toBe('0');
    expect(fmt(20_000)).toBe('20,000');
    expect(fmt(null)).toBe('–');
    expect(fmt(Number.NaN)).toBe('–');
  });

  it('takes the median of the runs that produced a value', () => {
    expect(medianOf([3, null, 1, 2])).toBe(2);
    expect(medianOf([4, 1])).toBe(2.5);
    expect(medianOf([null])).toBeNull();
  });
});

describe('beforeAfterRows', () => {
  const docsAt = (contextMs: number, rssMiB: number) => ({ nodes: 10_000, points: 52_000, load: { docs: 10_000, ms: 1, docsPerSecond: 1, optimizeMs: null }, latency: latencyAt([contextMs], [contextMs]), rssMiB });
  const before = report({
    meta: { ...report().meta, gitCommit: 'old', hostProbeMs: { start: 100, end: 110 } },
    docs: { seed: 1, queries: 10, sizes: { '10000': docsAt(20, 900) }, throughput: { nodes: 10_000, inProcessMesh: [run(16, 80, 1)] } },
    ingest: { docs: { embedded: ingest(200) } },
  } as Partial<BenchReport>);
  const after = report({
    meta: { ...report().meta, gitCommit: 'new' },
    docs: { seed: 1, queries: 10, sizes: { '10000': docsAt(10, 450), '100000': docsAt(30, 1200) }, throughput: { nodes: 10_000, inProcessMesh: [run(16, 120)] } },
    ingest: { docs: { embedded: ingest(250) } },
  } as Partial<BenchReport>);
  const rows = beforeAfterRows(before, after);
  const row = (label: string) => rows.find((r) => r[0] === label);

  it('heads the columns with the two commits and gives after/before where both measured', () => {
    expect(rows[0]).toEqual(['figure', 'before (old)', 'after (new)', 'after / before']);
    expect(row('context p50 via the gateway, 10,000 documents, ms')).toEqual(['context p50 via the gateway, 10,000 documents, ms', '20', '10', '0.500']);
    expect(row('context req/s at concurrency 16, 10,000 documents')).toEqual(['context req/s at concurrency 16, 10,000 documents', '80', '120', '1.500']);
    expect(row('  errors at concurrency 16')?.slice(1, 3)).toEqual(['1', '0']);
    expect(row('docs ingest, `wait:true` through the gateway, docs/s')?.slice(1)).toEqual(['200', '250', '1.250']);
  });

  it('shows a dash for a figure one report lacks, and the host probe of each', () => {
    expect(row('context p50 via the gateway, 100,000 documents, ms')).toEqual(['context p50 via the gateway, 100,000 documents, ms', '–', '30', '–']);
    expect(row('host probe ms, start → end (higher is a slower host)')?.slice(1, 3)).toEqual(['100 → 110', '–']);
  });
});
