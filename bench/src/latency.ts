/**
 * Latency (issue 8, item 2): p50/p95/p99 of context mode, list mode, `/find` and `/retrieve`
 * through the gateway, and of the same orchestrator requests run by the kernel in process over
 * the same store, interleaved request by request so both sides see the same machine state;
 * the ratio of the two is the price of the mesh. Plus the stage breakdown (the orchestrator's
 * own stage timings through the gateway, the direct calls' in process) and the store's search
 * legs on their own (what a different first stage would save).
 */
import type { Embedder } from '@ctxmesh/embedder';
import { budgetRender, type orchestrator } from '@ctxmesh/proto';
import { Budget, callUnary, connect } from '@ctxmesh/rpc';
import { EmbeddedVectorIndex, openEmbeddedDb, type VectorIndex, type Visibility } from '@ctxmesh/stores';
import { NotCapturedError, type RequestCapture } from './capture';
import type { BenchQuery } from './corpus';
import type { JsonClient } from './http';
import type { InProcessKernel } from './inproc';
import { Rng, hashSeed } from './rng';
import { median, ratio, summarize, type Summary } from './stats';

/** An endpoint measured. */
export interface EndpointSpec {
  /** Report name. */
  name: 'context' | 'list' | 'find' | 'retrieve';
  /** Gateway path. */
  path: string;
  /** REST body for a query. */
  body(q: BenchQuery): Record<string, unknown>;
}

/** The four endpoints, with the bodies a plugin sends (defaults otherwise). */
export const ENDPOINTS: readonly EndpointSpec[] = [
  // `telemetry` returns the orchestrator's stage timings; it changes nothing else.
  { name: 'context', path: '/api/v1/search/search', body: (q) => ({ query: q.text, mode: 'context', telemetry: true }) },
  { name: 'list', path: '/api/v1/search/search', body: (q) => ({ query: q.text, mode: 'list' }) },
  { name: 'find', path: '/api/v1/search/find', body: (q) => ({ query: q.text, limit: 10 }) },
  { name: 'retrieve', path: '/api/v1/retrieve', body: (q) => ({ query: q.text }) },
];

/** Per-endpoint outcome at one corpus size. */
export interface EndpointLatency {
  /** Through the gateway (HTTP → gateway → gRPC mesh), ms. */
  gateway: Summary | null;
  /** The same requests through the kernel in process, ms. */
  inProcess: Summary | null;
  /** gateway p50 / in-process p50. */
  ratioP50: number | null;
  /** gateway p95 / in-process p95. */
  ratioP95: number | null;
  /** Non-200 answers or thrown calls, per side. */
  errors: { gateway: number; inProcess: number };
  /** Share of queries whose target document is among the results (a sanity check that real work is measured). */
  knownItemHit: number | null;
  /** Why a side was not measured, or the first error seen. */
  note?: string;
}

/** Latency of every endpoint at one size, plus the context-mode stage breakdown. */
export interface LatencyResult {
  endpoints: Record<string, EndpointLatency>;
  /** Median ms per context-mode stage: as the orchestrator timed them in the mesh, and the direct calls. */
  stages: { gateway: Record<string, number>; inProcess: Record<string, number> };
}

/** A side's request runner. */
type Runner = (i: number) => Promise<{ ok: boolean; ms: number; hit: boolean; stages?: Record<string, number>; error?: string }>;

interface StageRow {
  stage: string;
  duration_ms?: number;
  ms?: number;
}

function hitIn(body: unknown, target: string): boolean {
  const r = (body as { result?: Record<string, unknown> } | null)?.result;
  if (!r) return false;
  const uris: string[] = [];
  for (const key of ['entries', 'memories', 'resources', 'skills', 'passages', 'groupMemories']) {
    const list = r[key];
    if (Array.isArray(list)) for (const e of list) uris.push(String((e as { uri?: string; doc_uri?: string }).doc_uri ?? (e as { uri?: string }).uri ?? ''));
  }
  return uris.includes(target);
}

function stagesOf(rows: readonly StageRow[] | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows ?? []) out[r.stage] = (out[r.stage] ?? 0) + Number(r.duration_ms ?? r.ms ?? 0);
  return out;
}

