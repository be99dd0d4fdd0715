/**
 * Deadline propagation through the real gateway and orchestrator: a request whose budget
 * (X-Request-Timeout-Ms) expires while hop 2 (orchestrator → gather) is working ends as
 * DEADLINE_EXCEEDED at the gateway (HTTP 504), and the downstream work is cancelled — gather
 * here is a stand-in that never answers on its own and records what its budget did.
 */
import { gather } from '@ctxmesh/proto';
import { implement, closeHealthClients, type Handler } from '@ctxmesh/rpc';
import { silentLogger } from '@ctxmesh/runtime';
import { InProcEventBus } from '@ctxmesh/stores';
import { startTestServer, eventually, type TestServer } from '@ctxmesh/testing';
import { startGateway, type RunningGateway } from '@ctxmesh/gateway';
import { startOrchestrator } from '@ctxmesh/orchestrator';
import type { RunningServer } from '@ctxmesh/rpc';

// Long enough that a cold first connection on a loaded CI host still reaches hop 2 inside it
// (400 ms did not: the budget ran out in the gateway and hop 2 never saw the request).
const BUDGET_MS = 2000;

interface Seen {
  remainingMs?: number;
  cancelled?: boolean;
  at?: number;
}
const seen: Seen = {};

const hang: Handler<unknown, never> = async (_req, ctx) => {
  seen.remainingMs = ctx.budget.remainingMs();
  await new Promise<void>((resolve) => ctx.budget.signal.addEventListener('abort', () => resolve(), { once: true }));
  seen.cancelled = true;
  seen.at = Date.now();
  throw ctx.budget.signal.reason;
};

let stub: TestServer;
let orchestrator: RunningServer;
let gateway: RunningGateway;
let bus: InProcEventBus;

beforeAll(async () => {
  const log = silentLogger();
  stub = await startTestServer([
    {
      name: 'ctxmesh.gather.v1.GatherService',
      definition: gather.GatherServiceService,
      implementation: implement<gather.GatherServiceServer>(gather.GatherServiceService, { find: hang as never, gatherCandidates: hang as never }, { domain: 'gather', log }),
    },
  ]);
  const nowhere = '127.0.0.1:9';
  orchestrator = await startOrchestrator({
    port: 0,
    log,
    addrs: { gather: stub.address, tierReader: nowhere, budgetRender: nowhere, ledger: nowhere, rewrite: nowhere, sessions: nowhere },
    settings: { enableIntent: false, modelConfigured: false, expansionTimeoutMs: 5000, rewriteTimeoutMs: 30_000, renderReserveMs: 5, expansionMessages: 20 },
  });
  bus = new InProcEventBus({ subjects: ['ctxmesh.ingest.>'] });
  gateway = await startGateway({ port: 0, log, orchestratorAddr: orchestrator.address, sessionsAddr: nowhere, bus });
});

afterAll(async () => {
  await gateway.stop();
  await orchestrator.shutdown();
  await stub.close();
  await bus.close();
  closeHealthClients();
});

beforeEach(() => {
  for (const k of Object.keys(seen)) delete seen[k as keyof Seen];
});

describe('deadline propagation through the mesh', () => {
  it.each([
    ['/api/v1/search/find', { query: 'anything' }],
    ['/api/v1/search/search', { query: 'anything', mode: 'context' }],
  ])('POST %s - budget expires at hop 2 - 504 DEADLINE_EXCEEDED and the downstream call is cancelled', async (path, body) => {
    const started = Date.now();
    const res = await fetch(`${gateway.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-timeout-ms': String(BUDGET_MS) },
      body: JSON.stringify(body),
    });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    const json = (await res.json()) as { status: string; error: { code: string } };
    expect(json.status).toBe('error');
    expect(json.error.code).toBe('DEADLINE_EXCEEDED');
    // Hop 2 received the caller's budget, not a fresh default …
    expect(seen.remainingMs).toBeDefined();
    expect(seen.remainingMs!).toBeLessThanOrEqual(BUDGET_MS);
    // … and its work was cancelled instead of running on.
    await eventually(() => seen.cancelled === true, BUDGET_MS + 3000);
    expect(seen.at! - started).toBeLessThan(BUDGET_MS + 3000);
    expect(elapsed).toBeLessThan(BUDGET_MS + 3000);
  });
});
