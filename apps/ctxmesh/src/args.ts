/**
 * The command line of one `ctxmesh` subcommand, parsed by `node:util` `parseArgs` against
 * that subcommand's options: unknown options and options missing their value are usage
 * errors, named in one line.
 */
import { UsageError } from './errors';

export { UsageError };
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A subcommand's options, as `node:util` `parseArgs` takes them. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Parsed flags by long name: a string option's value, or `true` for a boolean one. */
export type Flags = Readonly<Record<string, string | boolean | undefined>>;

/**
 * Parse `args` (the words after the subcommand) against `options`: `--name value`,
 * `--name=value`, booleans as `--name`, positionals anywhere, and everything after `--` as
 * positionals.
 * @param hints per option name, what a missing value should look like (appended to the error)
 * @throws UsageError for an unknown option, a string option without its value, or a value given to a boolean
 */
export function parseCommandLine(args: readonly string[], options: CommandOptions, hints: Readonly<Record<string, string>> = {}): { positionals: string[]; flags: Flags } {
  try {
    const { values, positionals } = parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
    return { positionals, flags: values as Flags };
  } catch (err) {
    if (!isParseArgsError(err)) throw err;
    throw new UsageError(problemOf(args, options, hints) ?? String(err.message).split('\n')[0]!);
  }
}

// By code, not instanceof: Node's errors may come from another realm (jest's sandbox).
function isParseArgsError(err: unknown): err is Error {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_');
}

/**
 * The first problem of a command line that strict parsing refused, in the CLI's words.
 * Node's own messages name the option but are several lines long; the lenient pass's tokens
 * say which option and what was wrong with it.
 */
function problemOf(args: readonly string[], options: CommandOptions, hints: Readonly<Record<string, string>>): string | undefined {
  const { tokens } = parseArgs({ args: [...args], options, strict: false, allowPositionals: true, tokens: true });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const spec = options[t.name];
    if (!spec) return `unknown option '${t.rawName}'`;
    if (spec.type === 'boolean' && t.value !== undefined) return `${t.rawName} takes no value`;
    if (spec.type !== 'string') continue;
    const hint = hints[t.name];
    // A separate word that starts with '--' is the next option, not this one's value.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith('--'))) return `${t.rawName} needs a value${hint ? `: ${hint}` : ''}`;
    if (!t.inlineValue && t.value.startsWith('-')) return `write ${t.rawName}=${t.value} for a value that starts with '-'`;
  }
  return undefined;
}
