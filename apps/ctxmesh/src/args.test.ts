import { parseCommandLine, UsageError } from './args';
import { USAGE } from './bin';
import { DEAD_LETTERS_OPTIONS, INGEST_HELP, INGEST_OPTIONS, OPTION_HINTS, SEARCH_HELP, SEARCH_OPTIONS } from './commands';

/** The long flags a help text names (`--max-tokens`, `--url`, …). */
const flagsIn = (text: string) => [...new Set([...text.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!))].sort();

describe('parseCommandLine', () => {
  it('reads --flag value, --flag=value, booleans and positionals in any order', () => {
    expect(parseCommandLine(['blue', '--mode', 'context', 'green', '--limit=5', '--json'], SEARCH_OPTIONS)).toEqual({
      positionals: ['blue', 'green'],
      flags: { mode: 'context', limit: '5', json: true },
    });
  });

  it('takes -h for --help, and everything after -- as positionals', () => {
    expect(parseCommandLine(['-h'], SEARCH_OPTIONS).flags).toEqual({ help: true });
    expect(parseCommandLine(['--', '--json', '-h'], SEARCH_OPTIONS)).toEqual({ positionals: ['--json', '-h'], flags: {} });
  });

  it('keeps the last of a repeated option', () => {
    expect(parseCommandLine(['--url', 'a:1', '--url', 'b:2'], INGEST_OPTIONS).flags).toEqual({ url: 'b:2' });
  });

  it.each([
    [['q', '--lmit', '5'], "unknown option '--lmit'"],
    [['q', '-x'], "unknown option '-x'"],
    [['q', '--url'], '--url needs a value: --url http://host:port or --url host:port'],
    [['q', '--url', '--json'], '--url needs a value: --url http://host:port or --url host:port'],
    [['q', '--limit'], '--limit needs a value'],
    [['q', '--limit', '-5'], "write --limit=-5 for a value that starts with '-'"],
    [['q', '--json=yes'], '--json takes no value'],
  ])('%j - a UsageError: %s', (args, message) => {
    let err: unknown;
    try {
      parseCommandLine(args, SEARCH_OPTIONS, OPTION_HINTS);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toBe(message);
  });

  it('a value that starts with - is taken when written --flag=value', () => {
    expect(parseCommandLine(['--limit=-5'], SEARCH_OPTIONS).flags).toEqual({ limit: '-5' });
  });

  it('refuses every option where a command takes none', () => {
    expect(() => parseCommandLine(['gateway', '--port', '1'], {})).toThrow(UsageError);
    expect(parseCommandLine(['gateway'], {}).positionals).toEqual(['gateway']);
  });
});

describe('the option tables', () => {
  it.each([
    ['ingest', INGEST_HELP, INGEST_OPTIONS],
    ['search', SEARCH_HELP, SEARCH_OPTIONS],
  ])('%s - declare exactly the flags its --help names, and --help', (cmd, help, options) => {
    expect(flagsIn(help)).toEqual(Object.keys(options).filter((k) => k !== 'help').sort());
    expect(options.help).toEqual({ type: 'boolean', short: 'h' });
    // …and the summary line in `ctxmesh help` names none they lack.
    const line = USAGE.split('\n').find((l) => l.startsWith(`  ctxmesh ${cmd} `))!;
    expect(flagsIn(line).filter((f) => f !== 'help' && !(f in options))).toEqual([]);
  });

  it('dead-letters - declares the flags of its usage line, and --api-key like every gateway command', () => {
    const line = USAGE.split('\n').find((l) => l.startsWith('  ctxmesh dead-letters '))!;
    expect(Object.keys(DEAD_LETTERS_OPTIONS).sort()).toEqual([...flagsIn(line), 'api-key'].sort());
  });
});
