/**
 * The report: its JSON shape, the targets every figure is compared with (met, not met, or
 * not measured — a target that is not met is a finding, never a reason to change the
 * measurement), and the short tables printed to the terminal and pasted into the README.
 */
import type { BudgetHonesty } from './budget';
import type { CalibrationReport } from './calibration';
import type { EvidenceReport, EvidenceRow, OffTopicRow } from './evidence';
import type { HooksResult } from './hooks';
import type { IngestResult } from './ingest';
import type { HopCosts, LatencyResult, StoreLegs } from './latency';
import type { LongmemReport } from './longmem';
import type { MadialReport } from './madial';
import type { SessionRescueResult } from './sessions';
import type { AnnMeasurement, LexicalAlternatives, LexicalEnginesReport } from './search-engines';
import type { StartupRun } from './startup';
import type { Summary } from './stats';
import { failedRequests, type ThroughputRun } from './throughput';

/** One corpus size's results. */
export interface SizeResult {
  /** Documents written. */
  nodes: number;
  /** Index points (documents + passages + sidecars). */
  points: number;
  /** Bulk load through the indexer's apply path (in process), for this increment. */
  load: { docs: number; ms: number; docsPerSecond: number; optimizeMs: number | null; denseMs?: number | null };
  latency?: LatencyResult;
  storeLegs?: StoreLegs;
  /** One HTTP and one gRPC round trip with no work behind them. */
  hops?: HopCosts;
  /** The lexical engines side by side on this size's rows (docs profile). */
  lexicalAlternatives?: LexicalAlternatives;
  /** The dense leg's HNSW index against the exact scan (docs profile). */
  ann?: AnnMeasurement;
  /** Resident memory of the bench process (which runs the whole mesh) after loading and searching this size, MiB. */
  rssMiB?: number;
  /** Section failures at this size. */
  errors?: string[];
}

/** The `docs` corpus profile's figures (issue 13): a real user's tree instead of short memories. */
export interface DocsProfileResult {
  /** Corpus seed. */
  seed: number;
  /** Queries generated (each used once). */
  queries: number;
  /** Per corpus size (documents); `points` is the record count the indexer made of them. */
  sizes: Record<string, SizeResult>;
  throughput?: BenchReport['throughput'];
  /** `npm start` on the loaded data of the largest size. */
  startupOnData?: StartupRun;
}

/** The whole report (`bench/results/latest.json`). */
export interface BenchReport {
  meta: {
    mode: 'quick' | 'full';
    startedAt: string;
    finishedAt?: string;
    durationS?: number;
    node: string;
    cpus: number;
    /** Variables `--mesh-env` added to every measured mesh (absent when none). */
    meshEnv?: Record<string, string>;
    /** 1/5/15-minute load averages at the start and the end of the run. */
    loadAvgStart: number[];
    loadAvgEnd?: number[];
    /**
     * The host probe (`host.ts`: a fixed CPU workload, median ms) at the start and the end: the
     * machine's speed when the figures were taken, which the load average does not show.
     * Absent in reports written before it existed.
     */
    hostProbeMs?: { start: number; end?: number };
    gitCommit: string | null;
    sizes: number[];
    queries: number;
    argv: string[];
  };
  corpus: { seed: number; kindsInFirst10k?: Record<string, number> };
  sizes: Record<string, SizeResult>;
  throughput?: {
    /** The corpus size the load ran against. */
    nodes: number;
    /** Every service in one process (`npm start`), load generator in a child. */
    inProcessMesh?: ThroughputRun[];
    /** `ctxmesh serve <service>` per service, NATS bus, shared SQLite file. */
    separateProcesses?: ThroughputRun[];
    errors?: string[];
  };
  /**
   * Ingest of the default corpus on each bus, and of the `docs` corpus (`docs`: absent when that
   * profile was not selected).
   */
  ingest?: { embedded?: IngestResult; nats?: IngestResult; docs?: { embedded?: IngestResult; nats?: IngestResult }; errors?: string[] };
  budget?: BudgetHonesty & { nodes: number };
  /** The `docs` corpus profile (absent when not run). */
  docs?: DocsProfileResult;
  madial?: MadialReport;
  /** Evidence recall of both packings on MADial, beside the list baseline. */
  evidence?: EvidenceReport;
  /** Long-memory context quality on synthetic multi-session conversations (`longmem` section). */
  longmem?: LongmemReport;
  /** The relevance score's fit and its held-out calibration (issue 19). */
  calibration?: CalibrationReport;
  startup?: { runs: StartupRun[]; healthyMsMedian: number | null; idleRssMiBMedian: number | null };
  /** Dense-only search at the largest size with smaller and larger vectors (synthetic indexes). */
  denseByDimension?: { nodes: number; byDimension: Record<string, Summary> };
  /** The Claude Code hook route per event (`hooks` section). */
  hooks?: HooksResult;
  /** Overflow recovery on a 100,000-event session, cold and warm (`sessions` section). */
  sessions?: SessionRescueResult;
  /** SQLite FTS5 fed the ranking's terms against the block-max index (`lexical` section, issue 21). */
  lexicalEngines?: LexicalEnginesReport;
  /** Notes: what would reach a missed latency target, sections not run, failures. */
  notes: string[];
  targets?: TargetRow[];
  /** Sections that failed, with the error. */
  failures: Record<string, string>;
}

/** One target and how the run compares with it. */
export interface TargetRow {
  /** Stable id. */
  id: string;
  /** The target in words. */
  target: string;
  /** The measured figure (null when not measured). */
  measured: number | null;
  /** Unit of `measured`. */
  unit: string;
  /** true = met, false = not met, null = not measured or report-only. */
  met: boolean | null;
  /** How it was measured. */
  detail: string;
}

