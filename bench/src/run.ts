#!/usr/bin/env node
/**
 * `npm run bench` (and `make bench`): the benchmark suite of issue 8. Writes
 * `bench/results/latest.json` (after every section, so a crash keeps what was measured) and
 * prints a short table. Every figure is a median/percentile, or a ratio of two measured side
 * by side in this run; nothing here asserts on time.
 *
 *   npm run bench -- --quick          1k and 10k nodes, short runs (< 5 min on 2 cores)
 *   npm run bench                     1k, 10k and 100k nodes (< 30 min on 2 cores)
 *   npm run bench -- --only latency,budget --sizes 1000
 *   npm run bench -- --markdown       print the README tables of the last report and exit
 *   npm run bench -- --markdown --from after.json --against before.json
 *                                     issue 21's figures of two reports side by side
 *   npm run bench -- --only lexical   FTS5 against the block-max index (issue 21; not in the default run)
 *
 * Sections: startup, madial, calibration, evidence, longmem, ingest, latency, budget, throughput, hooks, sessions; lexical on request (see README.md).
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs as parseArgv, type ParseArgsConfig } from 'node:util';
import { DB_FILE, startMesh, type Mesh } from '@ctxmesh/ctxmesh';
import type { CodeOutliner } from '@ctxmesh/kernel';
import { createOutliner } from '@ctxmesh/outline';
import { silentLogger, type Env } from '@ctxmesh/runtime';
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { DEFAULT_TUNING, EmbeddedVectorIndex, NatsEventBus, openEmbeddedDb } from '@ctxmesh/stores';
import { Fts5Lexical, LEG_RUN_DEPTH, decideLexicalEngine, measureAnn, measureLexicalAlternatives, measureLexicalLegs, swapLexicalLeg, type LexicalEnginesReport } from './search-engines';
import { measureBudgetHonesty } from './budget';
import { RequestCapture } from './capture';
import { busNames, deleteStreams, startCluster } from './cluster';
import { buildQueries, DEFAULT_SEED, docAt, docs, type BenchQuery, type CorpusDoc } from './corpus';
import { buildDocsQueries, DOCS_SEED, docsDocs } from './docs-corpus';
import { JsonClient } from './http';
import { ingestThroughGateway } from './ingest';
import { inProcessKernel } from './inproc';
import { ENDPOINTS, measureDenseByDimension, measureHops, measureLatency, measureStoreLegs } from './latency';
import { probeHost } from './host';
import { bulkLoad } from './load';
import { measureCalibration } from './calibration';
import { measureEvidence } from './evidence';
import { measureLongmem } from './longmem';
import { madialAvailable, measureMadial } from './madial';
import { beforeAfterRows, evaluateTargets, fmt, markdownSummary, markdownTable, medianOf, textSummary, type BenchReport, type DocsProfileResult, type SizeResult } from './report';
import { measureStartup, type StartupRun } from './startup';
import { failedRequests, runLoad, type ThroughputRun } from './throughput';
import { measureHooks } from './hooks';
import { measureSessionRescue } from './sessions';

/** Sections of a run. */
export const SECTIONS = ['startup', 'madial', 'calibration', 'evidence', 'longmem', 'ingest', 'latency', 'budget', 'throughput', 'hooks', 'sessions', 'lexical'] as const;

/** A section name. */
export type Section = (typeof SECTIONS)[number];

/**
 * Sections a run without `--only` leaves out: `lexical` (issue 21) loads its own 100,000
 * documents and runs MADial twice, to decide one question; it is run when asked for.
 */
export const ON_REQUEST: readonly Section[] = ['lexical'];

/** The sections of a run without `--only`. */
export const DEFAULT_SECTIONS: readonly Section[] = SECTIONS.filter((s) => !ON_REQUEST.includes(s));

/** Everything a run is parameterised by. */
export interface RunOptions {
  /** `--quick`: smaller sizes and shorter runs. */
  quick: boolean;
  /** Corpus sizes, ascending (the index grows from one to the next). */
  sizes: number[];
  /** Queries in the query set. */
  queries: number;
  /** Passes over the query set per endpoint below 100k nodes. */
  reps: number;
  /** Passes at 100k nodes and above. */
  repsLarge: number;
  /** Corpus size of the throughput and budget sections (the largest size ≤ this that is run). */
  throughputNodes: number;
  /** Seconds per throughput run. */
  throughputSeconds: number;
  /** Concurrencies of the throughput runs. */
  concurrencies: number[];
  /** Documents written in each ingest run. */
  ingestDocs: number;
  /** Concurrent writers in the ingest runs. */
  ingestConcurrency: number;
  /** Queries of the budget sweep. */
  budgetQueries: number;
  /** `npm start` measurements. */
  startupRuns: number;
  /** Sections to run. */
  sections: Set<Section>;
  /** NATS server for the NATS ingest and the separate-process mesh (null = skip those). */
  natsUrl: string | null;
  /** MADial-Bench directory. */
  madialDir: string;
  /** Report path. */
  out: string;
  /** Print the markdown tables of an existing report (`--markdown [--from file]`) and exit. */
  markdownFrom: string | null;
  /** With `--markdown`: a report of an earlier commit to print issue 21's figures beside (`--against file`). */
  markdownAgainst: string | null;
  /** Corpus profiles to run: `default` (mostly short memories) and `docs` (a real user's tree, issue 13). */
  profiles: ProfileName[];
  /** Corpus sizes of the `docs` profile, ascending. */
  docsSizes: number[];
  /** Queries of the `docs` profile (each used once; the throughput runs cycle through them). */
  docsQueries: number;
  /** Variables added to every measured mesh's clean environment (`--mesh-env K=V,K=V`), to compare a setting side by side. */
  meshEnv: Record<string, string>;
}

/** A corpus profile. */
export type ProfileName = 'default' | 'docs';

/** The corpus profiles. */
export const PROFILES: readonly ProfileName[] = ['default', 'docs'];

