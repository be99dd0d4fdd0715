import type { BenchQuery } from './corpus';
import type { BenchReport } from './report';
import { addNotes, balancedQueries, DEFAULT_SECTIONS, parseArgs, parseMeshEnv, SECTIONS, throughputSize, UsageError } from './run';
import { summarize } from './stats';

describe('parseArgs', () => {
  it('defaults to the full run: 1k, 10k and 100k nodes, every section but those run on request', () => {
    const o = parseArgs([]);
    expect(o.quick).toBe(false);
    expect(o.sizes).toEqual([1_000, 10_000, 100_000]);
    expect([...o.sections]).toEqual([...DEFAULT_SECTIONS]);
    expect(SECTIONS.filter((s) => !o.sections.has(s))).toEqual(['lexical']);
    expect([...parseArgs(['--only', 'lexical']).sections]).toEqual(['lexical']);
    expect(o.out.endsWith('bench/results/latest.json')).toBe(true);
    expect(o.markdownFrom).toBeNull();
  });

  it('shrinks sizes and durations with --quick', () => {
    const full = parseArgs([]);
    const q = parseArgs(['--quick']);
    expect(q.sizes).toEqual([1_000, 10_000]);
    expect(q.queries).toBeLessThan(full.queries);
    expect(q.throughputSeconds).toBeLessThan(full.throughputSeconds);
    expect(q.ingestDocs).toBeLessThan(full.ingestDocs);
  });

  it('reads --mesh-env as NAME=value pairs for every measured mesh, and refuses anything else', () => {
    expect(parseArgs([]).meshEnv).toEqual({});
    expect(parseArgs(['--mesh-env', 'CTXMESH_IN_PROCESS_CALLS=off,CTXMESH_SEARCH_THREAD=off']).meshEnv).toEqual({ CTXMESH_IN_PROCESS_CALLS: 'off', CTXMESH_SEARCH_THREAD: 'off' });
    expect(parseMeshEnv('A_B=x=y')).toEqual({ A_B: 'x=y' });
    expect(() => parseArgs(['--mesh-env', 'lowercase=1'])).toThrow(UsageError);
    expect(() => parseMeshEnv('NOVALUE')).toThrow(/NAME=value/);
  });

  it('reads --flag value and --flag=value, sorts sizes, and filters sections', () => {
    const o = parseArgs(['--sizes=10000,1000', '--queries', '7', '--only', 'latency,budget', '--skip=budget']);
    expect(o.sizes).toEqual([1_000, 10_000]);
    expect(o.queries).toBe(7);
    expect([...o.sections]).toEqual(['latency']);
  });

  it('takes NATS and the dataset from the environment unless told otherwise', () => {
    expect(parseArgs([], { NATS_URL: 'nats://x:1', MADIAL_DIR: '/d' })).toMatchObject({ natsUrl: 'nats://x:1', madialDir: '/d' });
    expect(parseArgs(['--no-nats'], { NATS_URL: 'nats://x:1' }).natsUrl).toBeNull();
  });

  it('rejects unknown flags, bad numbers and unknown sections', () => {
    expect(() => parseArgs(['--fast'])).toThrow(UsageError);
    expect(() => parseArgs(['--sizes', '10,abc'])).toThrow(UsageError);
    expect(() => parseArgs(['--queries', '0'])).toThrow(UsageError);
    expect(() => parseArgs(['--only', 'latency,speed'])).toThrow(/speed/);
    expect(() => parseArgs(['quick'])).toThrow(UsageError);
  });

  it('applies flags in order, the last one winning', () => {
    expect([...parseArgs(['--skip', 'latency', '--only', 'latency,budget']).sections]).toEqual(['latency', 'budget']);
    expect([...parseArgs(['--only', 'latency,budget', '--skip', 'latency']).sections]).toEqual(['budget']);
    expect(parseArgs(['--queries', '3', '--queries=5']).queries).toBe(5);
  });

  it('names the word that is out of place, and a value-taking flag takes the next word', () => {
    expect(() => parseArgs(['-q'])).toThrow("unexpected argument '-q'");
    expect(() => parseArgs(['--sizes', '10', 'x'])).toThrow("unexpected argument 'x'");
    expect(() => parseArgs(['--fast=1'])).toThrow("unknown flag '--fast'");
    expect(() => parseArgs(['--queries', '--quick'])).toThrow("--queries takes a positive integer, got '--quick'");
    expect(() => parseArgs(['--queries'])).toThrow("--queries takes a positive integer, got ''");
    expect(parseArgs(['--nats']).natsUrl).toBeNull();
  });

  it('prints the markdown of an existing report with --markdown or --from', () => {
    expect(parseArgs(['--markdown', '--out', '/tmp/r.json']).markdownFrom).toBe(parseArgs(['--out', '/tmp/r.json']).out);
    expect(parseArgs(['--from', '/tmp/x.json']).markdownFrom).toBe('/tmp/x.json');
  });

  it('compares two reports with --against, and only when there is a report to print', () => {
    const o = parseArgs(['--markdown', '--from', '/tmp/after.json', '--against', '/tmp/before.json']);
    expect(o.markdownFrom).toBe('/tmp/after.json');
    expect(o.markdownAgainst).toBe('/tmp/before.json');
    expect(parseArgs([]).markdownAgainst).toBeNull();
    expect(() => parseArgs(['--against', '/tmp/before.json'])).toThrow('--against compares two reports');
  });
});