function med(values: Array<number | null>): number | null {
  const v = values.filter((x): x is number => x !== null && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

/** Median of several runs' values (null when none). */
export function medianOf(values: Array<number | null>): number | null {
  return med(values);
}

function atMost(id: string, target: string, measured: number | null | undefined, limit: number, unit: string, detail: string): TargetRow {
  const m = measured === undefined || measured === null || !Number.isFinite(measured) ? null : measured;
  return { id, target, measured: m, unit, met: m === null ? null : m <= limit, detail };
}

function atLeast(id: string, target: string, measured: number | null | undefined, limit: number, unit: string, detail: string): TargetRow {
  const m = measured === undefined || measured === null || !Number.isFinite(measured) ? null : measured;
  return { id, target, measured: m, unit, met: m === null ? null : m >= limit, detail };
}

/** The host probe for a report's summary line ('' when the report has none). */
export function hostProbeText(r: BenchReport): string {
  const p = r.meta.hostProbeMs;
  if (!p) return '';
  return `host probe ${fmt(p.start)} ms at the start${p.end === undefined ? '' : `, ${fmt(p.end)} ms at the end`} (a fixed CPU workload: higher is a slower host), `;
}

/** Compare the report with the project's targets. */
export function evaluateTargets(r: BenchReport): TargetRow[] {
  const rows: TargetRow[] = [];
  const ctxAt = (n: number) => r.sizes[String(n)]?.latency?.endpoints.context;
  rows.push(atMost('context-p50-10k', 'context mode via gateway p50 ≤ 8 ms at 10,000 nodes', ctxAt(10_000)?.gateway?.p50, 8, 'ms', 'sequential requests over the query set, keep-alive HTTP'));
  rows.push(atMost('context-p50-100k', 'context mode via gateway p50 ≤ 25 ms at 100,000 nodes', ctxAt(100_000)?.gateway?.p50, 25, 'ms', 'sequential requests over the query set, keep-alive HTTP'));
  for (const n of Object.keys(r.sizes).map(Number).sort((a, b) => a - b)) {
    rows.push(atMost(`mesh-ratio-${n}`, `mesh ≤ 1.3× the kernel in process (context p50, ${n.toLocaleString('en-US')} nodes)`, ctxAt(n)?.ratioP50, 1.3, '×', 'same orchestrator requests, interleaved, same store instance'));
  }
  const c16 = r.throughput?.inProcessMesh?.find((t) => t.connections === 16);
  rows.push(atLeast('rps-c16', '≥ 300 requests/s of context mode at concurrency 16', c16?.rps, 300, 'req/s', `autocannon, npm-start topology, ${r.throughput?.nodes ?? '?'} nodes`));
  const runs = [...(r.throughput?.inProcessMesh ?? []), ...(r.throughput?.separateProcesses ?? [])];
  const errs = runs.length ? runs.reduce((s, t) => s + failedRequests(t), 0) : null;
  rows.push(atMost('throughput-errors', 'throughput runs: 0 errors (errors + timeouts + non-2xx)', errs, 0, 'errors', 'every throughput run, both topologies'));
  for (const [bus, how] of [['embedded', 'in-process bus'], ['nats', 'NATS JetStream']] as const) {
    const ing = r.ingest?.[bus];
    rows.push(atLeast(`ingest-${bus}`, `ingest ≥ 1,000 documents/s through the ${how}`, ing?.docsPerSecond, 1000, 'docs/s', ing ? `content/write wait:true, ${ing.concurrency} writers, ${ing.applied} of ${ing.docs} applied` : 'not measured'));
  }
  if (r.ingest?.docs) {
    for (const [bus, how] of [['embedded', 'in-process bus'], ['nats', 'NATS JetStream']] as const) {
      const ing = r.ingest.docs[bus];
      rows.push(atLeast(`docs-ingest-${bus}`, `docs profile: ingest ≥ 1,000 documents/s through the ${how}`, ing?.docsPerSecond, 1000, 'docs/s', ing ? `content/write wait:true, ${ing.concurrency} writers, ${ing.applied} of ${ing.docs} applied` : 'not measured'));
    }
  }
  rows.push(atMost('start-healthy', '`npm start` healthy in ≤ 5 s', r.startup ? (r.startup.healthyMsMedian === null ? null : r.startup.healthyMsMedian / 1000) : null, 5, 's', 'spawn → first 200 from /health, fresh data dir, median of runs'));
  rows.push(atMost('start-rss', '`npm start` ≤ 250 MB resident when idle', r.startup?.idleRssMiBMedian, 250, 'MiB', 'VmRSS after 5 s idle'));
  const b = r.budget;
  const usedMax = b ? Math.max(b.maxUsedRatio.estimate ?? -Infinity, b.maxUsedRatio.o200k_base ?? -Infinity) : null;
  rows.push(atMost('used-le-max', 'used_tokens ≤ max_tokens always', usedMax === -Infinity ? null : usedMax, 1, '× max', `largest used/max over ${b?.requests ?? 0} requests per tokenizer, budgets 64…8000`));
  rows.push(atMost('exact-budget', 'with tokenizer o200k_base the block fits max_tokens in exact tokens', b?.maxExactRenderedRatio, 1, '× max', 'largest exact o200k count of `rendered` / max_tokens'));
  rows.push({
    id: 'estimate-exact-overruns',
    target: 'report: with the default estimate, blocks over max_tokens in exact o200k tokens',
    measured: b ? b.estimateExactOverruns : null,
    unit: `of ${b?.requests ?? 0} responses`,
    met: null,
    detail: 'used_tokens is counted with the estimator; this counts the same blocks exactly',
  });
  rows.push(atMost('exact-latency', 'o200k_base at ≤ 1.2× the latency of the estimate', b?.latency.ratioP50, 1.2, '×', 'p50 ratio, same requests side by side'));
  rows.push({ id: 'estimator-error-en', target: 'report the estimator error vs exact o200k (English)', measured: b ? b.entryError.en.medianAbs : null, unit: 'median |rel. error|', met: null, detail: b ? `mean signed ${fmt(b.entryError.en.meanSigned)}, p95 |err| ${fmt(b.entryError.en.p95Abs)}, undercounts ${fmt(b.entryError.en.underestimateShare)} of ${b.entryError.en.samples} entries` : 'not measured' });
  rows.push({ id: 'estimator-error-zh', target: 'report the estimator error vs exact o200k (Chinese)', measured: b ? b.entryError.zh.medianAbs : null, unit: 'median |rel. error|', met: null, detail: b ? `mean signed ${fmt(b.entryError.zh.meanSigned)}, p95 |err| ${fmt(b.entryError.zh.p95Abs)}, undercounts ${fmt(b.entryError.zh.underestimateShare)} of ${b.entryError.zh.samples} entries` : 'not measured' });
  rows.push(...evidenceTargets(r.evidence));
  const d = r.docs;
  if (d) {
    const dctx = (n: number) => d.sizes[String(n)]?.latency?.endpoints.context?.gateway?.p50;
    rows.push(atMost('docs-context-p50-10k', 'docs profile: context mode via gateway p50 ≤ 8 ms at 10,000 documents', dctx(10_000), 8, 'ms', `${fmt(d.sizes['10000']?.points)} records; sequential requests, each query once`));
    rows.push(atMost('docs-context-p50-100k', 'docs profile: context mode via gateway p50 ≤ 25 ms at 100,000 documents', dctx(100_000), 25, 'ms', `${fmt(d.sizes['100000']?.points)} records; sequential requests, each query once`));
    const d16 = d.throughput?.inProcessMesh?.find((t) => t.connections === 16);
    rows.push(atLeast('docs-rps-c16', 'docs profile: ≥ 300 context requests/s at concurrency 16', d16?.rps, 300, 'req/s', `autocannon, npm-start topology, ${fmt(d.throughput?.nodes)} documents`));
    const druns = [...(d.throughput?.inProcessMesh ?? []), ...(d.throughput?.separateProcesses ?? [])];
    rows.push(atMost('docs-throughput-errors', 'docs profile: throughput runs with 0 errors', druns.length ? druns.reduce((s, t) => s + failedRequests(t), 0) : null, 0, 'errors', 'every throughput run, both topologies'));
    // The user's process: `npm start` on the 100k data after serving context requests; else the bench process.
    const served = d.startupOnData?.servedRssMiB;
    const largestDocs = Math.max(...Object.keys(d.sizes).map(Number));
    const rss100k = served != null && largestDocs === 100_000 ? served : d.sizes['100000']?.rssMiB;
    const rssHow = served != null && largestDocs === 100_000 ? '`npm start` on the loaded data after serving context requests' : 'the bench process running the whole mesh, after loading and searching';
    rows.push(atMost('docs-rss-100k', 'docs profile: resident memory ≤ 1.5 GB at 100,000 documents', rss100k, 1536, 'MiB', rssHow));
    const annAt = Object.entries(d.sizes).filter(([, s]) => s?.ann).sort(([a], [b]) => Number(b) - Number(a))[0];
    rows.push(atLeast('docs-ann-recall', 'docs profile: HNSW dense leg recall@10 ≥ 0.98 against the exact scan', annAt?.[1]?.ann?.recall10, 0.98, '', annAt ? `${fmt(annAt[1]?.ann?.rows)} rows (${annAt[0]} documents); ties at the 10th exact score count as found` : 'not measured'));
    const st = d.startupOnData;
    rows.push(atMost('docs-start-healthy', 'docs profile: `npm start` healthy in ≤ 5 s on the loaded data', st?.healthyMs == null ? null : st.healthyMs / 1000, 5, 's', 'spawn → first 200 from /health on the largest loaded index'));
  }
  const sr = r.sessions;
  const phases = sr ? `store read ${fmt(sr.coldPhasesMs.storeRead)} + parse ${fmt(sr.coldPhasesMs.parse)} + projection and ranges ${fmt(sr.coldPhasesMs.projectAndRanges)} + plan ${fmt(sr.coldPhasesMs.plan)} ms (cold phases, medians)` : 'not measured';
  rows.push(atMost('rescue-cold-100k', 'overflow recovery p50 ≤ 50 ms on a 100,000-event session, cold', sr?.recoverColdMs.p50, 50, 'ms', phases));
  rows.push(atMost('rescue-warm-100k', 'overflow recovery p50 ≤ 50 ms on a 100,000-event session, warm', sr?.recoverWarmMs.p50, 50, 'ms', sr ? `same replica, view up to date, ${sr.reps} reps` : 'not measured'));
  const prompt = r.hooks?.events.UserPromptSubmit;
  rows.push(atMost('hooks-prompt-p99', 'hook route: UserPromptSubmit p99 within the hook budget (1,500 ms)', prompt?.latencyMs.p99, 1500, 'ms', prompt ? `p50 ${fmt(prompt.latencyMs.p50)} ms, ${prompt.empty} empty answers of ${prompt.latencyMs.n}` : 'not measured'));
  rows.push(atLeast('madial-r5-zh', 'MADial-Bench recall@5 ≥ 0.59 (Chinese, built-in lexical embedder)', r.madial?.ctxmesh.user.zh?.recall5, 0.59, '', 'per-user pool (the baselines\' protocol), through /find'));
  rows.push(atLeast('madial-r5-en', 'MADial-Bench recall@5 ≥ 0.55 (English, built-in lexical embedder)', r.madial?.ctxmesh.user.en?.recall5, 0.55, '', 'per-user pool (the baselines\' protocol), through /find'));
  return rows;
}

/** A row of the evidence table by its coordinates. */
function evidenceRow(rows: readonly EvidenceRow[], x: Pick<EvidenceRow, 'lang' | 'pool' | 'split' | 'body' | 'budget'>, arm: EvidenceRow['arm']): EvidenceRow | undefined {
  return rows.find((y) => y.lang === x.lang && y.pool === x.pool && (y.split ?? 'all') === (x.split ?? 'all') && y.body === x.body && y.budget === x.budget && y.arm === arm);
}

/**
 * The evidence targets (issue 11): recall and precision at least the list baseline's in every
 * configuration, twice compat's recall with the plugin body at 1600 tokens, at most 5 % bare
 * URIs, and the evidence p50 within 1.2× compat's on the same requests.
 */
export function evidenceTargets(e: EvidenceReport | undefined): TargetRow[] {
  // Judged on the held-out split when the report has one (the relevance score is fitted on the rest).
  const all = e?.rows ?? [];
  const rows = all.some((x) => x.split === 'heldout') ? all.filter((x) => x.split === 'heldout') : all;
  const ev = rows.filter((x) => x.arm === 'evidence');
  const gap = (metric: 'recall' | 'precision') => {
    const d = ev.map((x) => {
      const b = evidenceRow(rows, x, 'baseline');
      return b ? x[metric] - b[metric] : null;
    });
    const v = d.filter((x): x is number => x !== null && Number.isFinite(x));
    return v.length ? Math.min(...v) : null;
  };
  const worst = (metric: 'recall' | 'precision') => {
    let w: EvidenceRow | undefined;
    for (const x of ev) {
      const b = evidenceRow(rows, x, 'baseline');
      if (b && (!w || x[metric] - b[metric] < w[metric] - evidenceRow(rows, w, 'baseline')![metric])) w = x;
    }
    return w ? `lowest at ${w.lang}/${w.pool}/${w.body}/${w.budget}` : 'not measured';
  };
  const plugin = ev.filter((x) => x.body === 'plugin' && x.budget === 1600);
  const ratios = plugin.map((x) => {
    const c = evidenceRow(rows, x, 'compat');
    if (!c) return null;
    return c.recall > 0 ? x.recall / c.recall : x.recall > 0 ? Infinity : null;
  });
  const rv = ratios.filter((x): x is number => x !== null);
  const uriShare = ev.length ? Math.max(...ev.map((x) => x.uriShare)) : null;
  return [
    atLeast('evidence-recall', 'evidence recall ≥ the list-packing baseline (every budget, language, body, pool)', gap('recall'), 0, 'Δ recall (min)', `MADial, 400/1600/4000 tokens; ${worst('recall')}`),
    atLeast('evidence-plugin-2x', 'evidence recall ≥ 2 × compat with the plugin body at 1600 tokens', rv.length ? Math.min(...rv) : null, 2, '× compat (min)', 'both languages and pools (a compat recall of 0 is not a ratio and is left out)'),
    atMost('evidence-uri-share', 'bare-URI entries ≤ 5 % of served entries (evidence)', uriShare, 0.05, 'share (max)', 'every evidence configuration'),
    atLeast('evidence-precision', 'evidence precision ≥ the list-packing baseline', gap('precision'), 0, 'Δ precision (min)', `gold entries with text / entries served; ${worst('precision')}`),
    atMost('evidence-p50', 'evidence p50 ≤ 1.2 × compat on the same requests', e?.latency.ratio, 1.2, '×', 'every context request of the section, compat and evidence alternating'),
    ...noiseFloorTargets(rows, e?.offTopic ?? []),
    ...beatTheListTargets(rows),
  ];
}

/**
 * Issue 20's targets, on the held-out split (per-user pool, both languages and bodies): evidence
 * recall ≥ 1.15 × the list's at 400 and 1600 tokens and ≥ 1.05 × at 4000, markup ≤ 20 % of the
 * used tokens at 1600, and a token precision (gold text over served text) not below the list's.
 */
export function beatTheListTargets(rows: readonly EvidenceRow[]): TargetRow[] {
  const ev = rows.filter((x) => x.arm === 'evidence' && x.pool === 'user');
  const ratio = (budgets: readonly number[]) => {
    const v = ev
      .filter((x) => budgets.includes(x.budget))
      .map((x) => {
        const b = evidenceRow(rows, x, 'baseline');
        return b && b.recall > 0 ? x.recall / b.recall : null;
      })
      .filter((x): x is number => x !== null && Number.isFinite(x));
    return v.length ? Math.min(...v) : null;
  };
  const markup = ev.filter((x) => x.budget === 1600).map((x) => x.markupShare);
  const precisionGap = ev
    .map((x) => {
      const b = evidenceRow(rows, x, 'baseline');
      return b ? x.tokenPrecision - b.tokenPrecision : null;
    })
    .filter((x): x is number => x !== null && Number.isFinite(x));
  return [
    atLeast('beat-list-recall', 'evidence recall ≥ 1.15 × the list at 400 and 1600 tokens (held-out, per-user pool)', ratio([400, 1600]), 1.15, '× list (min)', 'both languages and bodies'),
    atLeast('beat-list-recall-4000', 'evidence recall ≥ 1.05 × the list at 4000 tokens', ratio([4000]), 1.05, '× list (min)', 'both languages and bodies'),
    atMost('markup-share', 'markup ≤ 20 % of used tokens at 1600 (evidence)', markup.length ? Math.max(...markup) : null, 0.2, 'share (max)', 'tags, attributes, group lines and separators over stats.used_tokens'),
    atLeast('token-precision', 'evidence token precision ≥ the list\'s', precisionGap.length ? Math.min(...precisionGap) : null, 0, 'Δ (min)', 'tokens of gold texts over tokens of served texts'),
  ];
}

/**
 * The noise-floor targets (issue 19), on the held-out split at 1600 tokens: the plugin's body
 * (its 0.35 threshold) keeps ≥ 0.95 of the recall of the bare body, the default install's plugin
 * body has at least the list baseline's recall, and off-topic questions get ≤ 10 % of the
 * on-topic tokens with ≥ 80 % empty blocks, for both bodies through the default packing.
 */
export function noiseFloorTargets(rows: readonly EvidenceRow[], offTopic: readonly OffTopicRow[]): TargetRow[] {
  const at = rows.filter((x) => x.budget === 1600 && x.pool === 'user');
  const min = (v: Array<number | null>) => {
    const f = v.filter((x): x is number => x !== null && Number.isFinite(x));
    return f.length ? Math.min(...f) : null;
  };
  const max = (v: Array<number | null>) => {
    const f = v.filter((x): x is number => x !== null && Number.isFinite(x));
    return f.length ? Math.max(...f) : null;
  };
  const pluginShare = min(
    at
      .filter((x) => x.arm === 'evidence' && x.body === 'plugin')
      .map((x) => {
        const bare = evidenceRow(rows, { ...x, body: 'bare' }, 'evidence');
        return bare && bare.recall > 0 ? x.recall / bare.recall : null;
      }),
  );
  const defaultGap = min(
    at
      .filter((x) => x.arm === 'default' && x.body === 'plugin')
      .map((x) => {
        const b = evidenceRow(rows, x, 'baseline');
        return b ? x.recall - b.recall : null;
      }),
  );
  const off = offTopic.filter((x) => x.split === (offTopic.some((y) => y.split === 'heldout') ? 'heldout' : 'all') && x.arm === 'default');
  return [
    atLeast('noise-plugin-share', "plugin body's recall ≥ 0.95 × the bare body's (evidence, 1600 tokens)", pluginShare, 0.95, '× (min)', 'held-out MADial dialogues, per-user pool, both languages'),
    atLeast('noise-default-vs-list', 'default install, plugin body: recall ≥ the list baseline of the same search', defaultGap, 0, 'Δ recall (min)', 'held-out, 1600 tokens, per-user pool, both languages'),
    atMost('noise-offtopic-tokens', 'off-topic questions get ≤ 10 % of the on-topic tokens (plugin and bare body)', max(off.map((x) => x.ratio)), 0.1, '× on-topic (max)', "default packing; another user's dialogues against each MADial user's store"),
    atLeast('noise-offtopic-empty', '≥ 80 % of off-topic questions get an empty block (plugin and bare body)', min(off.map((x) => x.empty)), 0.8, 'share (min)', 'default packing, held-out, both languages'),
  ];
}

/** Rows of the calibration curve (held-out hits: score bucket → share relevant, per language). */
export function calibrationRows(r: BenchReport): string[][] {
  const c = r.calibration;
  const rows: string[][] = [['score (held-out MADial hits)', 'hits en', 'relevant en', 'hits zh', 'relevant zh']];
  if (!c) return rows;
  c.curves.en.forEach((b, i) => {
    const z = c.curves.zh[i];
    rows.push([`${fmt(b.from, 2)} – ${fmt(b.to, 2)}`, String(b.hits), b.relevant === null ? '–' : `${fmt(100 * b.relevant, 1)} %`, String(z?.hits ?? 0), z?.relevant == null ? '–' : `${fmt(100 * z.relevant, 1)} %`]);
  });
  return rows;
}

/** Rows of the noise floor's held-out figures (per language and query form). */
export function calibrationFloorRows(r: BenchReport): string[][] {
  const rows: string[][] = [['at the noise floor (0.35, held-out)', 'lang', 'gold among hits kept', 'off-topic hits / on-topic hits', 'off-topic searches empty']];
  const label = { dialogue: 'whole dialogue as query', prompt: "user's last line as query" } as const;
  for (const x of r.calibration?.heldout ?? []) rows.push([label[x.form], x.lang, fmt(x.recall, 3), fmt(x.offVolume, 3), `${fmt(100 * x.offEmpty, 0)} %`]);
  // The evidence packing's own rule (issue 20): the noise floor gates a search, the evidence floor cuts its hits.
  const e = r.calibration?.evidenceFloor;
  if (e) {
    for (const x of e.heldout) rows.push([`${label[x.form]}: gate 0.35, evidence floor ${e.inForce} (refit on train: ${e.refit})`, x.lang, fmt(x.recall, 3), fmt(x.offVolume, 3), `${fmt(100 * x.offEmpty, 0)} %`]);
  }
  return rows;
}

/** Rows of the off-topic table. */
export function offTopicRows(r: BenchReport): string[][] {
  const rows: string[][] = [['lang', 'split', 'body', 'packing', 'tokens off-topic', 'tokens on-topic', 'off / on', 'empty off-topic', 'empty on-topic']];
  for (const x of r.evidence?.offTopic ?? []) {
    rows.push([x.lang, x.split, x.body, x.arm === 'baseline' ? 'list baseline' : x.arm, fmt(x.tokens), fmt(x.onTokens), fmt(x.ratio, 3), `${fmt(100 * x.empty, 0)} %`, `${fmt(100 * x.onEmpty, 0)} %`]);
  }
  return rows;
}

/** Rows of the evidence table. */
export function evidenceRows(r: BenchReport): string[][] {
  const rows: string[][] = [['lang', 'pool', 'split', 'body', 'budget', 'packing', 'recall', 'precision', 'token precision', 'markup', 'tokens used', 'entries', 'bare URIs', 'p50 ms']];
  const all = r.evidence?.rows ?? [];
  const shown = all.some((x) => x.split === 'heldout') ? all.filter((x) => x.split === 'heldout') : all;
  for (const x of shown) {
    rows.push([x.lang, x.pool, x.split ?? 'all', x.body, String(x.budget), x.arm === 'baseline' ? 'list baseline' : x.arm, fmt(x.recall, 3), fmt(x.precision, 3), fmt(x.tokenPrecision, 3), x.markupShare === undefined ? '–' : `${fmt(100 * x.markupShare, 0)} %`, fmt(x.tokens), fmt(x.entries), `${fmt(100 * x.uriShare, 1)} %`, fmt(x.p50Ms)]);
  }
  return rows;
}

/** Rows of the longmem table (the held-out split when the report has one). */
export function longmemRows(r: BenchReport): string[][] {
  const rows: string[][] = [['shape', 'lang', 'split', 'body', 'budget', 'packing', 'recall', 'recall 2-turn', 'recall corrected', 'stale served', 'precision', 'markup share', 'tokens used', 'entries', 'p50 ms']];
  const all = r.longmem?.rows ?? [];
  const shown = all.some((x) => x.split === 'heldout') ? all.filter((x) => x.split === 'heldout') : all;
  const pctOf = (v: number | null) => (v === null ? '–' : `${fmt(100 * v, 0)} %`);
  for (const x of shown) {
    rows.push([x.shape, x.lang, x.split, x.body, String(x.budget), x.arm === 'baseline' ? 'list baseline' : x.arm, fmt(x.recall, 3), fmt(x.recallByKind['two-turn'], 3), fmt(x.recallByKind.corrected, 3), pctOf(x.staleShare), fmt(x.precision, 3), fmt(x.markupShare, 3), fmt(x.tokens), fmt(x.entries), fmt(x.p50Ms)]);
  }
  return rows;
}

/** Rows of the longmem off-topic table (the held-out split when the report has one). */
export function longmemOffTopicRows(r: BenchReport): string[][] {
  const rows: string[][] = [['shape', 'lang', 'split', 'body', 'packing', 'tokens off-topic', 'tokens on-topic', 'off / on', 'empty off-topic', 'empty on-topic']];
  const all = r.longmem?.offTopic ?? [];
  const shown = all.some((x) => x.split === 'heldout') ? all.filter((x) => x.split === 'heldout') : all;
  for (const x of shown) {
    rows.push([x.shape, x.lang, x.split, x.body, x.arm === 'baseline' ? 'list baseline' : x.arm, fmt(x.tokens), fmt(x.onTokens), fmt(x.ratio, 3), `${fmt(100 * x.empty, 0)} %`, `${fmt(100 * x.onEmpty, 0)} %`]);
  }
  return rows;
}

/** Number formatting for tables: 3 significant figures-ish, `–` for missing. */
export function fmt(v: number | null | undefined, digits = 2): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (Number.isInteger(v)) return v.toLocaleString('en-US');
  const a = Math.abs(v);
  if (a >= 1000) return Math.round(v).toLocaleString('en-US');
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  return v.toFixed(digits);
}

/** Align rows of cells into a plain-text table (first row is the header). */
export function textTable(rows: string[][]): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, [...c].length)));
  const line = (r: string[]) => r.map((c, i) => c + ' '.repeat(widths[i]! - [...c].length)).join('  ').trimEnd();
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/** The same rows as a GitHub-flavoured markdown table. */
export function markdownTable(rows: string[][]): string {
  const esc = (c: string) => c.replace(/\|/g, '\\|');
  return [
    `| ${rows[0]!.map(esc).join(' | ')} |`,
    `|${rows[0]!.map(() => '---').join('|')}|`,
    ...rows.slice(1).map((r) => `| ${r.map(esc).join(' | ')} |`),
  ].join('\n');
}