/** The repository root (bench/dist/run.js → ../..). */
export const REPO_ROOT = resolve(__dirname, '..', '..');

/** Thrown for a bad command line. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

function intList(flag: string, v: string): number[] {
  const out = v.split(',').map((x) => Number(x.trim()));
  if (out.some((x) => !Number.isInteger(x) || x <= 0)) throw new UsageError(`${flag} takes comma-separated positive integers, got '${v}'`);
  return out;
}

function posInt(flag: string, v: string | undefined): number {
  const n = Number(v);
  if (v === undefined || !Number.isInteger(n) || n <= 0) throw new UsageError(`${flag} takes a positive integer, got '${v ?? ''}'`);
  return n;
}

function sectionList(flag: string, v: string): Set<Section> {
  const names = v.split(',').map((s) => s.trim());
  const bad = names.filter((s) => !(SECTIONS as readonly string[]).includes(s));
  if (bad.length) throw new UsageError(`${flag}: unknown section(s) ${bad.join(', ')}; known: ${SECTIONS.join(', ')}`);
  return new Set(names as Section[]);
}

/** The flags of `npm run bench` that take a value (`--flag value` or `--flag=value`). */
const VALUE_FLAGS = ['mesh-env', 'sizes', 'queries', 'reps', 'seconds', 'concurrency', 'throughput-nodes', 'ingest-docs', 'budget-queries', 'startup-runs', 'only', 'skip', 'nats', 'madial', 'out', 'profiles', 'docs-sizes', 'docs-queries', 'from', 'against'];
/** Its switches. */
const SWITCHES = ['quick', 'no-nats', 'markdown'];

/** The flags, for node:util's tokenizer. */
const FLAGS: NonNullable<ParseArgsConfig['options']> = Object.fromEntries([
  ...VALUE_FLAGS.map((name) => [name, { type: 'string' as const }]),
  ...SWITCHES.map((name) => [name, { type: 'boolean' as const }]),
]);

/** The flags that set one positive-integer option. */
const POSITIVE_INT_FLAGS: Readonly<Record<string, 'queries' | 'reps' | 'throughputSeconds' | 'throughputNodes' | 'ingestDocs' | 'budgetQueries' | 'startupRuns' | 'docsQueries'>> = {
  '--queries': 'queries',
  '--reps': 'reps',
  '--seconds': 'throughputSeconds',
  '--throughput-nodes': 'throughputNodes',
  '--ingest-docs': 'ingestDocs',
  '--budget-queries': 'budgetQueries',
  '--startup-runs': 'startupRuns',
  '--docs-queries': 'docsQueries',
};

/**
 * Parse the command line (`--flag value` or `--flag=value`).
 * @param env NATS_URL and MADIAL_DIR defaults
 * @throws UsageError for an unknown flag or a bad value
 */
export function parseArgs(argv: readonly string[], env: Readonly<Record<string, string | undefined>> = {}): RunOptions {
  // node:util tokenizes; the flags apply in order (--only then --skip), so this walks its
  // tokens rather than its values. Lenient mode: a value-taking flag takes the next word
  // whatever it is, and this function names what is wrong in its own words.
  const { tokens } = parseArgv({ args: [...argv], options: FLAGS, strict: false, allowPositionals: true, tokens: true });
  // Sizes and durations default by mode, so --quick is looked for before the walk.
  const quick = argv.includes('--quick');
  const o: RunOptions = {
    quick,
    sizes: quick ? [1_000, 10_000] : [1_000, 10_000, 100_000],
    queries: quick ? 60 : 200,
    reps: quick ? 1 : 2,
    repsLarge: 1,
    throughputNodes: 10_000,
    throughputSeconds: quick ? 4 : 10,
    concurrencies: [1, 16, 64],
    ingestDocs: quick ? 300 : 2_000,
    ingestConcurrency: 16,
    budgetQueries: quick ? 24 : 80,
    startupRuns: quick ? 1 : 3,
    sections: new Set(DEFAULT_SECTIONS),
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    madialDir: env.MADIAL_DIR ?? resolve(REPO_ROOT, '..', 'shared', 'data', 'madial-bench'),
    meshEnv: {},
    out: join(REPO_ROOT, 'bench', 'results', 'latest.json'),
    markdownFrom: null,
    markdownAgainst: null,
    profiles: [...PROFILES],
    docsSizes: quick ? [10_000] : [10_000, 100_000],
    docsQueries: quick ? 1_000 : 4_000,
  };
  let markdown = false;
  let from: string | null = null;
  for (const t of tokens) {
    // A word that is not a long flag (a positional, or -x) is out of place.
    if (t.kind === 'positional' || (t.kind === 'option' && !t.rawName.startsWith('--'))) throw new UsageError(`unexpected argument '${argv[t.index]}'`);
    if (t.kind === 'option-terminator') throw new UsageError(`unknown flag '--'`);
    const flag = t.rawName;
    const value = () => t.value;
    if (Object.hasOwn(POSITIVE_INT_FLAGS, flag)) {
      o[POSITIVE_INT_FLAGS[flag]!] = posInt(flag, value());
      if (flag === '--reps') o.repsLarge = Math.min(o.repsLarge, o.reps);
      continue;
    }
    switch (flag) {
      case '--quick':
        break;
      case '--sizes':
        o.sizes = intList(flag, value() ?? '').sort((a, b) => a - b);
        break;
      case '--concurrency':
        o.concurrencies = intList(flag, value() ?? '');
        break;
      case '--only':
        o.sections = sectionList(flag, value() ?? '');
        break;
      case '--skip':
        for (const s of sectionList(flag, value() ?? '')) o.sections.delete(s);
        break;
      case '--nats':
        o.natsUrl = value() ?? null;
        break;
      case '--no-nats':
        o.natsUrl = null;
        break;
      case '--madial':
        o.madialDir = resolve(value() ?? '');
        break;
      case '--mesh-env':
        o.meshEnv = parseMeshEnv(value() ?? '');
        break;
      case '--out':
        o.out = resolve(value() ?? '');
        break;
      case '--markdown':
        markdown = true;
        break;
      case '--profiles': {
        const names = (value() ?? '').split(',').map((x) => x.trim());
        const bad = names.filter((x) => !(PROFILES as readonly string[]).includes(x));
        if (bad.length || names.length === 0) throw new UsageError(`--profiles: unknown profile(s) ${bad.join(', ')}; known: ${PROFILES.join(', ')}`);
        o.profiles = [...new Set(names as ProfileName[])];
        break;
      }
      case '--docs-sizes':
        o.docsSizes = intList(flag, value() ?? '').sort((a, b) => a - b);
        break;
      case '--from':
        from = resolve(value() ?? '');
        break;
      case '--against':
        o.markdownAgainst = resolve(value() ?? '');
        break;
      default:
        throw new UsageError(`unknown flag '${flag}'`);
    }
  }
  o.markdownFrom = from ?? (markdown ? o.out : null);
  if (o.markdownAgainst && !o.markdownFrom) throw new UsageError('--against compares two reports: give it with --markdown (or --from)');
  return o;
}