describe('throughputSize', () => {
  it('takes the largest size not above the wanted one, else the smallest', () => {
    expect(throughputSize([1_000, 10_000, 100_000], 10_000)).toBe(10_000);
    expect(throughputSize([1_000, 5_000], 10_000)).toBe(5_000);
    expect(throughputSize([20_000, 50_000], 10_000)).toBe(20_000);
  });
});

describe('balancedQueries', () => {
  const q = (id: number, lang: 'en' | 'zh'): BenchQuery => ({ id, text: `q${id}`, lang, target: 't', targetKind: 'memory', targetIndex: id });

  it('alternates languages while both last, then fills with the other', () => {
    const qs = [q(0, 'en'), q(1, 'en'), q(2, 'en'), q(3, 'zh')];
    expect(balancedQueries(qs, 4).map((x) => x.id)).toEqual([0, 3, 1, 2]);
    expect(balancedQueries(qs, 2).map((x) => x.lang)).toEqual(['en', 'zh']);
  });
});

describe('addNotes', () => {
  const base = (): BenchReport => ({
    meta: { mode: 'full', startedAt: '', node: '', cpus: 2, loadAvgStart: [0, 0, 0], gitCommit: null, sizes: [10_000], queries: 1, argv: [] },
    corpus: { seed: 1 },
    sizes: {},
    notes: [],
    failures: {},
  });

  it('explains a missed latency target from the measured components', () => {
    const r = base();
    const g = summarize([40]);
    const p = summarize([10]);
    r.sizes['10000'] = {
      nodes: 10_000,
      points: 1,
      load: { docs: 1, ms: 1, docsPerSecond: 1, optimizeMs: null },
      latency: {
        endpoints: { context: { gateway: g, inProcess: p, ratioP50: 4, ratioP95: 4, errors: { gateway: 0, inProcess: 0 }, knownItemHit: 1 } },
        stages: { gateway: { gather: 20, tier_read: 5, budget_render: 3 }, inProcess: { gather: 8, tier_read: 1, budget_render: 0.5 } },
      },
      storeLegs: { hybrid: summarize([6]), denseOnly: summarize([1]), lexicalOnly: summarize([5]), lexicalThenDense: summarize([9]) },
      hops: { http: summarize([0.3]), grpc: summarize([2]), direct: summarize([0.01]) },
    };
    r.targets = [{ id: 'context-p50-10k', target: '', measured: 40, unit: 'ms', met: false, detail: '' }];
    addNotes(r);
    const note = r.notes.find((n) => n.startsWith('context-p50-10k'))!;
    expect(note).toContain('10 ms of kernel work in process + 30 ms of transport');
    // 40 ms total − 28 ms of orchestrator-timed stages.
    expect(note).toContain('leaves 12 ms for HTTP, the gateway');
    expect(note).toContain('Transport dominates');
  });

  it('points at the dense scan, with the measured smaller vectors, when the store dominates', () => {
    const r = base();
    const g = summarize([30]);
    const p = summarize([25]);
    r.sizes['100000'] = {
      nodes: 100_000,
      points: 1,
      load: { docs: 1, ms: 1, docsPerSecond: 1, optimizeMs: null },
      latency: {
        endpoints: { context: { gateway: g, inProcess: p, ratioP50: 1.2, ratioP95: 1.2, errors: { gateway: 0, inProcess: 0 }, knownItemHit: 1 } },
        stages: { gateway: {}, inProcess: { gather: 20 } },
      },
      storeLegs: { hybrid: summarize([15]), denseOnly: summarize([12]), lexicalOnly: summarize([2]), lexicalThenDense: summarize([9]) },
    };
    r.denseByDimension = { nodes: 100_000, byDimension: { '64': summarize([3]), '128': summarize([6]), '256': summarize([12]) } };
    r.targets = [{ id: 'context-p50-100k', target: '', measured: 30, unit: 'ms', met: false, detail: '' }];
    addNotes(r);
    const note = r.notes.find((n) => n.startsWith('context-p50-100k'))!;
    expect(note).toContain('The exact dense scan dominates');
    expect(note).toContain('12 ms at 256 dimensions, 6 ms at 128, 3 ms at 64');
    expect(r.notes.some((n) => n.startsWith('Vector size: '))).toBe(true);
  });

  it('flags throughput runs that completed no request', () => {
    const r = base();
    r.throughput = { nodes: 1, inProcessMesh: [{ connections: 64, seconds: 4, requests: 0, rps: 0, errors: 0, timeouts: 0, non2xx: 0, latencyMs: { p50: 0, p99: 0, mean: 0 }, cpu: {} }] };
    addNotes(r);
    expect(r.notes.some((n) => n.includes('concurrency 64') && n.includes('no request completed'))).toBe(true);
  });
});