function pct(s: Summary | null | undefined): string {
  return s ? `${fmt(s.p50)} / ${fmt(s.p95)} / ${fmt(s.p99)}` : '–';
}

/** The figures of one profile: the top-level report (default) or its `docs` part. */
function profileView(r: BenchReport, profile: 'default' | 'docs'): Pick<BenchReport, 'sizes' | 'throughput' | 'denseByDimension'> {
  if (profile === 'default') return r;
  return { sizes: r.docs?.sizes ?? {}, throughput: r.docs?.throughput };
}

/** Rows of the latency table: one per endpoint and side, one column per size. */
export function latencyRows(report: BenchReport, profile: 'default' | 'docs' = 'default'): string[][] {
  const r = profileView(report, profile);
  const sizes = Object.keys(r.sizes).map(Number).sort((a, b) => a - b);
  const unit = profile === 'docs' ? 'documents' : 'nodes';
  const rows: string[][] = [[profile === 'docs' ? 'docs profile: latency ms p50 / p95 / p99' : 'latency ms p50 / p95 / p99', ...sizes.map((n) => `${n.toLocaleString('en-US')} ${unit}`)]];
  if (profile === 'docs') rows.push(['records (index points)', ...sizes.map((n) => fmt(r.sizes[String(n)]?.points))]);
  for (const ep of ['context', 'list', 'find', 'retrieve']) {
    rows.push([`${ep} via gateway`, ...sizes.map((n) => pct(r.sizes[String(n)]?.latency?.endpoints[ep]?.gateway))]);
    rows.push([`${ep} in process`, ...sizes.map((n) => pct(r.sizes[String(n)]?.latency?.endpoints[ep]?.inProcess))]);
    rows.push([`${ep} mesh/in-process (p50)`, ...sizes.map((n) => `${fmt(r.sizes[String(n)]?.latency?.endpoints[ep]?.ratioP50)}×`)]);
  }
  rows.push(['store: hybrid search', ...sizes.map((n) => pct(r.sizes[String(n)]?.storeLegs?.hybrid))]);
  rows.push(['store: dense leg only (exact)', ...sizes.map((n) => pct(r.sizes[String(n)]?.storeLegs?.denseOnly))]);
  rows.push(['store: lexical leg only', ...sizes.map((n) => pct(r.sizes[String(n)]?.storeLegs?.lexicalOnly))]);
  rows.push(['store: lexical top-200 + vectors', ...sizes.map((n) => pct(r.sizes[String(n)]?.storeLegs?.lexicalThenDense))]);
  for (const dim of Object.keys(r.denseByDimension?.byDimension ?? {})) {
    rows.push([`dense-only search, ${dim} dimensions (synthetic)`, ...sizes.map((n) => (n === r.denseByDimension!.nodes ? pct(r.denseByDimension!.byDimension[dim]) : '–'))]);
  }
  rows.push(['one HTTP round trip (GET /health)', ...sizes.map((n) => pct(r.sizes[String(n)]?.hops?.http))]);
  rows.push(['one gRPC round trip (CountTokens)', ...sizes.map((n) => pct(r.sizes[String(n)]?.hops?.grpc))]);
  rows.push(['same handler called directly', ...sizes.map((n) => pct(r.sizes[String(n)]?.hops?.direct))]);
  rows.push(['bulk load docs/s (in process)', ...sizes.map((n) => fmt(r.sizes[String(n)]?.load.docsPerSecond))]);
  rows.push(['dense ANN index brought up to date after the load, ms', ...sizes.map((n) => fmt(r.sizes[String(n)]?.load.denseMs))]);
  rows.push(['resident memory after load and search (bench process), MiB', ...sizes.map((n) => fmt(r.sizes[String(n)]?.rssMiB))]);
  if (sizes.some((n) => r.sizes[String(n)]?.ann)) {
    rows.push(['dense: HNSW recall@10 against the exact scan', ...sizes.map((n) => fmt(r.sizes[String(n)]?.ann?.recall10, 3))]);
    rows.push(['dense-only search, HNSW', ...sizes.map((n) => pct(r.sizes[String(n)]?.ann?.ann))]);
    rows.push(['dense-only search, exact scan', ...sizes.map((n) => pct(r.sizes[String(n)]?.ann?.exact))]);
    rows.push(['dense: crossover (rows where the scan costs the HNSW search)', ...sizes.map((n) => fmt(r.sizes[String(n)]?.ann?.crossoverRows))]);
    rows.push(['dense: HNSW build in the background, ms', ...sizes.map((n) => fmt(r.sizes[String(n)]?.ann?.buildMs))]);
  }
  return rows;
}