function medianStages(samples: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const names = new Set(samples.flatMap((s) => Object.keys(s)));
  return Object.fromEntries([...names].map((n) => [n, median(samples.map((s) => s[n] ?? 0))]));
}

/** Options of {@link measureLatency}. */
export interface LatencyOptions {
  /** Passes over the query set per endpoint and side. */
  reps: number;
  /** Untimed requests per side before measuring. @default 15 */
  warmup?: number;
  /** Progress line. */
  log?: (msg: string) => void;
}

/**
 * Measure every endpoint at the mesh's current corpus. For each query the endpoints run in
 * turn, and within an endpoint the gateway and in-process calls alternate which goes first, so
 * neither side systematically gets the warmer cache.
 */
export async function measureLatency(
  client: JsonClient,
  kernel: InProcessKernel,
  capture: RequestCapture,
  queries: readonly BenchQuery[],
  opts: LatencyOptions,
): Promise<LatencyResult> {
  const endpoints: Record<string, EndpointLatency> = {};
  const sides: Array<{ spec: EndpointSpec; gateway: Runner | null; inProcess: Runner | null; note?: string }> = [];

  for (const spec of ENDPOINTS) {
    const bodies = queries.map((q) => spec.body(q));
    let captured: unknown[] | null = [];
    let note: string | undefined;
    try {
      for (const b of bodies) captured.push((await capture.capture(spec.path, b)).request);
    } catch (err) {
      captured = null;
      note = err instanceof NotCapturedError ? `not measured: the gateway answers ${err.status} (${err.body.slice(0, 160)})` : `not measured: ${(err as Error).message}`;
    }
    if (captured === null) {
      sides.push({ spec, gateway: null, inProcess: null, note });
      continue;
    }
    const reqs = captured;
    const gateway: Runner = async (i) => {
      const r = await client.post(spec.path, bodies[i]);
      const ok = r.status === 200;
      const telemetry = (r.body as { telemetry?: { summary?: { stages?: StageRow[] } } } | null)?.telemetry;
      return { ok, ms: r.ms, hit: ok && hitIn(r.body, queries[i]!.target), stages: telemetry ? stagesOf(telemetry.summary?.stages) : undefined, error: ok ? undefined : `HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}` };
    };
    let inProcess: Runner | null;
    if (spec.name === 'context') {
      inProcess = async (i) => {
        const t0 = performance.now();
        const out = await kernel.assembleContext(reqs[i] as orchestrator.AssembleContextRequest);
        return { ok: true, ms: performance.now() - t0, hit: false, stages: stagesOf(out.stages) };
      };
    } else if (spec.name === 'retrieve') {
      inProcess = async (i) => {
        const t0 = performance.now();
        await kernel.retrieve(reqs[i] as orchestrator.RetrieveRequest);
        return { ok: true, ms: performance.now() - t0, hit: false };
      };
    } else {
      inProcess = async (i) => {
        const t0 = performance.now();
        await kernel.search(reqs[i] as orchestrator.SearchRequest);
        return { ok: true, ms: performance.now() - t0, hit: false };
      };
    }
    sides.push({ spec, gateway, inProcess, note });
  }

  // Warm both sides (JIT, embedding cache, SQLite pages) before anything is timed.
  const warm = Math.min(opts.warmup ?? 15, queries.length);
  for (const s of sides) {
    for (let i = 0; i < warm; i++) {
      await s.gateway?.(i).catch(() => undefined);
      await s.inProcess?.(i).catch(() => undefined);
    }
  }

  const acc = new Map<string, { g: number[]; p: number[]; gErr: number; pErr: number; hits: number; seen: number; gStages: Array<Record<string, number>>; pStages: Array<Record<string, number>>; firstError?: string }>();
  for (const s of sides) acc.set(s.spec.name, { g: [], p: [], gErr: 0, pErr: 0, hits: 0, seen: 0, gStages: [], pStages: [] });
  const total = opts.reps * queries.length;
  let lastLog = performance.now();
  for (let rep = 0; rep < opts.reps; rep++) {
    for (let i = 0; i < queries.length; i++) {
      for (const s of sides) {
        const a = acc.get(s.spec.name)!;
        const order = (rep + i) % 2 === 0 ? (['g', 'p'] as const) : (['p', 'g'] as const);
        for (const side of order) {
          const run = side === 'g' ? s.gateway : s.inProcess;
          if (!run) continue;
          try {
            const r = await run(i);
            if (!r.ok) {
              if (side === 'g') a.gErr++;
              else a.pErr++;
              a.firstError ??= r.error;
              continue;
            }
            if (side === 'g') {
              a.g.push(r.ms);
              if (rep === 0) {
                a.seen++;
                if (r.hit) a.hits++;
              }
              if (r.stages) a.gStages.push(r.stages);
            } else {
              a.p.push(r.ms);
              if (r.stages) a.pStages.push(r.stages);
            }
          } catch (err) {
            if (side === 'g') a.gErr++;
            else a.pErr++;
            a.firstError ??= (err as Error).message;
          }
        }
      }
      const done = rep * queries.length + i + 1;
      if (opts.log && performance.now() - lastLog > 5000) {
        lastLog = performance.now();
        opts.log(`  latency: ${done}/${total} queries`);
      }
    }
  }

  let gStages: Record<string, number> = {};
  let pStages: Record<string, number> = {};
  for (const s of sides) {
    const a = acc.get(s.spec.name)!;
    const g = s.gateway && a.g.length > 0 ? summarize(a.g) : null;
    const p = s.inProcess && a.p.length > 0 ? summarize(a.p) : null;
    endpoints[s.spec.name] = {
      gateway: g,
      inProcess: p,
      ratioP50: g && p ? ratio(g.p50, p.p50) : null,
      ratioP95: g && p ? ratio(g.p95, p.p95) : null,
      errors: { gateway: a.gErr, inProcess: a.pErr },
      knownItemHit: s.gateway && a.seen > 0 ? a.hits / a.seen : null,
      ...(s.note || a.firstError ? { note: [s.note, a.firstError && `first error: ${a.firstError}`].filter(Boolean).join('; ') } : {}),
    };
    if (s.spec.name === 'context') {
      gStages = medianStages(a.gStages);
      pStages = medianStages(a.pStages);
    }
  }
  return { endpoints, stages: { gateway: gStages, inProcess: pStages } };
}

