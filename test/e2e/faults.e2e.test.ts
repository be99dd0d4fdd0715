/**
 * The fault suite (issue 12): writes accepted and later lost, requests that freeze the mesh,
 * outages that were slow instead of fast, and isolation between callers — each case a
 * regression test of a defect the fault-and-abuse pass found.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callGateway, fetchDeadLetters, startMesh, type Mesh } from '@ctxmesh/ctxmesh';
import { silentLogger } from '@ctxmesh/runtime';
import { eventually } from '@ctxmesh/testing';

const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'ctxmesh-faults-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function raw(url: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(new URL(path, url), {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, text };
}

describe('a write accepted and then failed is visible (item 1)', () => {
  let mesh: Mesh;
  beforeAll(async () => {
    // Every embedding call fails (nothing listens on port 1): the indexer retries each write,
    // then dead-letters it.
    mesh = await startMesh({
      env: {
        CTXMESH_DATA_DIR: dataDir(),
        GATEWAY_PORT: '0',
        CTXMESH_EMBEDDINGS_URL: 'http://127.0.0.1:1/v1',
        CTXMESH_EMBEDDINGS_MODEL: 'none',
        CTXMESH_EMBEDDINGS_DIM: '8',
        INDEXER_MAX_DELIVER: '2',
        INDEXER_RETRY_DELAY_MS: '10',
      },
      log: silentLogger(),
    });
  }, 60_000);
  afterAll(async () => mesh?.stop());

  it('a wait:false write answers queued with a receipt; its status turns failed; /metrics and the CLI show the dead letter', async () => {
    const url = mesh.gatewayUrl;
    const w = await raw(url, 'POST', '/api/v1/content/write', { uri: 'viking://resources/lost.md', content: '# Lost\n\nnever indexed' });
    expect(w.status).toBe(200);
    expect(w.json.result).toMatchObject({ uri: 'viking://resources/lost.md', status: 'queued' });
    const id = w.json.result.write_id as string;
    const first = await raw(url, 'GET', `/api/v1/content/status?write_id=${id}`);
    expect(first.status).toBe(200);
    expect(['queued', 'failed']).toContain(first.json.result.status);
    const settled = await eventually(async () => {
      const s = await raw(url, 'GET', `/api/v1/content/status?write_id=${id}`);
      if (s.json.result?.status !== 'failed') throw new Error(`still ${s.json.result?.status}`);
      return s.json.result;
    }, 20_000);
    expect(settled).toMatchObject({ write_id: id, uri: 'viking://resources/lost.md', status: 'failed', reason: 'UNAVAILABLE' });
    expect(settled.message).toMatch(/embed|fetch|ECONNREFUSED|connect/i);

    const metrics = await raw(url, 'GET', '/metrics');
    expect(metrics.text).toMatch(/^ctxmesh_ingest_dead_letters 1$/m);
    const rows = await fetchDeadLetters({ url });
    expect(rows).toEqual([expect.objectContaining({ write_id: id, uri: 'viking://resources/lost.md', account: 'default', mode: 'WRITE_MODE_REPLACE', attempts: 2 })]);
  }, 60_000);

  it('answers 404 for an unknown write id and 400 without one', async () => {
    const url = mesh.gatewayUrl;
    expect((await raw(url, 'GET', '/api/v1/content/status?write_id=nope')).status).toBe(404);
    const missing = await raw(url, 'GET', '/api/v1/content/status');
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.json)).toContain('write_id');
  });

  it('keeps another account\'s receipts and dead letters from a caller', async () => {
    const url = mesh.gatewayUrl;
    const w = await raw(url, 'POST', '/api/v1/content/write', { uri: 'viking://resources/a.md', content: 'a' }, { 'x-openviking-account': 'acme' });
    const id = w.json.result.write_id as string;
    expect((await raw(url, 'GET', `/api/v1/content/status?write_id=${id}`, undefined, { 'x-openviking-account': 'acme' })).status).toBe(200);
    expect((await raw(url, 'GET', `/api/v1/content/status?write_id=${id}`, undefined, { 'x-openviking-account': 'other' })).status).toBe(404);
    await callGateway(
      { url },
      'GET',
      `/api/v1/content/status?write_id=${id}`,
    ).then(
      () => {
        throw new Error('the default account read acme\'s receipt');
      },
      (err: { status: number }) => expect(err.status).toBe(404),
    );
  });
});

/** A free TCP port on 127.0.0.1. */
async function freePort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A private server process this suite starts and stops by PID (never the shared ones). */
class PrivateServer {
  private child: ChildProcess | null = null;
  constructor(
    readonly bin: string,
    readonly args: string[],
  ) {}

  async start(ready: () => Promise<boolean>): Promise<void> {
    const child = spawn(this.bin, this.args, { stdio: 'ignore' });
    this.child = child;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`${this.bin} exited with ${child.exitCode}`);
      if (!(await ready())) throw new Error(`${this.bin} not ready`);
      return true;
    }, 15_000, 50);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid!, 'SIGTERM');
    await exited;
  }
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