/** Rows of the targets table. */
export function targetRows(r: BenchReport): string[][] {
  const rows: string[][] = [['target', 'measured', 'met']];
  for (const t of r.targets ?? evaluateTargets(r)) {
    rows.push([t.target, t.measured === null ? '–' : `${fmt(t.measured, 3)} ${t.unit}`.trim(), t.met === null ? (t.measured === null ? 'not measured' : 'reported') : t.met ? 'met' : 'NOT met']);
  }
  return rows;
}

/** CPU the mesh's processes spent per request during a run (the load generator excluded), ms. */
export function cpuMsPerRequest(t: ThroughputRun): number {
  const cores = Object.entries(t.cpu)
    .filter(([k]) => k !== 'loadgen')
    .reduce((s, [, v]) => s + v.cores, 0);
  return t.rps > 0 ? (1000 * cores) / t.rps : Number.NaN;
}

/** Rows of the throughput table. */
export function throughputRows(report: BenchReport, profile: 'default' | 'docs' = 'default'): string[][] {
  const r = profileView(report, profile);
  const rows: string[][] = [[`${profile === 'docs' ? 'docs profile: ' : ''}throughput (context mode, ${r.throughput?.nodes?.toLocaleString('en-US') ?? '?'} ${profile === 'docs' ? 'documents' : 'nodes'})`, 'concurrency', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'CPU ms/request', 'CPU share']];
  const add = (label: string, runs: ThroughputRun[] | undefined) => {
    for (const t of runs ?? []) {
      const shares = Object.entries(t.cpu)
        .sort((a, b) => b[1].share - a[1].share)
        .map(([k, v]) => `${k} ${Math.round(v.share * 100)}%`)
        .join(', ');
      rows.push([label, String(t.connections), fmt(t.rps), fmt(t.latencyMs.p50), fmt(t.latencyMs.p99), String(failedRequests(t)), fmt(cpuMsPerRequest(t)), shares]);
    }
  };
  add('one process (npm start)', r.throughput?.inProcessMesh);
  add('separate processes', r.throughput?.separateProcesses);
  return rows;
}