/** The store's search legs on their own (one search as gather issues it, limit 10). */
export interface StoreLegs {
  /** Dense + lexical, fused (what gather runs). */
  hybrid: Summary;
  /** Lexical leg only (vector null). */
  lexicalOnly: Summary;
  /** Dense leg only (exact scan over every visible vector). */
  denseOnly: Summary;
  /**
   * A lexical first stage: the 200 best lexical candidates, then their dense vectors fetched
   * for re-scoring — what replacing the exact dense scan with a lexical prefilter would cost.
   */
  lexicalThenDense: Summary;
}

/** The bench user's visibility (dev identity `default`/`default`). */
export const BENCH_VISIBILITY: Visibility = { account: 'default', user: 'default', actorPeer: null, openPeers: false, allUsers: false, workspace: null };

/** Time the store's legs for each query (after one untimed pass). */
export async function measureStoreLegs(index: VectorIndex, embedder: Embedder, queries: readonly BenchQuery[]): Promise<StoreLegs> {
  const vectors = await embedder.embed(queries.map((q) => q.text));
  const legs = { hybrid: [] as number[], lexicalOnly: [] as number[], denseOnly: [] as number[], lexicalThenDense: [] as number[] };
  const base = { visibility: BENCH_VISIBILITY, targets: [] as string[], filter: null, limit: 10 };
  for (let pass = 0; pass < 2; pass++) {
    for (let i = 0; i < queries.length; i++) {
      const text = queries[i]!.text;
      const vector = vectors[i]!;
      const time = async (key: keyof typeof legs, fn: () => Promise<unknown>) => {
        const t0 = performance.now();
        await fn();
        if (pass === 1) legs[key].push(performance.now() - t0);
      };
      await time('hybrid', () => index.search([{ ...base, vector, text }]));
      await time('lexicalOnly', () => index.search([{ ...base, vector: null, text }]));
      await time('denseOnly', () => index.search([{ ...base, vector, text: '' }]));
      await time('lexicalThenDense', async () => {
        const [hits] = await index.search([{ ...base, vector: null, text, limit: 200 }]);
        await index.vectors((hits ?? []).map((h) => h.node.uri), BENCH_VISIBILITY);
      });
    }
  }
  return { hybrid: summarize(legs.hybrid), lexicalOnly: summarize(legs.lexicalOnly), denseOnly: summarize(legs.denseOnly), lexicalThenDense: summarize(legs.lexicalThenDense) };
}

