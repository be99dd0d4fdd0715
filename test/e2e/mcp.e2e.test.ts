/**
 * The MCP endpoint through the whole mesh (context-contract §1.5): the MCP SDK's own client
 * over streamable HTTP lists the tools, gets a context block from `search` (mode context),
 * drills down with `read`, and gets the §1.5 errors — behind the same API-key auth as REST.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parseCompactBlock } from '@ctxmesh/kernel';
import { silentLogger } from '@ctxmesh/runtime';
import { startMesh, type Mesh } from '../../apps/ctxmesh/src/mesh';

const KEY = 'key-mcp-5c1e';
const ROOT = 'viking://user/ana';
const SEED: Record<string, string> = {
  'viking://~/memories/events/2026-07-14-deploy.md': '# Summary\nWe deploy: deployed the billing service (blue/green deploy).\n\n# 2026-07-14 ChatLog:\nuser: deploy billing\nassistant: deploy done',
  'viking://~/memories/preferences/deploys.md': 'Prefers small deploys: deploy one service at a time.',
  'viking://~/memories/entities/payroll.md': 'Payroll runs on the first Monday of each month.',
  'viking://resources/docs/deploy-runbook.md': '# Deploy runbook\n\nHow we deploy: build, push the image, switch traffic from blue to green, watch the error rate.',
};
const EVENT = `${ROOT}/memories/events/2026-07-14-deploy.md`;

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}
const textOf = (r: unknown) => (r as ToolResult).content.map((c) => c.text ?? '').join('');

let mesh: Mesh;
let dataDir: string;
let client: Client;

async function connect(headers: Record<string, string>): Promise<Client> {
  const c = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${mesh.gatewayUrl}/mcp`), { requestInit: { headers } }));
  return c;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-mcp-'));
  mesh = await startMesh({
    env: { CTXMESH_DATA_DIR: dataDir, GATEWAY_PORT: '0', CTXMESH_AUTH_MODE: 'api_key', CTXMESH_API_KEYS: `${KEY}=acme:ana` },
    log: silentLogger(),
  });
  for (const [uri, content] of Object.entries(SEED)) {
    const res = await fetch(`${mesh.gatewayUrl}/api/v1/content/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ uri, content, mode: 'replace', wait: true }),
    });
    if (res.status !== 200) throw new Error(`seeding ${uri}: ${res.status} ${await res.text()}`);
  }
  client = await connect({ Authorization: `Bearer ${KEY}`, 'X-OpenViking-Actor-Peer': 'mcp-workspace' });
}, 120_000);

afterAll(async () => {
  await client?.close();
  await mesh?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('MCP over the mesh', () => {
  it('lists the search and read tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read', 'search']);
    expect(tools.map((t) => t.name)).not.toContain('recall');
  });

  it('search mode context returns the rendered block, every cited URI readable with read', async () => {
    const res = await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', mode: 'context', purpose: 'coding' } });
    expect((res as ToolResult).isError).toBeFalsy();
    const block = textOf(res);
    // Read by the block's grammar (context-contract §10.6): full URIs, a group's base joined.
    const cited = parseCompactBlock(block).entries.map((e) => e.uri);
    expect(cited).toContain(EVENT);
    expect(cited).toContain('viking://resources/docs/deploy-runbook.md');
    expect(block).toContain('We deploy: deployed the billing service');

    // Drill down: the event was served at a shallower tier or in full; read always gives the body.
    const read = await client.callTool({ name: 'read', arguments: { uri: EVENT } });
    expect((read as ToolResult).isError).toBeFalsy();
    expect(textOf(read)).toBe(SEED['viking://~/memories/events/2026-07-14-deploy.md']);
    const home = await client.callTool({ name: 'read', arguments: { uri: 'viking://~/memories/preferences/deploys.md' } });
    expect(textOf(home)).toBe(SEED['viking://~/memories/preferences/deploys.md']);
  });

  it('search rewrite "auto" always attempts a digest (here the extractive one), unlike HTTP "auto" without a model', async () => {
    const mcp = textOf(await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', mode: 'context', rewrite: 'auto', rewrite_max_bullets: 2 } }));
    const lines = mcp.split('\n');
    expect(lines[0]).toBe('OpenViking memory digest:');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.length).toBeLessThanOrEqual(3);
    for (const l of lines.slice(1)) expect(l).toMatch(/^- .+ source: viking:\/\/\S+$/);

    const http = await fetch(`${mesh.gatewayUrl}/api/v1/search/search`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY },
      body: JSON.stringify({ query: 'what did we deploy?', mode: 'context', rewrite: 'auto' }),
    });
    const body = (await http.json()) as { result: { digest: string; rendered: string; stats: { rewrite: string } } };
    expect(body.result.stats.rewrite).toBe('off');
    expect(body.result.digest).toBe('');
    expect(body.result.rendered).not.toBe('');
  });

  it('search list mode applies the 0.35 default threshold and expands viking://~', async () => {
    const text = textOf(await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', target_uri: 'viking://~/memories' } }));
    expect(text.startsWith('memories:\n')).toBe(true);
    expect(text).toContain(`- ${EVENT} (memory, level 2, score `);
    expect(text).not.toContain('payroll');
    for (const m of text.matchAll(/score (\d\.\d\d)\)/g)) expect(Number(m[1])).toBeGreaterThanOrEqual(0.35);
    const all = textOf(await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', target_uri: 'viking://~/memories', min_score: 0 } }));
    expect(all).toContain(`${ROOT}/memories/entities/payroll.md`);
  });

  it('drops unknown quota and detail_by_category keys silently', async () => {
    const res = await client.callTool({
      name: 'search',
      // compat: its pins label the tier exactly as §4.3 writes it (evidence may serve the same text as the abstract).
      arguments: { query: 'what did we deploy?', mode: 'context', packing: 'compat', quotas: { events: 2, resources: 1, gossip: 3 }, detail_by_category: { events: 'full', gossip: 'full' } },
    });
    expect((res as ToolResult).isError).toBeFalsy();
    expect(textOf(res)).toContain(`<memory uri="${EVENT}" type="events" score=`);
    expect(textOf(res)).toMatch(new RegExp(`<memory uri="${EVENT}" type="events" score="\\d\\.\\d\\d" detail="full">`));
  });

  it.each([
    [{ target_uri: 'viking://~/memories' }, "target_uri is not supported in mode='context'"],
    [{ detail: 'abstract', detail_by_category: { events: 'full' } }, "detail cannot be combined with detail_by_category in mode='context'"],
    [{ other_peer_penalty: 0.2, other_peer_penalties: { events: 0.5 } }, "other_peer_penalty cannot be combined with other_peer_penalties in mode='context'"],
  ])('search mode context with %j is a tool error', async (extra, message) => {
    const res = await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', mode: 'context', ...extra } });
    expect((res as ToolResult).isError).toBe(true);
    expect(textOf(res)).toBe(message);
  });

  it('says so when nothing matches', async () => {
    const res = await client.callTool({ name: 'search', arguments: { query: 'what did we deploy?', mode: 'context', min_score: 0.999 } });
    expect((res as ToolResult).isError).toBeFalsy();
    expect(textOf(res)).toBe('No matching context found.');
  });

  it('read of an unknown URI is a tool error', async () => {
    const res = await client.callTool({ name: 'read', arguments: { uri: 'viking://~/memories/events/never-written.md' } });
    expect((res as ToolResult).isError).toBe(true);
    expect(textOf(res)).toContain('viking://user/ana/memories/events/never-written.md');
  });

  it('refuses a client without a key before MCP runs (401 UNAUTHENTICATED), and accepts X-API-Key', async () => {
    await expect(connect({})).rejects.toThrow(/UNAUTHENTICATED/);
    const raw = await fetch(`${mesh.gatewayUrl}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toMatchObject({ status: 'error', error: { code: 'UNAUTHENTICATED' } });
    const other = await connect({ 'X-API-Key': KEY });
    try {
      expect((await other.listTools()).tools).toHaveLength(2);
    } finally {
      await other.close();
    }
  });
});