/**
 * The corpus size the budget and throughput sections run at: the largest size ≤ the wanted
 * one, else the smallest size.
 */
export function throughputSize(sizes: readonly number[], wanted: number): number {
  const fit = sizes.filter((s) => s <= wanted);
  return fit.length ? Math.max(...fit) : Math.min(...sizes);
}

/** Queries for the budget sweep: alternately English and Chinese, so both are covered. */
export function balancedQueries(queries: readonly BenchQuery[], count: number): BenchQuery[] {
  const en = queries.filter((q) => q.lang === 'en');
  const zh = queries.filter((q) => q.lang === 'zh');
  const out: BenchQuery[] = [];
  for (let i = 0; out.length < count && (i < en.length || i < zh.length); i++) {
    if (i < en.length) out.push(en[i]!);
    if (out.length < count && i < zh.length) out.push(zh[i]!);
  }
  return out;
}

/** First document index of the ingest runs: far beyond any corpus size, so every write is new. */
export const INGEST_OFFSET = 10_000_000;

const started = performance.now();
function log(msg: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)} s] ${msg}\n`);
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

/** `--mesh-env`'s `K=V,K=V` (names as the mesh's variables are spelled). */
export function parseMeshEnv(v: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of v.split(',').filter((x) => x.trim() !== '')) {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(pair.trim());
    if (!m) throw new UsageError(`--mesh-env takes NAME=value pairs separated by commas, got '${pair}'`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

/** Set by {@link runBench} from `--mesh-env`: added to every measured mesh's environment. */
let meshExtra: Record<string, string> = {};

function meshEnv(dataDir: string, extra: Record<string, string> = {}): Env {
  // A clean environment: the embedded stores and the in-process bus unless a section adds NATS.
  return { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', ...meshExtra, ...extra };
}

async function withMesh<T>(env: Env, fn: (mesh: Mesh, client: JsonClient) => Promise<T>): Promise<T> {
  // As `npm start` runs it: gather and tier-reader in the search thread (CTXMESH_SEARCH_THREAD).
  const mesh = await startMesh({ env, log: silentLogger(), searchThread: env.CTXMESH_SEARCH_THREAD !== 'off' });
  const client = new JsonClient(mesh.gatewayUrl);
  try {
    return await fn(mesh, client);
  } finally {
    client.close();
    await mesh.stop();
  }
}

async function loadOutliner(): Promise<CodeOutliner | null> {
  try {
    return (await createOutliner()).outline;
  } catch {
    return null;
  }
}

/** Run the sections and write the report. */
export async function runBench(o: RunOptions): Promise<BenchReport> {
  meshExtra = { ...o.meshEnv };
  const scratch = mkdtempSync(join(tmpdir(), 'ctxmesh-bench-'));
  const report: BenchReport = {
    meta: {
      mode: o.quick ? 'quick' : 'full',
      startedAt: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      ...(Object.keys(o.meshEnv).length > 0 ? { meshEnv: { ...o.meshEnv } } : {}),
      loadAvgStart: loadavg(),
      hostProbeMs: { start: probeHost().ms },
      gitCommit: gitCommit(),
      sizes: o.sizes,
      queries: o.queries,
      argv: process.argv.slice(2),
    },
    corpus: { seed: DEFAULT_SEED },
    sizes: {},
    notes: [],
    failures: {},
  };
  mkdirSync(dirname(o.out), { recursive: true });
  const save = () => writeFileSync(o.out, `${JSON.stringify(report, null, 2)}\n`);
  const section = async (name: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      report.failures[name] = (err as Error)?.stack?.split('\n').slice(0, 4).join(' | ') ?? String(err);
      log(`${name} FAILED: ${(err as Error)?.message ?? String(err)}`);
    }
    save();
  };
  const on = (s: Section) => o.sections.has(s);

  try {
    const kinds: Record<string, number> = {};
    for (let i = 0; i < Math.min(10_000, Math.max(...o.sizes)); i++) {
      const k = docAt(i).kind;
      kinds[k] = (kinds[k] ?? 0) + 1;
    }
    report.corpus.kindsInFirst10k = kinds;

    if (on('startup')) {
      await section('startup', async () => {
        const runs = [];
        for (let i = 0; i < o.startupRuns; i++) {
          log(`startup: npm start run ${i + 1}/${o.startupRuns}`);
          runs.push(await measureStartup());
        }
        report.startup = { runs, healthyMsMedian: medianOf(runs.map((r) => r.healthyMs)), idleRssMiBMedian: medianOf(runs.map((r) => r.idleRssMiB)) };
        log(`startup: healthy in ${fmt(report.startup.healthyMsMedian)} ms, idle RSS ${fmt(report.startup.idleRssMiBMedian)} MiB`);
      });
    }

    if (on('madial')) {
      await section('madial', async () => {
        if (!madialAvailable(o.madialDir)) throw new Error(`MADial-Bench not found in ${o.madialDir} (set --madial or MADIAL_DIR)`);
        log('madial: writing both archives through the gateway and running 2 × 2 × 160 searches');
        report.madial = await withMesh(meshEnv(join(scratch, 'madial')), (_mesh, client) => measureMadial(client, o.madialDir));
        const m = report.madial;
        log(`madial: recall@5 en ${fmt(m.ctxmesh.user.en?.recall5, 3)}, zh ${fmt(m.ctxmesh.user.zh?.recall5, 3)} (per-user pool)`);
      });
    }

    if (on('calibration')) {
      await section('calibration', async () => {
        if (!madialAvailable(o.madialDir)) throw new Error(`MADial-Bench not found in ${o.madialDir} (set --madial or MADIAL_DIR)`);
        log('calibration: MADial in an embedded index, every dialogue on- and off-topic in two query forms; refit on the training split, held-out curve');
        report.calibration = await measureCalibration(o.madialDir);
        const h = report.calibration.heldout.filter((x) => x.form === 'dialogue');
        log(`calibration: at the noise floor (held-out dialogues) gold kept ${h.map((x) => `${x.lang} ${fmt(x.recall, 3)}`).join(', ')}; off-topic empty ${h.map((x) => `${x.lang} ${fmt(100 * x.offEmpty, 0)} %`).join(', ')}`);
      });
    }
    if (on('evidence')) {
      await section('evidence', async () => {
        if (!madialAvailable(o.madialDir)) throw new Error(`MADial-Bench not found in ${o.madialDir} (set --madial or MADIAL_DIR)`);
        log(`evidence: MADial archives, ${o.quick ? 'the first 40' : 'every'} test dialogue × 3 budgets × 2 bodies × 2 packings, and the list baseline`);
        report.evidence = await withMesh(meshEnv(join(scratch, 'evidence')), (_mesh, client) =>
          measureEvidence(client, o.madialDir, { cases: o.quick ? 40 : undefined, log }),
        );
        const r = (lang: string, arm: string) => report.evidence!.rows.find((x) => x.lang === lang && x.pool === 'user' && x.body === 'plugin' && x.budget === 1600 && x.arm === arm)?.recall;
        log(`evidence: plugin body at 1600, per-user pool: recall en ${fmt(r('en', 'compat'), 3)} → ${fmt(r('en', 'evidence'), 3)} (baseline ${fmt(r('en', 'baseline'), 3)}), zh ${fmt(r('zh', 'compat'), 3)} → ${fmt(r('zh', 'evidence'), 3)} (baseline ${fmt(r('zh', 'baseline'), 3)})`);
      });
    }

    if (on('longmem')) {
      await section('longmem', async () => {
        // Synthetic, so it needs no dataset; --quick halves the users (each keeps every fact kind).
        const users = o.quick ? 2 : undefined;
        log(`longmem: ${users ?? 4} users per language × 8 sessions, written as a memory per turn and per session; every question × 3 budgets × 2 bodies × 2 packings, the list baseline, and off-topic`);
        report.longmem = await withMesh(meshEnv(join(scratch, 'longmem')), (_mesh, client) => measureLongmem(client, { users, log }));
        const r = (shape: string, lang: string, arm: string) => report.longmem!.rows.find((x) => x.shape === shape && x.lang === lang && x.split === 'heldout' && x.body === 'bare' && x.budget === 1600 && x.arm === arm)?.recall;
        const line = (shape: string) => ['en', 'zh'].map((l) => `${l} ${fmt(r(shape, l, 'compat'), 3)} → ${fmt(r(shape, l, 'evidence'), 3)} (list ${fmt(r(shape, l, 'baseline'), 3)})`).join(', ');
        log(`longmem: bare body at 1600, held-out recall: turns ${line('turns')}; sessions ${line('sessions')}`);
      });
    }

    if (on('ingest')) {
      report.ingest = {};
      // One run per selected profile: the default corpus (mostly short memories) into
      // `ingest.embedded`/`ingest.nats`, the docs corpus (long markdown, code, a third Chinese) into `ingest.docs`.
      for (const profile of o.profiles) {
        const items = [...(profile === 'docs' ? docsDocs : docs)(INGEST_OFFSET, INGEST_OFFSET + o.ingestDocs)];
        const sink = profile === 'docs' ? (report.ingest.docs = {}) : report.ingest;
        const tag = profile === 'docs' ? 'ingest.docs' : 'ingest';
        await section(`${tag}.embedded`, async () => {
          log(`${tag}: ${o.ingestDocs} writes through the gateway, in-process bus`);
          sink.embedded = await withMesh(meshEnv(join(scratch, `${tag}-embedded`)), (_m, client) => ingestThroughGateway(client, items, o.ingestConcurrency));
          log(`${tag} (embedded bus): ${fmt(sink.embedded.docsPerSecond)} docs/s`);
        });
        if (o.natsUrl) {
          const natsUrl = o.natsUrl;
          await section(`${tag}.nats`, async () => {
            log(`${tag}: ${o.ingestDocs} writes through the gateway, NATS JetStream`);
            const names = busNames(`benchi${process.pid}x${Date.now().toString(36)}`);
            try {
              sink.nats = await withMesh(meshEnv(join(scratch, `${tag}-nats`), { NATS_URL: natsUrl, ...names }), (_m, client) => ingestThroughGateway(client, items, o.ingestConcurrency));
            } finally {
              await deleteStreams(natsUrl, NatsEventBus.streamsOf(names.CTXMESH_INGEST_STREAM!)).catch(() => undefined);
            }
            log(`${tag} (NATS): ${fmt(sink.nats.docsPerSecond)} docs/s`);
          });
        } else report.notes.push(`${tag} with NATS not measured (--no-nats)`);
      }
    }

    if (on('hooks')) {
      await section('hooks', async () => {
        const loops = o.quick ? 50 : 300;
        log(`hooks: ${loops} loops of UserPromptSubmit → PostToolUse → Stop through POST /hooks/claude-code (a compaction every 10)`);
        report.hooks = await withMesh(meshEnv(join(scratch, 'hooks')), (_mesh, client) => measureHooks(client, { loops, log }));
      });
    }

    if (on('sessions')) {
      await section('sessions', async () => {
        const events = 100_000;
        const reps = o.quick ? 3 : 7;
        log(`sessions: overflow recovery on a ${events}-event session (embedded store), ${reps} reps cold and warm`);
        const dir = join(scratch, 'sessions');
        mkdirSync(dir, { recursive: true });
        report.sessions = await measureSessionRescue(dir, { events, reps, log });
        log(`sessions: recovery p50 cold ${fmt(report.sessions.recoverColdMs.p50)} ms, warm ${fmt(report.sessions.recoverWarmMs.p50)} ms`);
      });
    }

    if (on('lexical')) {
      await section('lexical', () => lexicalEngines(o, report, scratch, save));
    }

    if ((on('latency') || on('budget') || on('throughput')) && o.profiles.includes('default')) {
      await section('main', () => mainMesh(o, defaultProfile(o), report, report, scratch, save));
    }
    if ((on('latency') || on('throughput') || on('startup')) && o.profiles.includes('docs')) {
      const docs: DocsProfileResult = { seed: DOCS_SEED, sizes: {}, queries: o.docsQueries };
      report.docs = docs;
      await section('docs', () => mainMesh(o, docsProfile(o), docs, report, scratch, save));
    }
  } finally {
    report.meta.finishedAt = new Date().toISOString();
    report.meta.durationS = (performance.now() - started) / 1000;
    report.meta.loadAvgEnd = loadavg();
    if (report.meta.hostProbeMs) report.meta.hostProbeMs.end = probeHost().ms;
    report.targets = evaluateTargets(report);
    addNotes(report);
    save();
    rmSync(scratch, { recursive: true, force: true });
  }
  return report;
}

/**
 * The lexical section (issue 21, item 5): SQLite FTS5 fed the ranking's own terms against the
 * block-max index. On the default corpus, loaded through the indexer's apply path into an
 * embedded index of its own (no dense index: the legs are lexical), at each `--sizes` size:
 * both legs on the same rows and queries (`measureLexicalLegs`). Then MADial (per-user pools)
 * through the gateway of a mesh whose search runs in its own process (`CTXMESH_SEARCH_THREAD=off`),
 * once with the store's leg and once with FTS5's in its place (`swapLexicalLeg`): `/find`
 * recall@5 and the evidence section's recall. Last, the issue's rule on those figures.
 */
async function lexicalEngines(o: RunOptions, report: BenchReport, scratch: string, save: () => void): Promise<void> {
  const out: LexicalEnginesReport = { corpus: 'default', legDepth: LEG_RUN_DEPTH, sizes: {}, quality: [] };
  report.lexicalEngines = out;
  const dir = join(scratch, 'lexical');
  mkdirSync(dir, { recursive: true });
  const dbPath = join(dir, DB_FILE);
  const db = openEmbeddedDb(dbPath);
  const embedder = new LexicalEmbedder({ dimension: 256 });
  const index = new EmbeddedVectorIndex(db, { dimension: embedder.dimension, ann: false });
  const fts = new Fts5Lexical(join(dir, 'fts5.db'));
  const outliner = await loadOutliner();
  const queries = defaultProfile(o).queries;
  try {
    let loaded = 0;
    for (const size of o.sizes) {
      log(`lexical: load documents ${loaded}…${size - 1} (default corpus) through the indexer's apply path`);
      await bulkLoad(index, embedder, outliner, loaded, size, { onProgress: (d, t) => log(`  load: ${d}/${t}`) });
      loaded = size;
      log(`lexical: ${size} documents: FTS5 mirror, then both legs × ${queries.length} queries × 2 passes, and the lexical-only search with each`);
      const m = await measureLexicalLegs(dbPath, index, fts, queries);
      out.sizes[String(size)] = m;
      const [b, f] = m.engines;
      log(`lexical: ${fmt(m.rows)} rows: leg p50 block-max ${fmt(b?.leg.p50)} ms, FTS5 ${fmt(f?.leg.p50)} ms; overlap@10 ${fmt(b?.overlap10, 3)} / ${fmt(f?.overlap10, 3)}; FTS5 = block-max top 10 ${fmt(m.agreement.overlap10, 3)}`);
      save();
    }
  } finally {
    fts.close();
    await index.close();
    db.close();
  }
  if (!madialAvailable(o.madialDir)) throw new Error(`MADial-Bench not found in ${o.madialDir} (set --madial or MADIAL_DIR)`);
  for (const engine of ['block-max', 'fts5'] as const) {
    log(`lexical: MADial (pool user) through the gateway, ${engine} leg: /find recall, then the evidence section's dialogues`);
    const q = await withMesh(meshEnv(join(scratch, `lexical-madial-${engine}`), { CTXMESH_SEARCH_THREAD: 'off' }), async (mesh, client) => {
      let undo = (): void => undefined;
      let mirror: Fts5Lexical | null = null;
      if (engine === 'fts5') {
        if (!(mesh.index instanceof EmbeddedVectorIndex)) throw new Error('lexical: the mesh does not run the embedded index');
        mirror = new Fts5Lexical(join(dir, 'madial-fts5.db'));
        undo = swapLexicalLeg(mesh.index, mirror);
      }
      try {
        const madial = await measureMadial(client, o.madialDir, { pools: ['user'] });
        const evidence = await measureEvidence(client, o.madialDir, { pools: ['user'], cases: o.quick ? 40 : undefined, log });
        return { engine, madial: madial.ctxmesh.user, evidence: evidence.rows.filter((r) => r.split === 'all') };
      } finally {
        undo();
        mirror?.close();
      }
    });
    out.quality.push(q);
    log(`lexical: ${engine}: MADial recall@5 en ${fmt(q.madial.en?.recall5, 3)}, zh ${fmt(q.madial.zh?.recall5, 3)}`);
    save();
  }
  out.decision = decideLexicalEngine(out);
  const d = out.decision;
  log(`lexical: FTS5 ${d.fts5Qualifies ? 'meets' : 'does not meet'} the rule: recall@5 Δ ${fmt(d.recall5Delta, 4)}, evidence Δ ${fmt(d.evidenceDelta, 4)}, leg p50 ratio ${Object.entries(d.legRatio).map(([k, v]) => `${k}: ${fmt(v, 3)}×`).join(', ')}`);
}