/** Rows of the lexical-engines table (docs profile, every size measured). */
export function lexicalAlternativeRows(r: BenchReport): string[][] {
  const rows: string[][] = [['lexical engine (docs profile, top 50)', 'rows', 'query ms p50 / p95 / p99', 'overlap@10 with exact BM25', 'build ms', 'heap MiB', 'persists']];
  for (const s of Object.values(r.docs?.sizes ?? {})) {
    const a = s.lexicalAlternatives;
    if (!a) continue;
    for (const e of a.engines) rows.push([e.engine, fmt(a.rows), pct(e.query), fmt(e.overlap10, 3), e.buildMs === null ? 'while loading' : fmt(e.buildMs), e.heapMiB === null ? 'on disk' : fmt(e.heapMiB), e.persists ? 'yes' : 'no']);
  }
  return rows;
}

/** Rows of the lexical section's table: FTS5 fed the ranking's terms against the block-max index, by size, and MADial with each leg. */
export function lexicalEngineRows(r: BenchReport): string[][] {
  const x = r.lexicalEngines;
  const rows: string[][] = [['lexical leg (default corpus, top 200)', 'documents', 'rows', 'leg ms p50 / p95 / p99', 'lexical-only search ms p50', 'overlap@10 with exact BM25', 'MADial recall@5 en / zh', 'evidence recall (mean of rows)']];
  if (!x) return rows;
  const quality = (engine: string) => {
    const q = x.quality.find((e) => e.engine === engine);
    if (!q) return ['–', '–'];
    const ev = q.evidence.length ? q.evidence.reduce((a, e) => a + e.recall, 0) / q.evidence.length : Number.NaN;
    return [`${fmt(q.madial.en?.recall5, 3)} / ${fmt(q.madial.zh?.recall5, 3)}`, fmt(ev, 3)];
  };
  for (const [size, s] of Object.entries(x.sizes)) {
    for (const e of s.engines) rows.push([e.engine === 'fts5' ? 'SQLite FTS5, bm25() in SQL' : 'block-max index', fmt(Number(size)), fmt(s.rows), pct(e.leg), fmt(e.search.p50), fmt(e.overlap10, 3), ...quality(e.engine)]);
  }
  return rows;
}

