/**
 * Latency of one context request through the whole mesh on a 10,000-node embedded corpus
 * (not a test: nothing here asserts on time).
 *
 *   node test/e2e/contract/run-ts.cjs test/e2e/contract/latency.ts [--nodes 10000] [--runs 60] [--http-sample 200]
 *
 * 1. Starts the mesh in process (embedded SQLite store, in-process bus, gateway on a free port).
 * 2. Seeds a deterministic corpus (resources with headings, events with Summary + ChatLog,
 *    entities, preferences, experiences, trajectories, peers' memories, ~10% Chinese/Japanese)
 *    through the indexer's own `Applier` over the mesh's index and embedder — the code the
 *    indexer runs for each bus message (records, passages, embeddings, `replaceDocument`),
 *    minus the bus hop — because 10,000 HTTP writes with `wait:true` take minutes. A sample of
 *    `--http-sample` extra writes goes through `POST /api/v1/content/write` to report that rate.
 * 3. Sends warm-up requests, then `--runs` context requests per profile over HTTP, sequentially,
 *    with `time_budget_ms: 60000` so `stats.stage_ms` reports each orchestrator stage.
 * 4. Prints p50/p90 wall time (client side: HTTP + gateway + gRPC hops + every stage) and, per
 *    stage, the median ms and the median share of the request's wall time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Applier, type ValidWrite } from '@ctxmesh/indexer';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh } from '../../../apps/ctxmesh/src/mesh';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const NODES = arg('nodes', 10_000);
const RUNS = arg('runs', 60);
const HTTP_SAMPLE = arg('http-sample', 200);
const WARMUP = 10;
const ACCOUNT = 'bench';
const USER = 'default';

/** mulberry32: a small deterministic PRNG. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rand = prng(20260714);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
const SYLLABLES = ['ka', 'lo', 'mi', 'ru', 'te', 'sa', 'no', 'vi', 'da', 'po', 're', 'zu', 'an', 'el', 'or', 'ix'];
const VOCAB = Array.from({ length: 3000 }, () => Array.from({ length: 2 + Math.floor(rand() * 3) }, () => pick(SYLLABLES)).join(''));
const TOPICS = ['deploy', 'proxy', 'budget', 'garden', 'invoice', 'kubernetes', 'redis', 'tokenizer', 'orchard', 'migration', 'latency', 'billing', 'search', 'context', 'session', 'harvest'];
const CJK = ['东京旅行的计划', '部署代理服务', '预算和发票', '京都の寺院', '検索のレイテンシ', '한국어 메모'];

function sentence(topic: string, words: number): string {
  const out: string[] = [];
  for (let i = 0; i < words; i++) out.push(rand() < 0.08 ? topic : pick(VOCAB));
  return out.join(' ');
}

function document(i: number): [string, string] {
  const topic = pick(TOPICS);
  const cjk = rand() < 0.1 ? ` ${pick(CJK)}` : '';
  const r = rand();
  const root = `viking://user/${USER}`;
  if (r < 0.6) {
    const sections = 1 + Math.floor(rand() * 4);
    const body = Array.from({ length: sections }, (_, s) => `## ${topic} part ${s}\n\n${sentence(topic, 40 + Math.floor(rand() * 160))}${cjk}`).join('\n\n');
    return [`viking://resources/corpus/${topic}/doc${i}.md`, `# ${topic} guide ${i}\n\n${body}\n`];
  }
  if (r < 0.7) {
    return [`${root}/memories/events/2026/${i}.md`, `# Summary\n${sentence(topic, 12)}${cjk}\n\n# 2026-07-14 ChatLog:\n${sentence(topic, 80 + Math.floor(rand() * 200))}\n<!-- MEMORY_FIELDS {"i": ${i}} -->`];
  }
  const kinds = ['entities', 'preferences', 'experiences', 'trajectories'];
  if (r < 0.95) return [`${root}/memories/${pick(kinds)}/m${i}.md`, `${sentence(topic, 10 + Math.floor(rand() * 40))}${cjk}`];
  return [`${root}/peers/${pick(['ann', 'bob', 'cho'])}/memories/${pick(['events', 'entities'])}/p${i}.md`, `# Summary\n${sentence(topic, 10)}\n\n# Log\n${sentence(topic, 40)}`];
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
}

async function post(url: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'X-OpenViking-Account': ACCOUNT, 'X-OpenViking-User': USER },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

async function pool<T>(items: T[], concurrency: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < items.length) await fn(items[next++]);
  }));
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-latency-'));
  const mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0' }, log: silentLogger() });
  try {
    const docs = Array.from({ length: NODES }, (_, i) => document(i));
    const applier = new Applier({ index: mesh.index, embedder: mesh.embedder });
    let t0 = performance.now();
    await pool(docs, 8, ([uri, content]) => {
      const w: ValidWrite = { writeId: '', kind: 'replace', uri, content, account: ACCOUNT, workspace: 'default', subject: '', tags: [], validFrom: null, validTo: null };
      return applier.apply(w);
    });
    const seedS = (performance.now() - t0) / 1000;
    const stats = await mesh.index.stats(ACCOUNT);

    t0 = performance.now();
    const sample = Array.from({ length: HTTP_SAMPLE }, (_, i) => document(NODES + i));
    await pool(sample, 8, ([uri, content]) => post(mesh.gatewayUrl, '/api/v1/content/write', { uri, content, mode: 'replace', wait: true }));
    const httpS = (performance.now() - t0) / 1000;

    // Queries a user could type about stored content: five consecutive words of a random
    // node, plus the CJK phrases.
    const queries = [
      ...Array.from({ length: 30 }, () => {
        const words = pick(docs)[1].replace(/[#<>!{}":\n-]+/g, ' ').split(/\s+/).filter(Boolean);
        const at = Math.floor(rand() * Math.max(1, words.length - 5));
        return words.slice(at, at + 5).join(' ');
      }),
      ...CJK,
    ];
    const profiles: Array<[string, Record<string, unknown>]> = [
      ['flat (defaults)', {}],
      ['bucketed (purpose coding)', { purpose: 'coding' }],
      ['plugin profile (purpose coding, score_threshold 0.35, max_tokens 1600)', { purpose: 'coding', score_threshold: 0.35, max_tokens: 1600 }],
    ];
    const lines: string[] = [];
    lines.push(`corpus: ${NODES} nodes seeded through the indexer's Applier in ${seedS.toFixed(1)} s (${(NODES / seedS).toFixed(0)} nodes/s); index: ${JSON.stringify(stats)}`);
    lines.push(`HTTP write path: ${HTTP_SAMPLE} writes with wait:true (concurrency 8) in ${httpS.toFixed(1)} s (${(HTTP_SAMPLE / httpS).toFixed(0)} writes/s)`);
    for (const [name, extra] of profiles) {
      for (let i = 0; i < WARMUP; i++) await post(mesh.gatewayUrl, '/api/v1/search/search', { mode: 'context', query: queries[i % queries.length], time_budget_ms: 60000, ...extra });
      const wall: number[] = [];
      const stages = new Map<string, number[]>();
      const shares = new Map<string, number[]>();
      const returned: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const started = performance.now();
        const res = await post(mesh.gatewayUrl, '/api/v1/search/search', { mode: 'context', query: queries[i % queries.length], time_budget_ms: 60000, ...extra });
        const ms = performance.now() - started;
        wall.push(ms);
        returned.push(res.result.stats.returned);
        const stageMs = res.result.stats.stage_ms as Record<string, number>;
        let inStages = 0;
        for (const [stage, v] of Object.entries(stageMs)) {
          inStages += v;
          (stages.get(stage) ?? stages.set(stage, []).get(stage)!).push(v);
          (shares.get(stage) ?? shares.set(stage, []).get(stage)!).push(v / ms);
        }
        const other = Math.max(0, ms - inStages);
        (stages.get('(outside stages)') ?? stages.set('(outside stages)', []).get('(outside stages)')!).push(other);
        (shares.get('(outside stages)') ?? shares.set('(outside stages)', []).get('(outside stages)')!).push(other / ms);
      }
      lines.push('');
      lines.push(`${name}: ${RUNS} requests, p50 ${quantile(wall, 0.5).toFixed(1)} ms, p90 ${quantile(wall, 0.9).toFixed(1)} ms, mean ${(wall.reduce((a, b) => a + b, 0) / wall.length).toFixed(1)} ms, median entries ${quantile(returned, 0.5)}`);
      lines.push('| stage | median ms | median share of wall time |');
      lines.push('|---|---:|---:|');
      for (const [stage, xs] of stages) lines.push(`| ${stage} | ${quantile(xs, 0.5).toFixed(2)} | ${(100 * quantile(shares.get(stage)!, 0.5)).toFixed(1)} % |`);
    }
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await mesh.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
