#!/usr/bin/env node
/**
 * `npm run bench:pair -- --against <checkout> --data <dir>`: this checkout against another built
 * one (the main before a change, say), on one host at the same time — the before/after of a
 * change when the host's speed drifts between whole bench runs (on the shared 2-core machine
 * it drifted ±15 % within minutes, more than most changes). Each side is `ctxmesh start` on its
 * own copy of a loaded data directory (`npm start` defaults); one client sends every context
 * request to both, in alternating order, one request in flight, so each pair meets the same
 * host; then load windows of concurrency 16 alternate between the sides. Reported: each side's
 * p50 and the median of the per-request ratios (after / before), the requests/s of every
 * window, errors, and each side's resident memory at the end.
 *
 *   --against DIR    the other checkout (built: `npm ci` there)                        required
 *   --data DIR       a data directory holding a loaded `ctxmesh.db` (copied, never written) required
 *   --requests N     paired requests (after 100 unrecorded ones to each)               @default 300
 *   --windows N      load windows per side                                             @default 4
 *   --seconds S      length of a window                                                @default 8
 *   --out FILE       also write the report as JSON
 *
 * The queries are the `docs` profile's (`buildDocsQueries`, pool 10,000).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ctxmeshBin } from './cluster';
import { buildDocsQueries } from './docs-corpus';
import { JsonClient, waitForOk } from './http';
import { probeHost } from './host';
import { freePort, rssMiB, stopChild } from './procs';
import { median } from './stats';
import { failedRequests, runLoad } from './throughput';

/** Options of a paired run. */
export interface PairOptions {
  against: string;
  data: string;
  requests: number;
  windows: number;
  seconds: number;
  out: string | null;
}

/** A command line the pair cannot run. */
export class PairUsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PairUsageError';
  }
}

/**
 * Parse the pair's flags.
 * @throws PairUsageError listing every problem
 */
export function parsePairArgs(argv: readonly string[]): PairOptions {
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: { against: { type: 'string' }, data: { type: 'string' }, requests: { type: 'string' }, windows: { type: 'string' }, seconds: { type: 'string' }, out: { type: 'string' } },
      strict: true,
    }) as { values: Record<string, string | undefined> });
  } catch (err) {
    throw new PairUsageError((err as Error).message);
  }
  const problems: string[] = [];
  const int = (name: string, dflt: number): number => {
    const v = values[name];
    if (v === undefined) return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) problems.push(`--${name} must be a positive integer, got ${JSON.stringify(v)}`);
    return n;
  };
  if (!values.against) problems.push('--against <checkout> is required');
  if (!values.data) problems.push('--data <dir> is required');
  const o: PairOptions = {
    against: values.against ? resolve(values.against) : '',
    data: values.data ? resolve(values.data) : '',
    requests: int('requests', 300),
    windows: int('windows', 4),
    seconds: int('seconds', 8),
    out: values.out ? resolve(values.out) : null,
  };
  if (problems.length > 0) throw new PairUsageError(problems.join('; '));
  return o;
}

/** Paired latencies of the two sides. */
export interface PairedLatency {
  n: number;
  /** p50 of each side, ms. */
  beforeP50: number;
  afterP50: number;
  /** Median of the per-request ratios after / before. */
  medianRatio: number;
  /** Share of the pairs where the after side answered sooner. */
  afterFasterShare: number;
}

/**
 * Summarize paired latencies (`before[i]` and `after[i]` answer the same request).
 * @throws RangeError when the lists differ in length
 */
export function pairedLatency(before: readonly number[], after: readonly number[]): PairedLatency {
  if (before.length !== after.length) throw new RangeError(`paired lists differ in length: ${before.length} and ${after.length}`);
  const ratios = before.map((b, i) => after[i]! / b);
  return {
    n: before.length,
    beforeP50: median(before),
    afterP50: median(after),
    medianRatio: median(ratios),
    afterFasterShare: before.length === 0 ? Number.NaN : before.filter((b, i) => after[i]! < b).length / before.length,
  };
}

/** The report of a paired run. */
export interface PairReport {
  meta: { startedAt: string; hostProbeMs: { start: number; end: number }; before: string; after: string; data: string };
  latency: PairedLatency;
  /** Blocks the two sides rendered identically, of `latency.n`. */
  sameBlocks: number;
  /** Requests/s of each window, per side, in the order run. */
  rps: { before: number[]; after: number[] };
  /** Transport errors, timeouts and non-2xx answers under load, per side. */
  loadErrors: { before: number; after: number };
  /** Resident memory of each side's process at the end, MiB (null where unreadable). */
  rssMiB: { before: number | null; after: number | null };
}