/** How one corpus profile is generated and measured. */
interface Profile {
  name: ProfileName;
  /** Sizes, ascending. */
  sizes: number[];
  /** Documents `[from, to)`. */
  docs(from: number, to: number): Iterable<CorpusDoc>;
  /** The latency query set and the throughput bodies' query set. */
  queries: BenchQuery[];
  throughputQueries: BenchQuery[];
  /** Passes over the query set at a size. */
  reps(size: number): number;
  /** Run the budget sweep at the throughput size. */
  budget: boolean;
  /** Measure `npm start` on the loaded data at the largest size. */
  startupOnData: boolean;
}

function defaultProfile(o: RunOptions): Profile {
  const queries = buildQueries(o.queries, { pool: Math.min(1000, Math.min(...o.sizes)) });
  return {
    name: 'default',
    sizes: o.sizes,
    docs: (from, to) => docs(from, to),
    queries,
    throughputQueries: queries,
    reps: (size) => (size >= 100_000 ? o.repsLarge : o.reps),
    budget: true,
    startupOnData: false,
  };
}

function docsProfile(o: RunOptions): Profile {
  // Every query is used once: the latency passes take the first ones, throughput cycles the whole set.
  const all = buildDocsQueries(Math.max(o.docsQueries, o.queries), { pool: Math.min(...o.docsSizes) });
  return {
    name: 'docs',
    sizes: o.docsSizes,
    docs: (from, to) => docsDocs(from, to),
    queries: all.slice(0, o.queries),
    throughputQueries: all.slice(o.queries).length > 0 ? all.slice(o.queries) : all,
    reps: () => 1,
    budget: false,
    startupOnData: true,
  };
}

