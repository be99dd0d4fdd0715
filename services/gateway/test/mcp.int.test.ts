/**
 * `/mcp` over real HTTP with the MCP SDK's own client, against real gRPC fakes of the
 * orchestrator (context-contract §1.5): tool listing, the context-mode mapping, list mode,
 * the three context-mode errors, `read`, and the REST auth in front of it.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { detailToWire } from '@ctxmesh/kernel';
import { common, type orchestrator } from '@ctxmesh/proto';
import { contextStats } from '../src/mapping/__tests__/context-stats';
import { Code, CtxError } from '@ctxmesh/rpc';
import { EMPTY_SEARCH, harness, type Harness } from './fakes';

const RENDERED = '<memory uri="viking://user/default/memories/events/a.md" type="events" score="0.71" detail="full">\nShipped v2.\n</memory>';
const DIGEST = 'OpenViking memory digest:\n- Shipped v2. source: viking://user/default/memories/events/a.md';

function answer(over: Partial<orchestrator.AssembleContextResponse> = {}): orchestrator.AssembleContextResponse {
  return {
    entries: [{ uri: 'viking://user/default/memories/events/a.md', category: 'events', score: 0.71, detail: 'full', text: 'Shipped v2.', origin: 'self' }],
    rendered: RENDERED,
    digest: '',
    stats: contextStats(),
    stages: [{ stage: 'gather', status: common.StageStatus.STAGE_STATUS_OK, durationMs: 1, reason: '' }],
    fates: [],
    explain: undefined,
    ...over,
  };
}

interface ToolText {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
}

const textOf = (r: unknown) => (r as ToolText).content.map((c) => c.text ?? '').join('');

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'ctxmesh-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

describe('/mcp (dev auth)', () => {
  let h: Harness;
  let url: string;
  let client: Client;
  beforeAll(async () => {
    h = await harness();
    url = await h.app.listen({ port: 0, host: '127.0.0.1' });
    client = await connect(url, { 'X-OpenViking-User': 'alice', 'X-OpenViking-Actor-Peer': 'ws-1' });
  });
  afterAll(async () => {
    await client.close();
    await h.close();
  });
  beforeEach(() => {
    h.orch.script = {};
    h.orch.search.length = 0;
    h.orch.assemble.length = 0;
    h.orch.read.length = 0;
  });

  it('POST /mcp tools/list - SDK client - search and read with their parameters', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read', 'search']);
    const search = tools.find((t) => t.name === 'search')!;
    expect(Object.keys(search.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['query', 'mode', 'target_uri', 'min_score', 'detail', 'detail_by_category', 'other_peer_penalty', 'other_peer_penalties', 'rewrite', 'rewrite_max_bullets']),
    );
    expect(search.inputSchema.required).toEqual(['query']);
    expect(tools.find((t) => t.name === 'read')!.inputSchema.required).toEqual(['uri']);
  });

  it('POST /mcp tools/call search - mode context - AssembleContext with the §1.5 mapping, rendered as text', async () => {
    h.orch.script.assembleContext = async () => answer();
    const res = await client.callTool({
      name: 'search',
      arguments: {
        query: 'what shipped',
        mode: 'context',
        min_score: 0.2,
        context_type: 'memory',
        quotas: { events: 2, bogus: 5 },
        detail_by_category: { events: 'full', nonsense: 'full', skills: 'everything' },
        other_peer_penalties: { events: 0.5, unknown: 1 },
        rewrite: 'auto',
        exclude_uris: ['viking://~/memories/events/old.md'],
        session_id: 'mcp-s1',
        dedup_turns: 3,
      },
    });
    expect((res as ToolText).isError).toBeFalsy();
    expect(textOf(res)).toBe(RENDERED);
    const got = h.orch.assemble[0].req;
    expect(got.identity).toMatchObject({ accountId: 'default', userId: 'alice', actorPeerId: 'ws-1' });
    expect(got).toMatchObject({
      query: 'what shipped',
      scoreThreshold: 0.2,
      filter: { node: { $case: 'must', value: { field: 'context_type', values: [{ kind: { $case: 'text', value: 'memory' } }] } } },
      bucketed: true,
      quotas: [{ name: 'events', count: 2 }],
      detail: detailToWire({ events: 'full' }),
      rewrite: 'on',
      excludeUris: ['viking://user/alice/memories/events/old.md'],
      sessionId: 'mcp-s1',
      dedupTurns: 3,
      maxTokens: 1600,
      queryExpansion: 'auto',
      peerScope: 'all',
      imageUrl: '',
    });
    expect(got.otherPeerPenalties.find((p) => p.name === 'events')?.value).toBe(0.5);
    expect(got.otherPeerPenalties.find((p) => p.name === 'entities')?.value).toBe(0.1);
  });

  it('POST /mcp tools/call search - context defaults - no threshold, flat, rewrite off', async () => {
    h.orch.script.assembleContext = async () => answer();
    await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context' } });
    const got = h.orch.assemble[0].req;
    expect(got.scoreThreshold).toBeUndefined();
    expect(got).toMatchObject({ bucketed: false, quotas: [], rewrite: 'off', detail: undefined, filter: undefined, limit: 10, dedupTurns: 0 });
  });

  it('POST /mcp tools/call search - packing - passed to AssembleContext ("" when absent: the server default); an unknown one is a tool error naming it', async () => {
    h.orch.script.assembleContext = async () => answer();
    await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context', packing: 'evidence' } });
    await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context' } });
    expect(h.orch.assemble.map((a) => a.req.packing)).toEqual(['evidence', '']);
    const bad = await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context', packing: 'greedy' } });
    expect((bad as ToolText).isError).toBe(true);
    expect(textOf(bad)).toContain('packing');
    expect(h.orch.assemble).toHaveLength(2);
  });

  it('POST /mcp tools/call search - digest present - the digest is the text', async () => {
    h.orch.script.assembleContext = async () => answer({ digest: DIGEST });
    expect(textOf(await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context', rewrite: 'auto' } }))).toBe(DIGEST);
  });

  it('POST /mcp tools/call search - nothing found - "No matching context found."', async () => {
    h.orch.script.assembleContext = async () => answer({ entries: [], rendered: '', digest: '  ' });
    const res = await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context' } });
    expect((res as ToolText).isError).toBeFalsy();
    expect(textOf(res)).toBe('No matching context found.');
  });

  it.each([
    [{ target_uri: 'viking://~/memories' }, "target_uri is not supported in mode='context'"],
    [{ detail: 'full', detail_by_category: { events: 'abstract' } }, "detail cannot be combined with detail_by_category in mode='context'"],
    [{ other_peer_penalty: 0.3, other_peer_penalties: { events: 0.2 } }, "other_peer_penalty cannot be combined with other_peer_penalties in mode='context'"],
  ])('POST /mcp tools/call search - context mode with %j - tool error, no AssembleContext', async (extra, message) => {
    const res = await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context', ...extra } });
    expect((res as ToolText).isError).toBe(true);
    expect(textOf(res)).toBe(message);
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('POST /mcp tools/call search - context mode with detail "auto" and an empty detail_by_category - accepted', async () => {
    h.orch.script.assembleContext = async () => answer();
    const res = await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context', detail: 'overview', detail_by_category: {} } });
    expect((res as ToolText).isError).toBeFalsy();
    expect(h.orch.assemble[0].req.detail).toEqual(detailToWire('overview'));
  });

  it('POST /mcp tools/call search - list mode - Search with the 0.35 default and ~ expanded, hits as text', async () => {
    h.orch.script.search = async () => ({
      ...EMPTY_SEARCH,
      memories: [{ contextType: 'memory', uri: 'viking://user/alice/memories/events/a.md', level: 2, score: 0.8123, abstract: 'Shipped v2.', tags: [] }],
      skills: [{ contextType: 'skill', uri: 'viking://agent/skills/deploy', level: 0, score: 0.5, abstract: '', tags: [] }],
    });
    const res = await client.callTool({ name: 'search', arguments: { query: 'deploy', target_uri: 'viking://~/memories', level: '2' } });
    expect(textOf(res)).toBe(
      'memories:\n- viking://user/alice/memories/events/a.md (memory, level 2, score 0.81)\n  Shipped v2.\n\nskills:\n- viking://agent/skills/deploy (skill, level 0, score 0.50)',
    );
    const got = h.orch.search[0].req;
    expect(got).toMatchObject({ query: 'deploy', targetUris: ['viking://user/alice/memories'], scoreThreshold: 0.35, limit: 10, levels: [2] });
    expect(h.orch.assemble).toHaveLength(0);
  });

  it('POST /mcp tools/call search - list mode with min_score 0 and nothing found - threshold 0, no-match text', async () => {
    h.orch.script.search = async () => EMPTY_SEARCH;
    const res = await client.callTool({ name: 'search', arguments: { query: 'deploy', min_score: 0, mode: 'list' } });
    expect(textOf(res)).toBe('No matching context found.');
    expect(h.orch.search[0].req.scoreThreshold).toBe(0);
  });

  it('POST /mcp tools/call search - bad context_type - tool error with the HTTP message', async () => {
    const res = await client.callTool({ name: 'search', arguments: { query: 'q', context_type: 'bananas' } });
    expect((res as ToolText).isError).toBe(true);
    expect(textOf(res)).toBe('context_type must be one or more of: memory, resource, skill');
  });

  it('POST /mcp tools/call read - viking://~ URI - ReadContent tier read of the expanded URI, body as text', async () => {
    h.orch.script.readContent = async (req) => ({ text: `# Body of ${req.uri}\nfull text`, contentHash: 'h', isDirectory: false });
    const res = await client.callTool({ name: 'read', arguments: { uri: 'viking://~/memories/events/a.md' } });
    expect(textOf(res)).toBe('# Body of viking://user/alice/memories/events/a.md\nfull text');
    expect(h.orch.read[0].req).toMatchObject({ uri: 'viking://user/alice/memories/events/a.md', tier: 'read', identity: { userId: 'alice' } });
  });

  it('POST /mcp tools/call read - unknown URI - tool error (NOT_FOUND message)', async () => {
    const res = await client.callTool({ name: 'read', arguments: { uri: 'viking://resources/nope.md' } });
    expect((res as ToolText).isError).toBe(true);
    expect(textOf(res)).toContain('no such node: viking://resources/nope.md');
  });

  it('POST /mcp tools/call read - malformed URI - tool error INVALID_URI message', async () => {
    const res = await client.callTool({ name: 'read', arguments: { uri: 'http://elsewhere/x' } });
    expect((res as ToolText).isError).toBe(true);
    expect(textOf(res)).toMatch(/^Invalid URI: http:\/\/elsewhere\/x/);
    expect(h.orch.read).toHaveLength(0);
  });

  it('POST /mcp tools/call search - orchestrator fails - tool error with the code message, not the cause', async () => {
    h.orch.script.assembleContext = async () => {
      throw new CtxError(Code.INTERNAL, 'BOOM', 'secret internals');
    };
    const res = await client.callTool({ name: 'search', arguments: { query: 'q', mode: 'context' } });
    expect((res as ToolText).isError).toBe(true);
    expect(textOf(res)).toBe('internal error');
  });

  it('POST /mcp - raw initialize - JSON answer with X-Request-ID echoed and X-Process-Time', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-request-id': 'mcp-req-1' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('x-request-id')).toBe('mcp-req-1');
    expect(res.headers.get('x-process-time')).toMatch(/^\d+(\.\d+)?(e-\d+)?$/);
    const body = (await res.json()) as { result: { serverInfo: { name: string } } };
    expect(body.result.serverInfo.name).toBe('ctxmesh');
  });

  it('GET /mcp - stateless endpoint - 405 with Allow: POST', async () => {
    const res = await fetch(`${url}/mcp`, { headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  it('POST /mcp - malformed JSON body - 400 contract envelope before MCP', async () => {
    const res = await fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { status: string }).status).toBe('error');
  });
});

describe('/mcp (api_key auth)', () => {
  let h: Harness;
  let url: string;
  beforeAll(async () => {
    h = await harness({ auth: { mode: 'api_key', keys: { 'key-bob': { accountId: 'acme', userId: 'bob' } } } });
    url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await h.close();
  });

  it('POST /mcp - no key - 401 UNAUTHENTICATED envelope, MCP never runs', async () => {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ status: 'error', error: { code: 'UNAUTHENTICATED' } });
  });

  it('POST /mcp - SDK client without a key - connect rejects', async () => {
    await expect(connect(url)).rejects.toThrow();
  });

  it.each([
    ['Authorization: Bearer', { Authorization: 'Bearer key-bob' }],
    ['X-API-Key', { 'X-API-Key': 'key-bob', 'X-OpenViking-User': 'mallory' }],
  ])('POST /mcp tools/call read - %s - identity from the key', async (_name, headers) => {
    h.orch.read.length = 0;
    h.orch.script.readContent = async () => ({ text: 'body', contentHash: 'h', isDirectory: false });
    const client = await connect(url, headers);
    try {
      expect(textOf(await client.callTool({ name: 'read', arguments: { uri: 'viking://~/memories/x.md' } }))).toBe('body');
    } finally {
      await client.close();
    }
    expect(h.orch.read[0].req).toMatchObject({ uri: 'viking://user/bob/memories/x.md', identity: { accountId: 'acme', userId: 'bob' } });
  });

  it('POST /mcp tools/call read - another user\'s space as a user-role key - tool error PERMISSION_DENIED message', async () => {
    const client = await connect(url, { Authorization: 'Bearer key-bob' });
    try {
      const res = await client.callTool({ name: 'read', arguments: { uri: 'viking://user/alice/memories/x.md' } });
      expect((res as ToolText).isError).toBe(true);
      expect(textOf(res)).toContain('Access denied');
    } finally {
      await client.close();
    }
  });
});
