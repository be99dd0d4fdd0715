/**
 * The fault suite (issue 12): writes accepted and later lost, requests that freeze the mesh,
 * outages that were slow instead of fast, and isolation between callers — each case a
 * regression test of a defect the fault-and-abuse pass found.
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