/** Where a profile's figures go: the top-level report (default profile) or `report.docs`. */
type ProfileSink = Pick<BenchReport, 'sizes' | 'throughput'> & { startupOnData?: StartupRun };

/** The growing index: latency at every size; budget and throughput at the throughput size. */
async function mainMesh(o: RunOptions, profile: Profile, sink: ProfileSink, report: BenchReport, scratch: string, save: () => void): Promise<void> {
  const dataDir = join(scratch, `main-${profile.name}`);
  const env = meshEnv(dataDir);
  const outliner = await loadOutliner();
  const queries = profile.queries;
  const tpSize = throughputSize(profile.sizes, o.throughputNodes);
  await withMesh(env, async (mesh, client) => {
    const kernel = inProcessKernel({ index: mesh.index, embedder: mesh.embedder, outliner, env });
    const capture = new RequestCapture(env);
    try {
      let loaded = 0;
      for (const size of profile.sizes) {
        const sr: SizeResult = { nodes: size, points: 0, load: { docs: 0, ms: 0, docsPerSecond: 0, optimizeMs: null } };
        sink.sizes[String(size)] = sr;
        log(`${profile.name}: load documents ${loaded}…${size - 1} through the indexer's apply path`);
        const r = await bulkLoad(mesh.index, mesh.embedder, outliner, loaded, size, { source: profile.docs, onProgress: (d, t) => log(`  load: ${d}/${t}`) });
        loaded = size;
        sr.points = r.points;
        sr.load = { docs: r.docs, ms: r.ms, docsPerSecond: r.docs / (r.ms / 1000), optimizeMs: r.optimizeMs, denseMs: r.denseMs };
        log(`${profile.name}: ${size} nodes, ${r.points} points (records), ${fmt(sr.load.docsPerSecond)} docs/s`);
        save();
        if (o.sections.has('latency')) {
          const reps = profile.reps(size);
          log(`${profile.name}: latency at ${size} nodes: ${ENDPOINTS.length} endpoints × ${queries.length} queries × ${reps} pass(es), gateway and in process`);
          sr.latency = await measureLatency(client, kernel, capture, queries, { reps, log });
          sr.storeLegs = await measureStoreLegs(mesh.index, mesh.embedder, queries.slice(0, 100));
          sr.hops = await measureHops(client, mesh.addrs.budgetRender!, kernel, o.quick ? 100 : 200);
          const c = sr.latency.endpoints.context;
          log(`${profile.name}: latency at ${size}: context p50 ${fmt(c?.gateway?.p50)} ms via gateway, ${fmt(c?.inProcess?.p50)} ms in process (${fmt(c?.ratioP50)}×)`);
        }
        // The whole mesh runs in this process: its resident memory with the index of this size
        // loaded and searched (before the engine comparisons below build engines of their own).
        sr.rssMiB = process.memoryUsage().rss / (1024 * 1024);
        if (o.sections.has('latency') && profile.name === 'docs') {
          const dbPath = join(dataDir, DB_FILE);
          log(`${profile.name}: lexical engines side by side (the first 20,000 rows)`);
          sr.lexicalAlternatives = measureLexicalAlternatives(dbPath, queries.slice(0, 100), 20_000, DEFAULT_TUNING.maxQueryPostings);
          log(`${profile.name}: dense leg, HNSW index against the exact scan (the index is built in the background first)`);
          sr.ann = await measureAnn(dbPath, mesh.embedder, queries.slice(0, 100), mesh.embedder.dimension);
          log(`${profile.name}: ANN recall@10 ${fmt(sr.ann.recall10, 3)}, p50 ${fmt(sr.ann.ann.p50)} ms against ${fmt(sr.ann.exact.p50)} ms exact`);
          save();
        }
        save();
        if (size === tpSize) await atThroughputSize(o, profile, sink, report, mesh, client, scratch, save);
      }
      if (o.sections.has('latency') && profile.name === 'default') {
        const largest = o.sizes[o.sizes.length - 1]!;
        log(`vectors: exact dense scan at ${largest} nodes with 64, 128 and 256 dimensions (synthetic in-memory indexes)`);
        report.denseByDimension = { nodes: largest, byDimension: await measureDenseByDimension(largest, [64, 128, 256]) };
        save();
      }
    } finally {
      kernel.close();
      await capture.close();
    }
  });
  if (profile.startupOnData && o.sections.has('startup')) {
    log(`${profile.name}: npm start on the loaded data (${profile.sizes.at(-1)} nodes)`);
    const serve = profile.queries.slice(0, 300).map((q) => ({ query: q.text, mode: 'context' }));
    sink.startupOnData = await measureStartup(5000, 60_000, dataDir, serve);
    log(`${profile.name}: healthy in ${fmt(sink.startupOnData.healthyMs)} ms, idle RSS ${fmt(sink.startupOnData.idleRssMiB)} MiB, ${fmt(sink.startupOnData.servedRssMiB)} MiB after ${serve.length} context requests`);
    save();
  }
}

