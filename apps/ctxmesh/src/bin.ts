#!/usr/bin/env node
/**
 * The `ctxmesh` command.
 *
 *   ctxmesh start                 every service in one process (embedded stores), gateway on HTTP
 *   ctxmesh serve <service>       one service, as a container runs it
 *   ctxmesh ingest <dir>          load a folder (progress bar, summary)
 *   ctxmesh search "<query>"      print what an agent would get (--mode list|context|find)
 *   ctxmesh dead-letters          the writes the indexer gave up on (--limit N, --json)
 *   ctxmesh probe <target>        health probe for containers: http://host:port or host:port (gRPC)
 *   ctxmesh hooks <harness>       print (or --write) Claude Code / Codex hook configuration
 *   ctxmesh hook <harness>        a command hook: stdin → the gateway's hook route → stdout
 *
 * Telemetry starts before any gRPC/HTTP module is loaded, so service modules are required
 * lazily after it.
 */
import { startTelemetry } from '@ctxmesh/telemetry';
import { parseCommandLine, UsageError } from './args';

const SERVICES = ['gateway', 'orchestrator', 'gather', 'tier-reader', 'budget-render', 'ledger', 'rewrite', 'sessions', 'indexer'] as const;

/** The `ctxmesh` usage text (printed for `help` and after a usage error). */
export const USAGE = `usage:
  ctxmesh start                          run the whole mesh in one process (data in $CTXMESH_DATA_DIR, default ./.ctxmesh)
  ctxmesh serve <service>                run one service: ${SERVICES.join(', ')}
  ctxmesh ingest <dir> [--user U] [--prefix viking://resources/x] [--url URL] [--concurrency N]   (ingest --help)
  ctxmesh search "<query>" [--mode list|context|find] [--limit N] [--max-tokens N] [--purpose chat|coding] [--target URI] [--json] [--url URL]   (search --help)
  ctxmesh dead-letters [--limit N] [--json] [--url URL]   writes accepted and later given up on (admins see their account's)
  ctxmesh probe <http://host:port | host:port>   exit 0 when healthy (container health checks)
  ctxmesh hooks claude-code|codex [--url URL] [--write] [--settings PATH]   hook configuration, no plugin needed   (hooks --help)
  ctxmesh hook claude-code|codex [--url URL] [--api-key KEY]   a command hook: forwards stdin to the gateway, prints its answer
  ctxmesh --version`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    return await run(cmd, rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 2;
  }
}

async function run(cmd: string | undefined, rest: string[]): Promise<number> {
  switch (cmd) {
    case 'start': {
      parseCommandLine(rest, {});
      const telemetry = startTelemetry('ctxmesh');
      const { runAllInOne } = require('./start') as typeof import('./start');
      await runAllInOne(process.env, telemetry);
      return -1; // keeps running until a signal
    }
    case 'serve': {
      const svc = parseCommandLine(rest, {}).positionals[0];
      if (!(SERVICES as readonly string[]).includes(svc)) {
        process.stderr.write(`unknown service '${svc ?? ''}'\n${USAGE}\n`);
        return 2;
      }
      startTelemetry(svc);
      const mod = require(`@ctxmesh/${svc}`) as { main(): Promise<void> };
      await mod.main();
      return -1;
    }
    case 'ingest': {
      const { ingestCommand, INGEST_OPTIONS, OPTION_HINTS } = require('./commands') as typeof import('./commands');
      const { positionals, flags } = parseCommandLine(rest, INGEST_OPTIONS, OPTION_HINTS);
      return ingestCommand(positionals, flags, process.env);
    }
    case 'search': {
      const { searchCommand, SEARCH_OPTIONS, OPTION_HINTS } = require('./commands') as typeof import('./commands');
      const { positionals, flags } = parseCommandLine(rest, SEARCH_OPTIONS, OPTION_HINTS);
      return searchCommand(positionals, flags, process.env);
    }
    case 'dead-letters': {
      const { deadLettersCommand, DEAD_LETTERS_OPTIONS, OPTION_HINTS } = require('./commands') as typeof import('./commands');
      return deadLettersCommand(parseCommandLine(rest, DEAD_LETTERS_OPTIONS, OPTION_HINTS).flags, process.env);
    }
    case 'probe': {
      const { probeCommand } = require('./commands') as typeof import('./commands');
      return probeCommand(parseCommandLine(rest, {}).positionals[0]);
    }
    case 'hooks': {
      // `npm run ctxmesh -- hooks …` runs in the ctxmesh checkout; INIT_CWD is where the user typed it.
      const { hooksCommand, HOOKS_OPTIONS } = require('./hooks') as typeof import('./hooks');
      const { positionals, flags } = parseCommandLine(rest, HOOKS_OPTIONS);
      const io = { out: (t: string) => process.stdout.write(t), err: (t: string) => process.stderr.write(t), cwd: process.env.INIT_CWD ?? process.cwd(), bin: __filename, node: process.execPath };
      return hooksCommand(positionals, flags, process.env, io);
    }
    case 'hook': {
      const { hookCommand, HOOK_OPTIONS, readAll } = require('./hooks') as typeof import('./hooks');
      const { positionals, flags } = parseCommandLine(rest, HOOK_OPTIONS);
      const input = await readAll(process.stdin);
      return hookCommand(positionals, flags, process.env, { input, out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) });
    }
    case '--version':
    case 'version': {
      process.stdout.write(`${(require('../package.json') as { version: string }).version}\n`);
      return 0;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return cmd === undefined ? 2 : 0;
    default:
      process.stderr.write(`unknown command '${cmd}'\n${USAGE}\n`);
      return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      if (code >= 0) process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`ctxmesh: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
