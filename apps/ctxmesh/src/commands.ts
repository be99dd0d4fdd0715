/**
 * The CLI's client commands. They talk to a running gateway (`--url`, `CTXMESH_URL`, or the
 * default local port); when none answers, they run the mesh in process on the data dir for
 * the duration of the command.
 */
import { SingleBar, Presets } from 'cli-progress';
import { stat } from 'node:fs/promises';
import type { CommandOptions, Flags } from './args';
import { fetchDeadLetters, formatDeadLetters } from './dead-letters';
import { GatewayUrlError, identifyGateway, isUp, normalizeGatewayUrl } from './http';
import { DEFAULT_INGEST_CONCURRENCY, formatSummary, planIngest, runIngest } from './ingest';
import { runSearch, type SearchArgs } from './search';

type Env = Record<string, string | undefined>;

const str = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const int = (v: string | boolean | undefined, name: string): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new Error(`--${name} must be a non-negative integer`);
  return Number(v);
};

/** Where the command's messages about the gateway go (stderr: stdout is the command's output). */
export type Say = (line: string) => void;

/**
 * Find the gateway and run `fn` against it. An explicit URL (`--url`, else `CTXMESH_URL`) must
 * answer as a ctxmesh gateway, or the command fails with one line naming it. Without one, the
 * local port (`GATEWAY_PORT`, default 1933) is used when a ctxmesh gateway answers there;
 * otherwise the mesh runs in process on the data dir for the duration of the command. Which
 * URL is used (name and version from `/health`) is said on `say`.
 */
export async function withGateway<T>(flags: Flags, env: Env, say: Say, fn: (url: string, apiKey: string | undefined) => Promise<T>): Promise<T> {
  const apiKey = str(flags['api-key']) ?? env.CTXMESH_API_KEY;
  if (flags.url === true) throw new GatewayUrlError(`--url needs a value: ${OPTION_HINTS.url}`);
  const explicit = str(flags.url) ?? env.CTXMESH_URL;
  if (explicit) {
    const id = await identifyGateway(normalizeGatewayUrl(explicit));
    say(`using ${id.name} ${id.version} at ${id.url}${str(flags.url) ? '' : ' (CTXMESH_URL)'}`);
    return fn(id.url, apiKey);
  }
  const local = `http://127.0.0.1:${env.CTXMESH_PORT ?? env.GATEWAY_PORT ?? '1933'}`;
  const found = await identifyGateway(local, 800).then(
    (id) => id,
    (err: Error) => err,
  );
  if (!(found instanceof Error)) {
    say(`using ${found.name} ${found.version} at ${found.url}`);
    return fn(found.url, apiKey);
  }
  const { startMesh } = require('./mesh') as typeof import('./mesh');
  const { silentLogger } = require('@ctxmesh/runtime') as typeof import('@ctxmesh/runtime');
  const mesh = await startMesh({ env: { ...env, GATEWAY_PORT: '0' }, log: silentLogger() });
  say(`${found.message}; running the mesh in process on ${mesh.dataDir} (${mesh.gatewayUrl})`);
  try {
    return await fn(mesh.gatewayUrl, apiKey);
  } finally {
    await mesh.stop();
  }
}

const stderrSay: Say = (line) => process.stderr.write(`ctxmesh: ${line}\n`);

const VALUE = { type: 'string' } as const;
const SWITCH = { type: 'boolean' } as const;
const HELP = { type: 'boolean', short: 'h' } as const;

/** The options of every command that talks to a gateway ({@link withGateway}). */
const GATEWAY_OPTIONS = { url: VALUE, 'api-key': VALUE } as const satisfies CommandOptions;

/** What a missing option value should look like, by option name (for the CLI's usage errors). */
export const OPTION_HINTS: Readonly<Record<string, string>> = { url: '--url http://host:port or --url host:port' };

/** `ctxmesh ingest` options (the flags of {@link INGEST_HELP}). */
export const INGEST_OPTIONS = { ...GATEWAY_OPTIONS, user: VALUE, prefix: VALUE, concurrency: VALUE, help: HELP } as const satisfies CommandOptions;