async function atThroughputSize(o: RunOptions, profile: Profile, sink: ProfileSink, report: BenchReport, mesh: Mesh, client: JsonClient, scratch: string, save: () => void): Promise<void> {
  const size = Number(Object.keys(sink.sizes).at(-1));
  const queries = profile.queries;
  if (o.sections.has('budget') && profile.budget) {
    try {
      const qs = balancedQueries(queries, o.budgetQueries);
      log(`budget: ${qs.length} queries × 9 budgets × 2 tokenizers at ${size} nodes`);
      report.budget = { nodes: size, ...(await measureBudgetHonesty(client, qs)) };
      log(`budget: max used/max ${fmt(report.budget.maxUsedRatio.estimate, 3)} (estimate), ${fmt(report.budget.maxUsedRatio.o200k_base, 3)} (o200k)`);
    } catch (err) {
      report.failures.budget = (err as Error).message;
    }
    save();
  }
  if (!o.sections.has('throughput')) return;
  sink.throughput = { nodes: size, inProcessMesh: [], separateProcesses: [], errors: [] };
  const tp = sink.throughput;
  const path = ENDPOINTS[0]!.path;
  const bodies = profile.throughputQueries.map((q) => ({ query: q.text, mode: 'context' }));
  // An unrecorded warm-up run, so the first measured run does not pay for cold caches and JIT.
  const warm = { connections: 4, seconds: o.quick ? 1 : 2, path, bodies };
  await runLoad({ url: mesh.gatewayUrl, ...warm }, {}).catch(() => undefined);
  for (const c of o.concurrencies) {
    try {
      log(`throughput: one process, concurrency ${c}, ${o.throughputSeconds} s`);
      const run: ThroughputRun = await runLoad({ url: mesh.gatewayUrl, connections: c, seconds: o.throughputSeconds, path, bodies }, { mesh: process.pid });
      tp.inProcessMesh!.push(run);
      log(`  ${fmt(run.rps)} req/s, ${failedRequests(run)} errors`);
    } catch (err) {
      tp.errors!.push(`one process c=${c}: ${(err as Error).message}`);
    }
    save();
  }
  if (!o.natsUrl) {
    report.notes.push(`${profile.name}: separate-process throughput not measured (--no-nats: \`ctxmesh serve\` needs NATS)`);
    return;
  }
  try {
    await separateProcesses(o, mesh, scratch, tp, bodies, path, save);
  } catch (err) {
    // A failed multi-process start must not cost the larger sizes still to measure.
    tp.errors!.push(`separate processes: ${(err as Error).message}`);
    log(`throughput: separate processes FAILED: ${(err as Error).message.split('\n')[0]}`);
    save();
  }
}