function startSide(bin: string, dataDir: string, port: number): ChildProcess {
  if (!existsSync(bin)) throw new PairUsageError(`${bin} is missing: build that checkout (npm ci)`);
  return spawn(process.execPath, [bin, 'start'], {
    env: { ...process.env, CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: String(port), GATEWAY_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Run the pair: this checkout is the after side, `--against` the before side. */
export async function runPair(o: PairOptions, log: (line: string) => void = (l) => console.error(l)): Promise<PairReport> {
  if (!existsSync(join(o.data, 'ctxmesh.db'))) throw new PairUsageError(`${o.data} holds no ctxmesh.db`);
  const here = resolve(__dirname, '..', '..');
  const scratch = mkdtempSync(join(tmpdir(), 'ctxmesh-pair-'));
  const sides = { before: { dir: join(scratch, 'before'), port: await freePort() }, after: { dir: join(scratch, 'after'), port: await freePort() } };
  const procs: ChildProcess[] = [];
  const probeStart = probeHost().ms;
  try {
    for (const s of Object.values(sides)) cpSync(o.data, s.dir, { recursive: true });
    const before = startSide(join(o.against, 'apps', 'ctxmesh', 'dist', 'bin.js'), sides.before.dir, sides.before.port);
    const after = startSide(ctxmeshBin(), sides.after.dir, sides.after.port);
    procs.push(before, after);
    const url = (port: number) => `http://127.0.0.1:${port}`;
    for (const s of Object.values(sides)) {
      if ((await waitForOk(url(s.port), '/health', 300_000)) === null) throw new Error(`${url(s.port)} did not become healthy`);
    }
    const cb = new JsonClient(url(sides.before.port));
    const ca = new JsonClient(url(sides.after.port));
    try {
      const queries = buildDocsQueries(100 + o.requests, { pool: 10_000 });
      const body = (text: string) => ({ query: text, mode: 'context' });
      log(`pair: 100 unrecorded requests to each side, then ${o.requests} paired`);
      for (const q of queries.slice(0, 100)) {
        await cb.post('/api/v1/search/search', body(q.text));
        await ca.post('/api/v1/search/search', body(q.text));
      }
      const tb: number[] = [];
      const ta: number[] = [];
      let same = 0;
      for (const [i, q] of queries.slice(100).entries()) {
        const rendered: Array<unknown> = [];
        for (const [client, times] of i % 2 ? ([[ca, ta], [cb, tb]] as const) : ([[cb, tb], [ca, ta]] as const)) {
          const t0 = performance.now();
          const r = await client.post('/api/v1/search/search', body(q.text));
          times.push(performance.now() - t0);
          rendered.push((r.body as { result?: { rendered?: unknown } } | null)?.result?.rendered);
        }
        if (rendered[0] === rendered[1]) same++;
      }
      const bodies = queries.slice(100).map((q) => body(q.text));
      const rps = { before: [] as number[], after: [] as number[] };
      const loadErrors = { before: 0, after: 0 };
      for (let w = 0; w < o.windows; w++) {
        for (const side of w % 2 ? (['after', 'before'] as const) : (['before', 'after'] as const)) {
          log(`pair: window ${w + 1}/${o.windows}, ${side}, concurrency 16, ${o.seconds} s`);
          const run = await runLoad({ url: url(sides[side].port), connections: 16, seconds: o.seconds, path: '/api/v1/search/search', bodies }, {});
          rps[side].push(run.rps);
          loadErrors[side] += failedRequests(run);
        }
      }
      return {
        meta: { startedAt: new Date().toISOString(), hostProbeMs: { start: probeStart, end: probeHost().ms }, before: o.against, after: here, data: o.data },
        latency: pairedLatency(tb, ta),
        sameBlocks: same,
        rps,
        loadErrors,
        rssMiB: { before: before.pid === undefined ? null : rssMiB(before.pid), after: after.pid === undefined ? null : rssMiB(after.pid) },
      };
    } finally {
      cb.close();
      ca.close();
    }
  } finally {
    await Promise.all(procs.map((p) => stopChild(p)));
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  let o: PairOptions;
  try {
    o = parsePairArgs(process.argv.slice(2));
  } catch (err) {
    console.error(`bench:pair: ${(err as Error).message}`);
    process.exitCode = 2;
    return;
  }
  const r = await runPair(o);
  const f = (x: number) => x.toFixed(1);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`context p50: before ${f(r.latency.beforeP50)} ms, after ${f(r.latency.afterP50)} ms; median ratio after/before ${r.latency.medianRatio.toFixed(3)} (${Math.round(100 * r.latency.afterFasterShare)} % of pairs faster), ${r.sameBlocks}/${r.latency.n} blocks identical`);
  console.log(`req/s at concurrency 16: before ${r.rps.before.map(f).join(' ')} (mean ${f(mean(r.rps.before))}), after ${r.rps.after.map(f).join(' ')} (mean ${f(mean(r.rps.after))}); errors ${r.loadErrors.before} / ${r.loadErrors.after}`);
  const mib = (x: number | null) => (x === null ? '–' : String(Math.round(x)));
  console.log(`resident at the end: before ${mib(r.rssMiB.before)} MiB, after ${mib(r.rssMiB.after)} MiB; host probe ${f(r.meta.hostProbeMs.start)} → ${f(r.meta.hostProbeMs.end)} ms`);
  if (o.out) writeFileSync(o.out, JSON.stringify(r, null, 2) + '\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
