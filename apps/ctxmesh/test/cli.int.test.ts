/**
 * The command line finds the right server (issue 14 item 4): a scheme-less `--url`, the
 * gateway's name and version checked on `/health` before use, one line naming an unreachable
 * or foreign URL, and `--help` for the subcommands. Runs against a real in-process mesh.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '@ctxmesh/runtime';
import { ingestCommand, INGEST_HELP, searchCommand, SEARCH_HELP } from '../src/commands';
import { GatewayUrlError, identifyGateway, normalizeGatewayUrl } from '../src/http';
import { startMesh, type Mesh } from '../src/mesh';

let mesh: Mesh;
let dataDir: string;
let foreign: Server;
let foreignUrl: string;
let closedPort: number;

async function listen(server: Server): Promise<number> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ctxmesh-cli-'));
  mesh = await startMesh({ env: { CTXMESH_DATA_DIR: join(dataDir, 'db'), GATEWAY_PORT: '0' }, log: silentLogger() });
  // Something else that answers /health with JSON, as another service on a reused port would.
  foreign = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","healthy":true}'));
  foreignUrl = `http://127.0.0.1:${await listen(foreign)}`;
  const probe = createServer();
  closedPort = await listen(probe);
  await new Promise((r) => probe.close(r));
});

afterAll(async () => {
  await mesh.stop();
  await new Promise((r) => foreign.close(r));
  rmSync(dataDir, { recursive: true, force: true });
});

/** Run a command with stdout captured; `said` collects what it tells the user about the gateway. */
async function run(cmd: typeof ingestCommand, positionals: string[], flags: Record<string, string | true>, env: Record<string, string> = {}) {
  const said: string[] = [];
  const out: string[] = [];
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const code = await cmd(positionals, flags, { CTXMESH_DATA_DIR: join(dataDir, 'inproc'), GATEWAY_PORT: String(closedPort), ...env }, (l) => said.push(l));
    return { code, said, out: out.join('') };
  } finally {
    spy.mockRestore();
  }
}

describe('normalizeGatewayUrl', () => {
  it.each([
    ['127.0.0.1:19433', 'http://127.0.0.1:19433'],
    ['localhost:1933/', 'http://localhost:1933'],
    ['http://h:1', 'http://h:1'],
    ['https://ctx.example/', 'https://ctx.example'],
  ])('%p → %p', (raw, want) => expect(normalizeGatewayUrl(raw)).toBe(want));

  it('refuses a non-http scheme', () => {
    expect(() => normalizeGatewayUrl('ftp://h:1')).toThrow(GatewayUrlError);
  });
});

describe('the CLI against a gateway', () => {
  it('identifyGateway - a ctxmesh gateway - its name and version from /health', async () => {
    const pkg = require('../../../services/gateway/package.json') as { version: string };
    expect(await identifyGateway(mesh.gatewayUrl)).toEqual({ url: mesh.gatewayUrl, name: 'ctxmesh', version: pkg.version });
  });

  it('ingest and search - --url host:port without a scheme - used, and said which URL', async () => {
    const corpus = join(dataDir, 'corpus', 'docs');
    mkdirSync(corpus, { recursive: true });
    writeFileSync(join(corpus, 'deploy.md'), '# Deploy\n\nWe deploy the gateway with blue/green releases.\n');
    const port = new URL(mesh.gatewayUrl).port;
    const ingest = await run(ingestCommand, [join(dataDir, 'corpus')], { url: `127.0.0.1:${port}` });
    expect(ingest.code).toBe(0);
    expect(ingest.said).toEqual([expect.stringMatching(new RegExp(`^using ctxmesh \\d+\\.\\d+\\.\\d+ at http://127\\.0\\.0\\.1:${port}$`))]);
    const search = await run(searchCommand, ['blue/green'], { url: `127.0.0.1:${port}`, json: true });
    expect(search.code).toBe(0);
    expect(search.said[0]).toContain(`at http://127.0.0.1:${port}`);
    expect(JSON.parse(search.out).resources.map((h: { uri: string }) => h.uri)).toContain('viking://resources/corpus/docs/deploy.md');
  });

  it('search - CTXMESH_URL - used and named as the source', async () => {
    const r = await run(searchCommand, ['deploy'], { json: true }, { CTXMESH_URL: mesh.gatewayUrl });
    expect(r.said).toEqual([`using ctxmesh ${(await identifyGateway(mesh.gatewayUrl)).version} at ${mesh.gatewayUrl} (CTXMESH_URL)`]);
  });

  it('search - an unreachable --url - one line naming it', async () => {
    const err = await run(searchCommand, ['q'], { url: `127.0.0.1:${closedPort}` }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(GatewayUrlError);
    expect(err!.message).toBe(`no ctxmesh gateway answers at http://127.0.0.1:${closedPort} (ECONNREFUSED)`);
    expect(err!.message).not.toContain('\n');
  });

  it('search - a --url that answers but is not ctxmesh - refused, naming it', async () => {
    await expect(run(searchCommand, ['q'], { url: foreignUrl })).rejects.toThrow(`${foreignUrl} answered /health with HTTP 200 but is not a ctxmesh gateway`);
  });

  it('search - no --url and nothing on the local port - runs in process and says so', async () => {
    const r = await run(searchCommand, ['q'], { json: true });
    expect(r.code).toBe(0);
    expect(r.said).toHaveLength(1);
    expect(r.said[0]).toMatch(new RegExp(`^no ctxmesh gateway answers at http://127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\); running the mesh in process on .*inproc`));
  });

  it.each([
    [ingestCommand, INGEST_HELP, 'usage: ctxmesh ingest'],
    [searchCommand, SEARCH_HELP, 'usage: ctxmesh search'],
  ])('--help - prints help, exit 0, no gateway contacted', async (cmd, help, head) => {
    const r = await run(cmd, [], { help: true });
    expect(r.code).toBe(0);
    expect(r.out).toBe(help + '\n');
    expect(r.out.startsWith(head)).toBe(true);
    expect(r.out).toContain('--url');
    expect(r.said).toEqual([]);
  });
});