async function separateProcesses(
  o: RunOptions,
  mesh: Mesh,
  scratch: string,
  tp: NonNullable<BenchReport['throughput']>,
  bodies: unknown[],
  path: string,
  save: () => void,
): Promise<void> {
  // The separate processes read a copy of this index, taken consistently with VACUUM INTO —
  // into a directory of this profile's own (VACUUM INTO refuses a file that exists: the second
  // profile's run failed on the first one's copy).
  const dir = mkdtempSync(join(scratch, 'cluster-'));
  const db = openEmbeddedDb(join(mesh.dataDir, DB_FILE));
  try {
    db.exec(`VACUUM INTO '${join(dir, DB_FILE).replace(/'/g, "''")}'`);
  } finally {
    db.close();
  }
  // With their HNSW indexes (current to the copy's change log), so that no process builds one during the runs.
  for (const f of readdirSync(mesh.dataDir)) if (f.startsWith(`${DB_FILE}.ann-`)) copyFileSync(join(mesh.dataDir, f), join(dir, f));
  log('throughput: starting every service as its own process (ctxmesh serve …)');
  const cluster = await startCluster({ dataDir: dir, natsUrl: o.natsUrl!, logDir: join(dir, 'logs') });
  const warm = { connections: 4, seconds: o.quick ? 1 : 2, path, bodies };
  try {
    await runLoad({ url: cluster.gatewayUrl, ...warm }, {}).catch(() => undefined);
    for (const c of o.concurrencies) {
      try {
        log(`throughput: separate processes, concurrency ${c}, ${o.throughputSeconds} s`);
        const run = await runLoad({ url: cluster.gatewayUrl, connections: c, seconds: o.throughputSeconds, path, bodies }, cluster.pids);
        tp.separateProcesses!.push(run);
        log(`  ${fmt(run.rps)} req/s, ${failedRequests(run)} errors`);
      } catch (err) {
        tp.errors!.push(`separate processes c=${c}: ${(err as Error).message}`);
      }
      save();
    }
  } finally {
    await cluster.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function dimNote(r: BenchReport): string {
  const d = r.denseByDimension;
  if (!d) return '';
  const p = (dim: number) => fmt(d.byDimension[String(dim)]?.p50);
  return `smaller vectors, measured at ${d.nodes.toLocaleString('en-US')} nodes: a dense-only search costs ${p(256)} ms at 256 dimensions, ${p(128)} ms at 128, ${p(64)} ms at 64 (p50)`;
}

/** Explanations that belong next to the numbers, derived from them (no fixed claims). */
export function addNotes(r: BenchReport): void {
  for (const t of (r.targets ?? []).filter((x) => x.id.startsWith('context-p50') && x.met === false)) {
    const n = t.id.endsWith('100k') ? 100_000 : 10_000;
    const s = r.sizes[String(n)];
    const c = s?.latency?.endpoints.context;
    if (!s || !c?.gateway || !c.inProcess) continue;
    const overhead = c.gateway.p50 - c.inProcess.p50;
    const st = s.latency!.stages.inProcess;
    const sg = s.latency!.stages.gateway;
    const stageSum = Object.values(sg).reduce((a, b) => a + b, 0);
    const legs = s.storeLegs;
    const parts = [
      `${t.id} not met: context p50 ${fmt(c.gateway.p50)} ms via the gateway = ${fmt(c.inProcess.p50)} ms of kernel work in process + ${fmt(overhead)} ms of transport` +
        (s.hops ? ` (one loopback gRPC round trip p50 ${fmt(s.hops.grpc.p50)} ms, one HTTP round trip ${fmt(s.hops.http.p50)} ms on this machine)` : '') +
        '.',
      `In process the stages take gather ${fmt(st.gather)} ms, tier_read ${fmt(st.tier_read)} ms, budget_render ${fmt(st.budget_render)} ms (p50);` +
        ` timed by the orchestrator in the mesh (each including its gRPC hop) gather ${fmt(sg.gather)} ms, tier_read ${fmt(sg.tier_read)} ms, budget_render ${fmt(sg.budget_render)} ms,` +
        ` which leaves ${fmt(c.gateway.p50 - stageSum)} ms for HTTP, the gateway (validation, JSON) and its call to the orchestrator.`,
    ];
    if (legs) {
      parts.push(
        `One store search at ${n.toLocaleString('en-US')} nodes: hybrid ${fmt(legs.hybrid.p50)} ms = exact dense scan ${fmt(legs.denseOnly.p50)} ms + lexical leg ${fmt(legs.lexicalOnly.p50)} ms (+ fusion); a lexical top-200 first stage with its vectors fetched measures ${fmt(legs.lexicalThenDense.p50)} ms.`,
      );
      parts.push(
        overhead > c.inProcess.p50
          ? 'Transport dominates: fewer hops on the context path (tier-read and budget-render in the orchestrator\'s process, or one batched call) would save more than any store change.'
          : legs.denseOnly.p50 >= legs.lexicalOnly.p50
            ? `The exact dense scan dominates the store: an ANN index (Qdrant's HNSW, the production store) would remove it${r.denseByDimension ? `; ${dimNote(r)}` : ''}.`
            : 'The lexical leg dominates the store, not the exact dense scan: an ANN index would not help; a smaller lexical postings budget (`maxQueryPostings`) or fewer query terms would.',
      );
    }
    r.notes.push(parts.join(' '));
  }
  for (const [label, runs] of [['one process', r.throughput?.inProcessMesh], ['separate processes', r.throughput?.separateProcesses]] as const) {
    for (const t of runs ?? []) {
      if (t.requests === 0) r.notes.push(`throughput (${label}, concurrency ${t.connections}): no request completed within ${fmt(t.seconds)} s — the latency under this load exceeds the run.`);
    }
  }
  if (r.denseByDimension) r.notes.push(`Vector size: ${dimNote(r)}, on synthetic in-memory indexes of visible memories (the scan's cost does not depend on the values).`);
  const retrieveNote = Object.values(r.sizes).map((s) => s.latency?.endpoints.retrieve).find((e) => e && e.gateway === null)?.note;
  if (retrieveNote) r.notes.push(`retrieve latency: ${retrieveNote}`);
  r.notes.push(
    'Latency is sequential (one request in flight) with a keep-alive client in the bench process; the in-process side runs the same captured orchestrator requests over the same store instance, interleaved with the gateway side.',
  );
}

async function main(): Promise<number> {
  let o: RunOptions;
  try {
    o = parseArgs(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`bench: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (o.markdownFrom) {
    const r = JSON.parse(readFileSync(o.markdownFrom, 'utf8')) as BenchReport;
    if (o.markdownAgainst) {
      const before = JSON.parse(readFileSync(o.markdownAgainst, 'utf8')) as BenchReport;
      process.stdout.write(`${markdownTable(beforeAfterRows(before, r))}\n`);
      return 0;
    }
    process.stdout.write(`${markdownSummary(r)}\n`);
    return 0;
  }
  log(`${o.quick ? 'quick' : 'full'} run: sizes ${o.sizes.join(', ')}; sections ${[...o.sections].join(', ')}; report → ${o.out}`);
  const report = await runBench(o);
  process.stdout.write(`${textSummary(report)}\n\nreport: ${o.out}\n`);
  return Object.keys(report.failures).length > 0 ? 1 : 0;
}

if (require.main === module) {
  main().then(
    (code) => {
      process.exitCode = code;
      // gRPC channels or sockets of a failed section may linger; the report is written.
      setTimeout(() => process.exit(code), 3000).unref();
    },
    (err: unknown) => {
      process.stderr.write(`bench: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