describe('Redis stopped under context traffic (item 8)', () => {
  let mesh: Mesh;
  let redis: PrivateServer;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    redis = new PrivateServer('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dataDir()]);
    await redis.start(() => tcpOpen(port));
    mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir(), GATEWAY_PORT: '0', REDIS_URL: `redis://127.0.0.1:${port}` }, log: silentLogger() });
    await raw(mesh.gatewayUrl, 'POST', '/api/v1/content/write', { uri: 'viking://resources/deploy.md', content: '# Deploy\n\nBlue/green releases.', wait: true });
  }, 60_000);
  afterAll(async () => {
    await mesh?.stop();
    await redis?.stop();
  });

  const context = (url: string) => raw(url, 'POST', '/api/v1/search/search', { query: 'deploy', mode: 'context', session_id: 'cc-1', dedup_turns: 3 });

  it('answers fast with dedup "unavailable", /ready false, session appends 503 UNAVAILABLE; then recovers on its own', async () => {
    const url = mesh.gatewayUrl;
    const before = await context(url);
    expect(before.status).toBe(200);
    expect(before.json.result.stats.dedup.status).toMatch(/^(new|ok)$/);
    expect((await raw(url, 'GET', '/ready')).status).toBe(200);

    await redis.stop();
    // Each request used to wait ~1 s for the client's offline queue: five took ≥ 5 s.
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      const r = await context(url);
      expect(r.status).toBe(200);
      expect(r.json.result.stats.dedup.status).toBe('unavailable');
    }
    expect(Date.now() - started).toBeLessThan(4000);

    const append = await raw(url, 'POST', '/api/v1/sessions/s-down/messages', { role: 'user', content: 'hello' });
    expect(append.status).toBe(503);
    expect(append.json.error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'STORE_UNAVAILABLE' } });
    await eventually(async () => {
      const r = await raw(url, 'GET', '/ready');
      if (r.status !== 503 || r.json.checks.sessions !== false) throw new Error(`ready ${r.status}`);
      return true;
    }, 10_000, 100);
    // The replicas' own probe (Kubernetes readiness) does not follow a store every replica shares.
    expect((await raw(url, 'GET', '/ready?checks=orchestrator')).status).toBe(200);

    await redis.start(() => tcpOpen(port));
    await eventually(async () => {
      const r = await context(url);
      if (!/^(new|ok)$/.test(r.json.result?.stats?.dedup?.status)) throw new Error(`dedup ${r.json.result?.stats?.dedup?.status}`);
      return true;
    }, 20_000, 200);
    await eventually(async () => (await raw(url, 'GET', '/ready')).status === 200, 10_000, 100);
    expect((await raw(url, 'POST', '/api/v1/sessions/s-down/messages', { role: 'user', content: 'hello again' })).status).toBe(200);
  }, 90_000);
});

describe('NATS stopped (item 8)', () => {
  let mesh: Mesh;
  let nats: PrivateServer;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    nats = new PrivateServer('nats-server', ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dataDir()]);
    await nats.start(() => tcpOpen(port));
    mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir(), GATEWAY_PORT: '0', NATS_URL: `nats://127.0.0.1:${port}` }, log: silentLogger() });
  }, 60_000);
  afterAll(async () => {
    // Back up first, so the mesh's connection drains instead of reconnecting forever.
    await nats?.start(() => tcpOpen(port));
    await mesh?.stop();
    await nats?.stop();
  }, 30_000);

  it('content/write answers a fast 503 BUS_UNAVAILABLE instead of spending its budget', async () => {
    const url = mesh.gatewayUrl;
    const ok = await raw(url, 'POST', '/api/v1/content/write', { uri: 'viking://resources/n.md', content: 'up', wait: true });
    expect(ok.status).toBe(200);
    await nats.stop();
    await eventually(async () => (await raw(url, 'GET', '/ready')).status === 503, 10_000, 100);
    const started = Date.now();
    const down = await raw(url, 'POST', '/api/v1/content/write', { uri: 'viking://resources/n.md', content: 'down' }, { 'x-request-timeout-ms': '30000' });
    expect(down.status).toBe(503);
    expect(down.json.error).toMatchObject({ code: 'UNAVAILABLE', details: { reason: 'BUS_UNAVAILABLE' } });
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 60_000);
});

