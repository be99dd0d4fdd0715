/**
 * Traces across the hops (issue 14 item 7): the mesh as `npm start` runs it (the built CLI, a
 * child process, so OpenTelemetry instruments grpc-js and http as it loads them), with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at an OTLP/HTTP receiver started here on a free port.
 * One context request must come back as one trace whose spans cover gateway → orchestrator →
 * gather → tier-reader → budget-render, each server span the child of its caller's client span.
 *
 * Runs `apps/ctxmesh/dist/bin.js`: `npm test` builds it first (tsc --build).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '@ctxmesh/testing';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'apps/ctxmesh/dist/bin.js');

/** One span as OTLP/JSON carries it (the fields used here). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 2 server, 3 client. */
  kind: number;
  attributes?: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
}

const SERVER = 2;
const CLIENT = 3;

let receiver: Server;
let endpoint: string;
const spans: OtlpSpan[] = [];
const contentTypes = new Set<string>();
let child: ChildProcess;
let gateway: string;
let dataDir: string;
let stdout = '';

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build (npm test does)`);
  // The OTLP/HTTP receiver: POST /v1/traces with JSON (exporter-trace-otlp-http's encoding).
  receiver = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      contentTypes.add(String(req.headers['content-type']));
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const msg = JSON.parse(body) as { resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: OtlpSpan[] }> }> };
        for (const rs of msg.resourceSpans ?? []) for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } else res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-traces-'));
  child = spawn(process.execPath, [BIN, 'start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      GATEWAY_PORT: '0',
      CTXMESH_DATA_DIR: dataDir,
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
      OTEL_BSP_SCHEDULE_DELAY: '100',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  await eventually(() => /ctxmesh listening on (http:\/\/\S+)/.test(stdout), 30_000);
  gateway = /ctxmesh listening on (http:\/\/\S+)/.exec(stdout)![1];
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await new Promise((r) => receiver?.close(r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
  const res = await fetch(gateway + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as { status: string; result: Record<string, unknown> } };
};

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? String(v.intValue) : undefined);
};

describe('traces across the hops', () => {
  it('one context request through the mesh - one trace, gateway → orchestrator → gather → tier-reader → budget-render, correct parents', async () => {
    const write = await post('/api/v1/content/write', {
      uri: 'viking://resources/docs/deploy.md',
      content: '# Deploy\n\nWe deploy the gateway with blue/green releases.\n\n## Rollback\n\nSwitch traffic back to the previous colour.',
      wait: true,
    });
    expect(write.status).toBe(200);
    // compat reads every candidate's tiers, so each hop runs (evidence skips the tier read when
    // the stored abstracts and overviews are all it needs).
    const ctx = await post('/api/v1/search/search', { query: 'how do we roll back a deploy', mode: 'context', max_tokens: 400, packing: 'compat' }, { 'x-request-id': 'trace-e2e-1' });
    expect(ctx.status).toBe(200);
    expect((ctx.json.result.entries as unknown[]).length).toBeGreaterThan(0);

    // The HTTP server span of that request is the root of its trace.
    const isRoot = (s: OtlpSpan) => s.kind === SERVER && !s.parentSpanId && (attr(s, 'http.target') ?? attr(s, 'url.path') ?? '').startsWith('/api/v1/search/search');
    await eventually(() => spans.some(isRoot), 15_000);
    const root = spans.find(isRoot)!;
    const serverOf = (method: string) => (s: OtlpSpan) => s.traceId === root.traceId && s.kind === SERVER && s.name.endsWith(method);
    const hops = ['OrchestratorService/AssembleContext', 'GatherService/GatherCandidates', 'TierReaderService/ReadTiers', 'BudgetRenderService/PlanRender'];
    await eventually(() => hops.every((h) => spans.some(serverOf(h))), 15_000);

    const trace = spans.filter((s) => s.traceId === root.traceId);
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const parentOf = (s: OtlpSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    /** The server span of `method` and the client span that called it, which must be its parent. */
    const hop = (method: string) => {
      const server = trace.filter(serverOf(method));
      expect([method, server.length]).toEqual([method, 1]);
      const client = parentOf(server[0]);
      expect([method, client?.kind, client?.name]).toEqual([method, CLIENT, server[0].name]);
      return { server: server[0], client: client! };
    };
    /** True when `ancestor` is on the parent chain of `s`. */
    const under = (s: OtlpSpan, ancestor: OtlpSpan) => {
      for (let p = parentOf(s); p; p = parentOf(p)) if (p.spanId === ancestor.spanId) return true;
      return false;
    };

    const orchestrator = hop('OrchestratorService/AssembleContext');
    expect(under(orchestrator.client, root)).toBe(true);
    for (const method of hops.slice(1)) {
      const h = hop(method);
      // Called by the orchestrator's handler: its client span hangs under the orchestrator's server span.
      expect([method, under(h.client, orchestrator.server)]).toEqual([method, true]);
    }
    // One trace: no span of these hops was exported under another trace id for this request.
    const elsewhere = spans.filter((s) => s.traceId !== root.traceId && s.kind === SERVER && hops.some((h) => s.name.endsWith(h)));
    expect(elsewhere).toEqual([]);
    expect([...contentTypes].every((t) => t.startsWith('application/json'))).toBe(true);
  }, 60_000);
});