/** Rows of the MADial table. */
export function madialRows(r: BenchReport): string[][] {
  const rows: string[][] = [['MADial-Bench', 'lang', 'recall@5', 'recall@10', 'nDCG@5']];
  const m = r.madial;
  if (!m) return rows;
  for (const pool of ['user', 'all'] as const) {
    for (const lang of ['en', 'zh'] as const) {
      const s = m.ctxmesh[pool][lang];
      if (s) rows.push([`ctxmesh (built-in lexical embedder), pool ${pool}`, lang, fmt(s.recall5, 3), fmt(s.recall10, 3), fmt(s.ndcg5, 3)]);
    }
  }
  for (const b of m.baselines) rows.push([`${b.name} (published top-20, pool user)`, b.lang, fmt(b.scores.recall5, 3), fmt(b.scores.recall10, 3), fmt(b.scores.ndcg5, 3)]);
  return rows;
}

/** Every table as plain text, for the terminal. */
export function textSummary(r: BenchReport): string {
  const parts = [
    `ctxmesh bench (${r.meta.mode}) ${r.meta.startedAt}, ${r.meta.cpus} CPUs, load average ${r.meta.loadAvgStart.map((x) => x.toFixed(2)).join('/')} → ${(r.meta.loadAvgEnd ?? []).map((x) => x.toFixed(2)).join('/')}, ${hostProbeText(r)}${fmt(r.meta.durationS)} s`,
    textTable(latencyRows(r)),
    textTable(throughputRows(r)),
    ...(r.docs ? [textTable(latencyRows(r, 'docs')), textTable(throughputRows(r, 'docs')), textTable(lexicalAlternativeRows(r))] : []),
    textTable(madialRows(r)),
    ...(r.lexicalEngines ? [textTable(lexicalEngineRows(r))] : []),
    ...(r.evidence ? [textTable(evidenceRows(r))] : []),
    ...(r.evidence?.offTopic?.length ? [textTable(offTopicRows(r))] : []),
    ...(r.longmem ? [textTable(longmemRows(r))] : []),
    ...(r.longmem?.offTopic.length ? [textTable(longmemOffTopicRows(r))] : []),
    ...(r.calibration ? [textTable(calibrationRows(r)), textTable(calibrationFloorRows(r))] : []),
    textTable(targetRows(r)),
  ];
  if (r.notes.length) parts.push(r.notes.map((n) => `note: ${n}`).join('\n'));
  const failed = Object.entries(r.failures);
  if (failed.length) parts.push(failed.map(([k, v]) => `FAILED ${k}: ${v}`).join('\n'));
  return parts.join('\n\n');
}