/** `ctxmesh search` options (the flags of {@link SEARCH_HELP}). */
export const SEARCH_OPTIONS = {
  ...GATEWAY_OPTIONS,
  ...{ mode: VALUE, limit: VALUE, 'max-tokens': VALUE, purpose: VALUE, target: VALUE, json: SWITCH, help: HELP },
} as const satisfies CommandOptions;

/** `ctxmesh dead-letters` options. */
export const DEAD_LETTERS_OPTIONS = { ...GATEWAY_OPTIONS, limit: VALUE, json: SWITCH } as const satisfies CommandOptions;

/** `ctxmesh ingest --help`. */
export const INGEST_HELP = `usage: ctxmesh ingest <dir> [options]

Load every text file under <dir> through the gateway's write path (progress bar, then a summary).
Files under a memories/<type>/ path become the user's memories; everything else becomes
viking://resources/<folder>/… (code files get their outline as overview).

options:
  --user U            the user whose memories are written (default $CTXMESH_USER or "default")
  --prefix URI        resource prefix instead of viking://resources/<folder> (e.g. viking://resources/docs)
  --concurrency N     writes in flight (default 32; the indexer applies what is in flight in batches)
  --url URL           the gateway (http://host:port or host:port); default $CTXMESH_URL, else
                      http://127.0.0.1:$GATEWAY_PORT (1933) when a ctxmesh gateway answers there,
                      else the mesh runs in process on $CTXMESH_DATA_DIR for the command
  --api-key KEY       sent as Bearer (default $CTXMESH_API_KEY)`;

/** `ctxmesh search --help`. */
export const SEARCH_HELP = `usage: ctxmesh search "<query>" [options]

Print what an agent would get for a query.

options:
  --mode list|context|find   list hits (default), the context block, or /find
  --limit N                  hits (list) or candidates (context)
  --max-tokens N             context mode's budget (default 1600)
  --purpose chat|coding      context mode's preset
  --target URI               list mode's target (e.g. viking://resources/docs)
  --json                     print the raw result
  --url URL                  the gateway, as for ingest (default $CTXMESH_URL, then :$GATEWAY_PORT, then in process)
  --api-key KEY              sent as Bearer (default $CTXMESH_API_KEY)`;

const wantsHelp = (positionals: string[], flags: Flags) => flags.help !== undefined || positionals[0] === 'help';

/** `ctxmesh ingest <dir>`. */
export async function ingestCommand(positionals: string[], flags: Flags, env: Env, say: Say = stderrSay): Promise<number> {
  if (wantsHelp(positionals, flags)) {
    process.stdout.write(INGEST_HELP + '\n');
    return 0;
  }
  const dir = positionals[0];
  if (!dir) throw new Error('ingest needs a directory: ctxmesh ingest <dir>');
  const s = await stat(dir).catch(() => null);
  if (!s?.isDirectory()) throw new Error(`not a directory: ${dir}`);
  const user = str(flags.user) ?? env.CTXMESH_USER ?? 'default';
  const { items, skipped } = await planIngest(dir, { user, prefix: str(flags.prefix) });
  const concurrency = int(flags.concurrency, 'concurrency') ?? DEFAULT_INGEST_CONCURRENCY;
  return withGateway(flags, env, say, async (url, apiKey) => {
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
export async function searchCommand(positionals: string[], flags: Flags, env: Env, say: Say = stderrSay): Promise<number> {
  if (wantsHelp(positionals, flags)) {
    process.stdout.write(SEARCH_HELP + '\n');
    return 0;
  }
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
  return withGateway(flags, env, say, async (url, apiKey) => {
    process.stdout.write((await runSearch(args, { url, apiKey })) + '\n');
    return 0;
  });
}

/** `ctxmesh dead-letters`: list the writes the indexer gave up on. */
export async function deadLettersCommand(flags: Flags, env: Env, say: Say = stderrSay): Promise<number> {
  const limit = int(flags.limit, 'limit') ?? 100;
  if (limit < 1 || limit > 1000) throw new Error('--limit must be from 1 to 1000');
  return withGateway(flags, env, say, async (url, apiKey) => {
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