/** The cost of one hop on its own: an HTTP round trip and a gRPC round trip of a trivial call. */
export interface HopCosts {
  /** `GET /health` through the keep-alive client, ms. */
  http: Summary;
  /** budget-render `CountTokens` over loopback gRPC, ms. */
  grpc: Summary;
  /** The same `CountTokens` handler called directly, ms. */
  direct: Summary;
}

/**
 * Time the transports with (almost) no work behind them, interleaved: the floor under every
 * mesh-vs-in-process difference above.
 */
export async function measureHops(client: JsonClient, budgetRenderAddr: string, kernel: InProcessKernel, samples = 200): Promise<HopCosts> {
  const conn = connect(budgetRender.BudgetRenderServiceClient, budgetRenderAddr);
  const req: budgetRender.CountTokensRequest = budgetRender.CountTokensRequest.fromPartial({ texts: ['hello world'], tokenizer: 'estimate' });
  const t = { http: [] as number[], grpc: [] as number[], direct: [] as number[] };
  try {
    for (let i = 0; i < samples + 10; i++) {
      const keep = i >= 10;
      const h = await client.get('/health');
      if (keep) t.http.push(h.ms);
      const b = Budget.ofMs(5000);
      let t0 = performance.now();
      await callUnary(conn.countTokens.bind(conn), req, b, { domain: 'budget-render' });
      if (keep) t.grpc.push(performance.now() - t0);
      t0 = performance.now();
      await kernel.ports.budgetRender.countTokens(req, b);
      if (keep) t.direct.push(performance.now() - t0);
      b.dispose();
    }
  } finally {
    conn.close();
  }
  return { http: summarize(t.http), grpc: summarize(t.grpc), direct: summarize(t.direct) };
}

/**
 * The exact dense scan at several vector dimensions, measured: for each dimension an
 * in-memory embedded index of `nodes` visible memory points with random unit-free vectors
 * (the scan's cost does not depend on the values) and a minimal lexical text, then dense-only
 * searches. Shows what smaller vectors would save at this corpus size.
 * @returns dense-only search latency per dimension, ms
 */
export async function measureDenseByDimension(nodes: number, dims: readonly number[], searches = 60): Promise<Record<string, Summary>> {
  const out: Record<string, Summary> = {};
  for (const dim of dims) {
    const db = openEmbeddedDb(':memory:');
    const index = new EmbeddedVectorIndex(db, { dimension: dim });
    try {
      const rng = new Rng(hashSeed('dims', dim));
      const vec = () => Float32Array.from({ length: dim }, () => rng.next() - 0.5);
      for (let i = 0; i < nodes; i++) {
        const uri = `viking://user/default/memories/events/v${i}.md`;
        await index.replaceDocument(uri, [
          {
            uri, docUri: uri, parentUri: 'viking://user/default/memories/events', contextType: 'memory', category: 'events', level: 2,
            account: 'default', owner: 'default', peer: '', workspace: 'default', subject: 'default', tags: [], createdAt: 0, updatedAt: 0,
            validFrom: null, validTo: null, title: '', abstract: `n${i}`, overview: '', body: '', contentHash: 'h', passageIndex: 0, links: [], vector: vec(), lexicalText: `n${i}`,
          },
        ]);
      }
      const times: number[] = [];
      for (let k = 0; k < searches + 5; k++) {
        const t0 = performance.now();
        await index.search([{ visibility: BENCH_VISIBILITY, vector: vec(), text: '', targets: [], filter: null, limit: 10 }]);
        if (k >= 5) times.push(performance.now() - t0);
      }
      out[String(dim)] = summarize(times);
    } finally {
      await index.close();
      db.close();
    }
  }
  return out;
}