/** Every table as markdown, for the README. */
export function markdownSummary(r: BenchReport): string {
  return [
    `Run: \`${r.meta.mode}\`, ${r.meta.startedAt}, Node ${r.meta.node}, ${r.meta.cpus} CPUs, load average ${r.meta.loadAvgStart.map((x) => x.toFixed(2)).join('/')} at the start, ${(r.meta.loadAvgEnd ?? []).map((x) => x.toFixed(2)).join('/')} at the end, ${hostProbeText(r)}${fmt(r.meta.durationS)} s, commit \`${r.meta.gitCommit ?? '?'}\`.`,
    markdownTable(targetRows(r)),
    markdownTable(latencyRows(r)),
    markdownTable(throughputRows(r)),
    ...(r.docs ? [markdownTable(latencyRows(r, 'docs')), markdownTable(throughputRows(r, 'docs')), markdownTable(lexicalAlternativeRows(r))] : []),
    markdownTable(madialRows(r)),
    ...(r.lexicalEngines ? [markdownTable(lexicalEngineRows(r))] : []),
    ...(r.evidence ? [markdownTable(evidenceRows(r))] : []),
    ...(r.evidence?.offTopic?.length ? [markdownTable(offTopicRows(r))] : []),
    ...(r.longmem ? [markdownTable(longmemRows(r))] : []),
    ...(r.longmem?.offTopic.length ? [markdownTable(longmemOffTopicRows(r))] : []),
    ...(r.calibration ? [markdownTable(calibrationRows(r)), markdownTable(calibrationFloorRows(r))] : []),
    ...(r.notes.length ? [r.notes.map((n) => `- ${n}`).join('\n')] : []),
  ].join('\n\n');
}