describe('an exact tokenizer on the largest accepted document (item 2)', () => {
  let mesh: Mesh;
  beforeAll(async () => {
    mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dataDir(), GATEWAY_PORT: '0' }, log: silentLogger() });
  }, 60_000);
  afterAll(async () => mesh?.stop());

  it('context mode and retrieve with o200k_base finish in bounded time, budgets hold, and /health keeps answering', async () => {
    const url = mesh.gatewayUrl;
    // 4 MiB of UTF-8 (the largest document a write may carry): Chinese prose without
    // punctuation, one pre-token piece per line for the exact tokenizer.
    const line = '我们使用蓝绿发布部署网关在出现问题时切换流量回滚'.repeat(400);
    const lines: string[] = [];
    let bytes = 0;
    while (bytes + Buffer.byteLength(line) + 1 <= 4 * 1024 * 1024 - 64) {
      lines.push(line);
      bytes += Buffer.byteLength(line) + 1;
    }
    const content = `# 回滚\n\n${lines.join('\n')}`;
    const w = await raw(url, 'POST', '/api/v1/content/write', { uri: 'viking://resources/zh/huge.md', content, wait: true }, { 'x-request-timeout-ms': '120000' });
    expect(w.status).toBe(200);

    const health: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const t = Date.now();
        await raw(url, 'GET', '/health');
        health.push(Date.now() - t);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    try {
      const ctx = await raw(url, 'POST', '/api/v1/search/search', { query: '回滚 发布', mode: 'context', detail: 'full', max_tokens: 32000, tokenizer: 'o200k_base' }, { 'x-request-timeout-ms': '60000' });
      expect(ctx.status).toBe(200);
      expect(ctx.json.result.stats.used_tokens).toBeLessThanOrEqual(32000);
      const ret = await raw(url, 'POST', '/api/v1/retrieve', { query: '回滚 发布', top_k: 20, token_budget: 8000, tokenizer: 'o200k_base' }, { 'x-request-timeout-ms': '60000' });
      expect(ret.status).toBe(200);
    } finally {
      polling = false;
      await poller;
    }
    // The counting runs in a worker: the event loop answers /health throughout. The bound only
    // catches a loop held for a real stretch (the quadratic counter held it for minutes).
    health.sort((a, b) => a - b);
    expect(health.length).toBeGreaterThan(0);
    expect(health[Math.floor(health.length / 2)]!).toBeLessThan(100);
    expect(health.at(-1)!).toBeLessThan(2000);
  }, 180_000);
});

describe('isolation between callers of one account and across accounts (items 5, 6)', () => {
  let mesh: Mesh;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  beforeAll(async () => {
    mesh = await startMesh({
      env: {
        CTXMESH_DATA_DIR: dataDir(),
        GATEWAY_PORT: '0',
        CTXMESH_AUTH_MODE: 'api_key',
        CTXMESH_API_KEYS: 'k-alice=acme:alice,k-bob=acme:bob,k-admin=acme:carol:admin,k-eve=globex:eve',
        RETRIEVAL_TRACE_ENABLED: 'true',
      },
      log: silentLogger(),
    });
    await raw(mesh.gatewayUrl, 'POST', '/api/v1/content/write', { uri: 'viking://user/alice/memories/events/secret.md', content: 'Alice plans the merger on Friday.', wait: true }, as('k-alice'));
  }, 60_000);
  afterAll(async () => mesh?.stop());

  it("a trace is read by its caller and the account's admins only", async () => {
    const url = mesh.gatewayUrl;
    const r = await raw(url, 'POST', '/api/v1/retrieve', { query: 'merger', top_k: 5 }, as('k-alice'));
    expect(r.status).toBe(200);
    const id = r.json.result.trace_id as string;
    expect(id).toMatch(/^tr_/);
    expect((await raw(url, 'GET', `/api/v1/traces/${id}`, undefined, as('k-alice'))).status).toBe(200);
    expect((await raw(url, 'GET', `/api/v1/traces/${id}`, undefined, as('k-admin'))).status).toBe(200);
    const bob = await raw(url, 'GET', `/api/v1/traces/${id}`, undefined, as('k-bob'));
    expect(bob.status).toBe(404);
    expect(bob.text).not.toContain('merger');
    expect((await raw(url, 'GET', `/api/v1/traces/${id}`, undefined, as('k-eve'))).status).toBe(404);
  });

  it('workspace names belong to their account: another account neither learns one exists nor is kept from its own', async () => {
    const url = mesh.gatewayUrl;
    expect((await raw(url, 'POST', '/api/v1/workspaces', { workspace: 'research' }, as('k-alice'))).json.result).toEqual({ workspace: 'research', created: true });
    const eve = await raw(url, 'POST', '/api/v1/workspaces', { workspace: 'research' }, as('k-eve'));
    expect(eve.status).toBe(200);
    expect(eve.json.result).toEqual({ workspace: 'research', created: true });
    expect((await raw(url, 'PUT', '/api/v1/workspaces/active', { workspace: 'research' }, as('k-bob'))).status).toBe(200);
    expect((await raw(url, 'PUT', '/api/v1/workspaces/active', { workspace: 'elsewhere' }, as('k-eve'))).status).toBe(404);
  });
});
