/**
 * The CLI's client commands. They talk to a running gateway (`--url`, `CTXMESH_URL`, or the
 * default local port); when none answers, they run the mesh in process on the data dir for
 * the duration of the command.
 */
import { SingleBar, Presets } from 'cli-progress';
import { stat } from 'node:fs/promises';
import { fetchDeadLetters, formatDeadLetters } from './dead-letters';
import { isUp } from './http';
import { formatSummary, planIngest, runIngest } from './ingest';
import { runSearch, type SearchArgs } from './search';

type Flags = Record<string, string | true>;
type Env = Record<string, string | undefined>;

const str = (v: string | true | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: string | true | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new Error(`--${name} must be a non-negative integer`);
  return Number(v);
};

/** Find a gateway or start the mesh in process; returns its URL and a stop hook. */
async function withGateway<T>(flags: Flags, env: Env, fn: (url: string, apiKey: string | undefined) => Promise<T>): Promise<T> {
  const apiKey = str(flags['api-key']) ?? env.CTXMESH_API_KEY;
  const explicit = str(flags.url) ?? env.CTXMESH_URL;
  if (explicit) return fn(explicit, apiKey);
  const local = `http://127.0.0.1:${env.CTXMESH_PORT ?? env.GATEWAY_PORT ?? '1933'}`;
  if (await isUp(local)) return fn(local, apiKey);
  const { startMesh } = require('./mesh') as typeof import('./mesh');
  const { silentLogger } = require('@ctxmesh/runtime') as typeof import('@ctxmesh/runtime');
  const mesh = await startMesh({ env: { ...env, GATEWAY_PORT: '0' }, log: silentLogger() });
  try {
    return await fn(mesh.gatewayUrl, apiKey);
  } finally {
    await mesh.stop();
  }
}

/** `ctxmesh ingest <dir>`. */
export async function ingestCommand(positionals: string[], flags: Flags, env: Env): Promise<number> {
  const dir = positionals[0];
  if (!dir) throw new Error('ingest needs a directory: ctxmesh ingest <dir>');
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) throw new Error(`not a directory: ${dir}`);
  const user = str(flags.user) ?? env.CTXMESH_USER ?? 'default';
  const { items, skipped } = await planIngest(dir, { user, prefix: str(flags.prefix) });
  const concurrency = int(flags.concurrency, 'concurrency') ?? 8;
  return withGateway(flags, env, async (url, apiKey) => {
    const tty = process.stderr.isTTY;
    const bar = tty ? new SingleBar({ format: 'ingest |{bar}| {value}/{total} {file}', hideCursor: true }, Presets.shades_classic) : null;
    bar?.start(items.length, 0, { file: '' });
    let lastLog = 0;
    const summary = await runIngest(items, { url, apiKey, timeoutMs: 120_000 }, (done, total, file) => {
      if (bar) bar.update(done, { file: file.length > 50 ? '…' + file.slice(-49) : file });
      else if (done === total || Date.now() - lastLog > 2000) {
        lastLog = Date.now();
        process.stderr.write(`ingest: ${done}/${total}\n`);
      }
    }, concurrency);
    bar?.stop();
    process.stdout.write(formatSummary({ ...summary, skipped }) + '\n');
    return summary.failed.length > 0 ? 1 : 0;
  });
}

/** `ctxmesh search "<query>"`. */
export async function searchCommand(positionals: string[], flags: Flags, env: Env): Promise<number> {
  const query = positionals.join(' ');
  if (!query.trim()) throw new Error('search needs a query: ctxmesh search "<query>"');
  const mode = (str(flags.mode) ?? 'list') as SearchArgs['mode'];
  if (!['list', 'context', 'find'].includes(mode)) throw new Error('--mode must be list, context or find');
  const purpose = str(flags.purpose) as SearchArgs['purpose'];
  if (purpose && !['chat', 'coding'].includes(purpose)) throw new Error('--purpose must be chat or coding');
  const args: SearchArgs = {
    query,
    mode,
    limit: int(flags.limit, 'limit'),
    maxTokens: int(flags['max-tokens'], 'max-tokens'),
    purpose,
    targetUri: str(flags.target),
    json: flags.json === true,
  };
  return withGateway(flags, env, async (url, apiKey) => {
    process.stdout.write((await runSearch(args, { url, apiKey })) + '\n');
    return 0;
  });
}

/** `ctxmesh dead-letters`: list the writes the indexer gave up on. */
export async function deadLettersCommand(flags: Flags, env: Env): Promise<number> {
  const limit = int(flags.limit, 'limit') ?? 100;
  if (limit < 1 || limit > 1000) throw new Error('--limit must be from 1 to 1000');
  return withGateway(flags, env, async (url, apiKey) => {
    const rows = await fetchDeadLetters({ url, apiKey }, limit);
    process.stdout.write((flags.json === true ? JSON.stringify(rows, null, 2) : formatDeadLetters(rows)) + '\n');
    return 0;
  });
}

/** `ctxmesh probe <target>`: HTTP `/health` for URLs, gRPC readiness for host:port. */
export async function probeCommand(target: string | undefined): Promise<number> {
  if (!target) throw new Error('probe needs a target: http://host:port or host:port');
  if (/^https?:\/\//.test(target)) return (await isUp(target, 2000)) ? 0 : 1;
  const { checkHealth, closeHealthClients } = require('@ctxmesh/rpc') as typeof import('@ctxmesh/rpc');
  const ok = await checkHealth(target, '', 2000);
  closeHealthClients();
  return ok ? 0 : 1;
}