/**
 * Issue 21's figures of two reports side by side (`npm run bench -- --markdown --from AFTER
 * --against BEFORE`): the `docs` profile's gateway latencies and resident memory at every size
 * either measured, its throughput, `npm start` on its data, its HNSW build, the docs ingest and
 * MADial, each with after/before where both have it. A figure a report lacks reads `–`.
 */
export function beforeAfterRows(before: BenchReport, after: BenchReport): string[][] {
  const rows: string[][] = [['figure', `before (${before.meta.gitCommit ?? '?'})`, `after (${after.meta.gitCommit ?? '?'})`, 'after / before']];
  const seconds = (ms: number | null | undefined): number | null => (ms == null ? null : ms / 1000);
  const add = (label: string, pick: (r: BenchReport) => number | null | undefined, digits = 2): void => {
    const b = pick(before);
    const a = pick(after);
    const ratio = a != null && b != null && b !== 0 && Number.isFinite(a) && Number.isFinite(b) ? fmt(a / b, 3) : '–';
    rows.push([label, b == null ? '–' : fmt(b, digits), a == null ? '–' : fmt(a, digits), ratio]);
  };
  const probe = (r: BenchReport): string => (r.meta.hostProbeMs ? `${fmt(r.meta.hostProbeMs.start)} → ${fmt(r.meta.hostProbeMs.end)}` : '–');
  rows.push(['host probe ms, start → end (higher is a slower host)', probe(before), probe(after), '']);
  const sizes = [...new Set([...Object.keys(before.docs?.sizes ?? {}), ...Object.keys(after.docs?.sizes ?? {})].map(Number))].sort((x, y) => x - y);
  for (const n of sizes) {
    const at = (r: BenchReport) => r.docs?.sizes[String(n)];
    const docs = n.toLocaleString('en-US');
    for (const ep of ['context', 'list', 'find', 'retrieve'] as const) {
      add(`${ep} p50 via the gateway, ${docs} documents, ms`, (r) => at(r)?.latency?.endpoints[ep]?.gateway?.p50);
    }
    add(`context p99 via the gateway, ${docs} documents, ms`, (r) => at(r)?.latency?.endpoints.context?.gateway?.p99);
    add(`bench process resident after loading and searching ${docs} documents, MiB`, (r) => at(r)?.rssMiB, 0);
    add(`bulk load up to ${docs} documents (the indexer's apply path), docs/s`, (r) => at(r)?.load.docsPerSecond, 1);
    add(`dense index prepared after that load (an HNSW build where the store builds one), s`, (r) => seconds(at(r)?.load.denseMs), 1);
    add(`HNSW build over the ${docs} documents' rows in the ANN section, s (– when the load had built it)`, (r) => seconds(at(r)?.ann?.buildMs), 1);
    add(`HNSW recall@10 against the exact scan, ${docs} documents`, (r) => at(r)?.ann?.recall10, 3);
  }
  const tpAt = (r: BenchReport, c: number) => r.docs?.throughput?.inProcessMesh?.find((t) => t.connections === c);
  const conns = [...new Set([before, after].flatMap((r) => (r.docs?.throughput?.inProcessMesh ?? []).map((t) => t.connections)))].sort((x, y) => x - y);
  const nodes = after.docs?.throughput?.nodes ?? before.docs?.throughput?.nodes;
  for (const c of conns) {
    add(`context req/s at concurrency ${c}, ${nodes?.toLocaleString('en-US') ?? '?'} documents`, (r) => tpAt(r, c)?.rps, 1);
    add(`  errors at concurrency ${c}`, (r) => {
      const t = tpAt(r, c);
      return t ? failedRequests(t) : null;
    }, 0);
  }
  add('docs ingest, `wait:true` through the gateway, docs/s', (r) => r.ingest?.docs?.embedded?.docsPerSecond, 1);
  add('`npm start` healthy on the largest loaded data, s', (r) => seconds(r.docs?.startupOnData?.healthyMs));
  add('`npm start` resident on that data, idle, MiB', (r) => r.docs?.startupOnData?.idleRssMiB, 0);
  add('`npm start` resident on that data after serving context requests, MiB', (r) => r.docs?.startupOnData?.servedRssMiB, 0);
  add('`npm start` healthy, empty data directory, s', (r) => seconds(r.startup?.healthyMsMedian));
  for (const lang of ['en', 'zh'] as const) add(`MADial recall@5 ${lang} (user memories)`, (r) => r.madial?.ctxmesh?.user?.[lang]?.recall5, 3);
  return rows;
}
