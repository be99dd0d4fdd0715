#!/usr/bin/env node
// The README's test command (`npm test`). In order:
//   1. the generated protobuf code is up to date (buf lint + regenerate + compare), and so are
//      the WebAssembly kernel's bytes (assembled from libs/stores/src/embedded/simd-dot.wat),
//      and every section reference in the code names a section of docs/ (scripts/doc-refs.mjs);
//   2. everything type-checks and builds (tsc --build), tests included (tsconfig.test.json);
//   3. lint (ESLint: boundaries, floating promises, import cycles);
//   4. real Redis and NATS JetStream: taken from REDIS_URL/NATS_URL, else found on their
//      standard local ports, else started from the machine's redis-server/nats-server on
//      free ports (stopped by PID at the end). If none can be had, fail loudly: never skip;
//   5. jest: unit, integration and e2e projects (e2e includes the inspector's test in Debian's
//      Chromium, /usr/bin/chromium, and the Kustomize render needs kubectl: both must be installed).
// Flags: --projects unit,integration,e2e   --path <regex>   --quick (skip steps 1–3)
//        --own-servers (always start private redis-server/nats-server, ignoring running ones)
//        anything after `--` goes to jest.
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const argv = process.argv.slice(2);
const dash = argv.indexOf('--');
const own = dash >= 0 ? argv.slice(0, dash) : argv;
const passthrough = dash >= 0 ? argv.slice(dash + 1) : [];
const opt = (name) => {
  const i = own.indexOf(name);
  return i >= 0 ? own[i + 1] : undefined;
};
const projects = (opt('--projects') ?? 'unit,integration,e2e').split(',');
const path = opt('--path');
const quick = own.includes('--quick') || path !== undefined;
const needsServers = projects.some((p) => p !== 'unit');
const ownServers = own.includes('--own-servers');

const started = [];
const tmpDirs = [];

function step(title, cmd, args) {
  console.log(`\n== ${title}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error(`\n✗ ${title} failed`);
    cleanup();
    process.exit(r.status ?? 1);
  }
}

function probe(port, hello, expect, timeoutMs = 800) {
  return new Promise((done) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let buf = '';
    const finish = (v) => {
      sock.destroy();
      done(v);
    };
    sock.setTimeout(timeoutMs, () => finish(false));
    sock.on('error', () => finish(false));
    sock.on('connect', () => hello && sock.write(hello));
    sock.on('data', (d) => {
      buf += d.toString();
      if (expect(buf) !== undefined) finish(expect(buf));
    });
  });
}

const redisAlive = (port) => probe(port, 'PING\r\n', (b) => (b.includes('+PONG') ? true : b.includes('\n') ? false : undefined));
const natsJetStream = (port) =>
  probe(port, null, (b) => {
    const line = b.split('\n')[0];
    if (!b.includes('\n')) return undefined;
    try {
      return JSON.parse(line.replace(/^INFO\s+/, '')).jetstream === true;
    } catch {
      return false;
    }
  });

function freePort() {
  return new Promise((res, rej) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
    srv.on('error', rej);
  });
}

function which(cmd, extra = []) {
  for (const dir of [...(process.env.PATH ?? '').split(':'), '/usr/sbin', '/usr/bin', '/usr/local/bin', ...extra]) {
    const p = join(dir, cmd);
    if (existsSync(p)) return p;
  }
  return null;
}

async function waitFor(check, what, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what} did not become ready within ${timeoutMs} ms`);
}

async function ensureRedis() {
  if (!ownServers && process.env.REDIS_URL) return process.env.REDIS_URL;
  if (!ownServers && (await redisAlive(6379))) return 'redis://127.0.0.1:6379';
  const bin = which('redis-server');
  if (!bin) throw new Error('no Redis on 127.0.0.1:6379 and no redis-server binary (Debian package redis-server) to start one');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-redis-'));
  tmpDirs.push(dir);
  const child = spawn(bin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  started.push({ name: 'redis-server', child });
  await waitFor(() => redisAlive(port), `redis-server on port ${port}`);
  console.log(`started redis-server (pid ${child.pid}) on port ${port}`);
  return `redis://127.0.0.1:${port}`;
}

async function ensureNats() {
  if (!ownServers && process.env.NATS_URL) return process.env.NATS_URL;
  if (!ownServers && (await natsJetStream(4222))) return 'nats://127.0.0.1:4222';
  const bin = which('nats-server');
  if (!bin) throw new Error('no NATS with JetStream on 127.0.0.1:4222 and no nats-server binary (Debian package nats-server) to start one');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ctxmesh-nats-'));
  tmpDirs.push(dir);
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir], { stdio: 'ignore' });
  started.push({ name: 'nats-server', child });
  await waitFor(() => natsJetStream(port), `nats-server on port ${port}`);
  console.log(`started nats-server -js (pid ${child.pid}) on port ${port}`);
  return `nats://127.0.0.1:${port}`;
}

function cleanup() {
  for (const { name, child } of started.splice(0)) {
    try {
      process.kill(child.pid, 'SIGTERM');
      console.log(`stopped ${name} (pid ${child.pid})`);
    } catch {
      /* already gone */
    }
  }
  for (const d of tmpDirs.splice(0)) rmSync(d, { recursive: true, force: true });
}
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

if (!quick) {
  step('generated code', 'node', ['scripts/gen-check.mjs']);
  step('generated WebAssembly', 'node', ['scripts/gen-wasm.mjs', '--check']);
  // Every section the code cites ("context-contract S8.1", a bare "S3.6") exists in docs/.
  step('section references', 'node', ['scripts/doc-refs.mjs']);
  step('section-reference checker tests', 'node', ['--test', 'scripts/doc-refs.test.mjs']);
  step('build', 'npx', ['tsc', '--build']);
  step('type-check tests', 'npx', ['tsc', '-p', 'tsconfig.test.json']);
  // The inspector page is plain browser JavaScript with JSDoc types, checked against the DOM.
  step('type-check the inspector page', 'npx', ['tsc', '-p', 'services/gateway/inspect/tsconfig.json']);
  step('lint', 'npx', ['eslint', '--max-warnings=0', '.']);
}

const env = { ...process.env };
if (needsServers) {
  try {
    env.REDIS_URL = await ensureRedis();
    env.NATS_URL = await ensureNats();
  } catch (err) {
    console.error(`\n✗ real servers unavailable: ${err.message}`);
    cleanup();
    process.exit(1);
  }
  console.log(`REDIS_URL=${env.REDIS_URL} NATS_URL=${env.NATS_URL}`);
}

// The inspector's browser test drives Debian's Chromium; without it the e2e run would fail
// late, so say it first (never skip: .ci/run installs it).
if (projects.includes('e2e') && !existsSync('/usr/bin/chromium')) {
  console.error('\n✗ /usr/bin/chromium is missing: the inspector browser test needs it (apt-get install -y chromium; .ci/run does)');
  cleanup();
  process.exit(1);
}

// Paths go before --selectProjects: that flag takes a list and would swallow them.
const jestArgs = ['jest', ...(path ? [path] : []), '--selectProjects', ...projects, ...passthrough];
console.log(`\n== tests: npx ${jestArgs.join(' ')}`);
const r = spawnSync('npx', jestArgs, { cwd: root, stdio: 'inherit', env });
cleanup();
process.exit(r.status ?? 1);
