/**
 * The one-process mesh with its search thread (`CTXMESH_SEARCH_THREAD`, on by default for
 * `ctxmesh start`): gather and tier-reader run in a worker thread with their own connection to
 * the SQLite file. Runs the built CLI (`apps/ctxmesh/dist/bin.js`, a child process) as
 * `npm start` does: `npm test` builds it first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventually } from '@ctxmesh/testing';

const ROOT = resolve(__dirname, '../..');
const BIN = join(ROOT, 'apps/ctxmesh/dist/bin.js');

interface Started {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(env: Record<string, string>, dataDir: string): Started {
  let out = '';
  const child = spawn(process.execPath, [BIN, 'start'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, GATEWAY_PORT: '0', CTXMESH_DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'ctxmesh-search-thread-'));
  dirs.push(d);
  return d;
};

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build (npm test does)`);
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('ctxmesh start with the search thread', () => {
  let mesh: Started;
  let gateway: string;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(gateway + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as { result: Record<string, unknown> } };
  };

  beforeAll(async () => {
    mesh = start({}, fresh());
    await eventually(() => /ctxmesh listening on (http:\/\/\S+)/.test(mesh.out()), 30_000);
    gateway = /ctxmesh listening on (http:\/\/\S+)/.exec(mesh.out())![1];
    // The logger writes its "ctxmesh ready" line on its own stream, which may land after the
    // plain "listening" line (a flake in a full run on a loaded host): wait for both.
    await eventually(() => mesh.out().includes('"ctxmesh ready"'), 30_000);
  }, 60_000);

  afterAll(async () => {
    if (mesh.child.exitCode === null) {
      mesh.child.kill('SIGTERM');
      await mesh.exited;
    }
  });

  it('runs gather and tier-reader in the thread, ready', async () => {
    const ready = JSON.parse(mesh.out().split('\n').find((l) => l.includes('"ctxmesh ready"'))!) as { searchThread: boolean; addrs: Record<string, string> };
    expect(ready.searchThread).toBe(true);
    expect(ready.addrs.gather).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(ready.addrs.tierReader).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await fetch(gateway + '/ready')).status).toBe(200);
  });

  it('loads the thread\'s vector store once the mesh listens, not at the first question', async () => {
    await eventually(() => mesh.out().includes('"vector store warm"'), 30_000);
    // No question has been asked yet: the load came from the start, on an empty store.
    const warm = mesh.out().split('\n').find((l) => l.includes('"vector store warm"'))!;
    expect(JSON.parse(warm)).toMatchObject({ rows: 0 });
  });

  it('a write that answered wait:true is searched and read at once by the thread (its own connection to the file)', async () => {
    for (let i = 0; i < 5; i++) {
      const uri = `viking://resources/docs/release-${i}.md`;
      const w = await post('/api/v1/content/write', { uri, content: `# Release ${i}\n\nThe zanzibar${i} release ships the gateway's canary rollout.`, wait: true });
      expect(w.status).toBe(200);
      const find = await post('/api/v1/search/find', { query: `zanzibar${i} release`, limit: 3 });
      expect(find.status).toBe(200);
      expect((find.json.result.resources as Array<{ uri: string }>).map((r) => r.uri)).toContain(uri);
      const ctx = await post('/api/v1/search/search', { query: `zanzibar${i} canary rollout`, mode: 'context', max_tokens: 400, detail: 'full' });
      expect(ctx.status).toBe(200);
      const entry = (ctx.json.result.entries as Array<{ uri: string; text: string }>).find((e) => e.uri === uri);
      expect(entry?.text).toContain(`zanzibar${i} release ships`);
    }
  });

  it('/metrics carries the RPC latencies of gather and tier-reader from the thread, once, with the process metrics', async () => {
    const text = await (await fetch(gateway + '/metrics')).text();
    const series = (service: string, method: string) =>
      text.split('\n').filter((l) => l.startsWith('ctxmesh_rpc_server_duration_seconds_count{') && l.includes(`service="${service}"`) && l.includes(`method="${method}"`));
    // The writes and searches above went through both.
    expect(series('gather', 'gatherCandidates').length).toBe(1);
    expect(series('tier-reader', 'readTiers').length).toBe(1);
    expect(series('orchestrator', 'assembleContext').length).toBe(1);
    expect(Number(series('gather', 'gatherCandidates')[0]!.split(' ').at(-1))).toBeGreaterThanOrEqual(5);
    // The process metrics appear once (the thread does not send its own).
    expect(text.split('\n').filter((l) => l.startsWith('ctxmesh_process_cpu_user_seconds_total ')).length).toBe(1);
  });

  it('stops on SIGINT: the thread drains and the process exits 0', async () => {
    mesh.child.kill('SIGINT');
    expect(await mesh.exited).toBe(0);
  }, 30_000);
});

describe('CTXMESH_SEARCH_THREAD', () => {
  it('off keeps gather and tier-reader on the main thread', async () => {
    const m = start({ CTXMESH_SEARCH_THREAD: 'off' }, fresh());
    await eventually(() => m.out().includes('"ctxmesh ready"'), 30_000);
    const ready = JSON.parse(m.out().split('\n').find((l) => l.includes('"ctxmesh ready"'))!) as { searchThread: boolean };
    expect(ready.searchThread).toBe(false);
    // The main thread's readers load their store once listening, as the thread's do.
    await eventually(() => m.out().includes('"vector store warm"'), 30_000);
    m.child.kill('SIGTERM');
    expect(await m.exited).toBe(0);
  }, 60_000);

  it('a value that is not a boolean fails the start naming the variable', async () => {
    const m = start({ CTXMESH_SEARCH_THREAD: 'sometimes' }, fresh());
    expect(await m.exited).not.toBe(0);
    expect(m.out()).toContain('CTXMESH_SEARCH_THREAD');
  }, 30_000);
});
