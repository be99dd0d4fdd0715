import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '../../../apps/ctxmesh/src/mesh';

let mesh: Mesh;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ctxc-'));
  mesh = await startMesh({ env: { CTXMESH_DATA_DIR: dir, GATEWAY_PORT: '0' }, log: silentLogger() });
}, 60000);
afterAll(async () => { await mesh?.stop(); rmSync(dir, { recursive: true, force: true }); });

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(mesh.gatewayUrl + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() as any, headers: r.headers };
}

describe('scratch', () => {
  it('runs', async () => {
    const h = { 'X-OpenViking-Account': 'a1' };
    const t0 = Date.now();
    console.log(JSON.stringify(await post('/api/v1/content/write', { uri: 'viking://user/default/memories/events/2026/07/14/launch.md', content: '# Summary\nShipped the stdio MCP proxy.\n\n# 2026-07-14 ChatLog:\nchatter chatter chatter\n<!-- MEMORY_FIELDS {"a":1} -->', wait: true }, h)));
    console.log(Date.now() - t0);
    await post('/api/v1/content/write', { uri: 'viking://user/default/memories/entities/openviking.md', content: 'OpenViking: context database for AI agents.', wait: true }, h);
    await post('/api/v1/content/write', { uri: 'viking://user/default/memories/preferences/style.md', content: 'Prefers TypeScript strict mode & <no> any.', wait: true }, h);
    await post('/api/v1/content/write', { uri: 'viking://resources/docs/api.md', content: 'HTTP API reference for search endpoints.', wait: true }, h);
    const r = await post('/api/v1/search/search', { query: 'what shipped', mode: 'context' }, h);
    console.log(JSON.stringify(r.body, null, 1));
    const r2 = await post('/api/v1/search/search', { query: 'what shipped', mode: 'context', time_budget_ms: 60000, tokenizer: 'o200k_base' }, h);
    console.log(JSON.stringify(r2.body.result.stats));
  }, 60000);
});
