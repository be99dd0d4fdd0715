/**
 * `ctxmesh hooks claude-code|codex` (print, or `--write` merge, the harness's hook
 * configuration for a gateway) and `ctxmesh hook claude-code|codex` (a command hook: forward
 * stdin to the gateway's hook route and print its answer).
 *
 * Claude Code posts its events itself (`"type": "http"` hooks, the key from the environment
 * through `allowedEnvVars`), so it needs nothing installed. Codex's hooks are commands: each
 * runs `ctxmesh hook codex`, which prints the route's answer, or `{}` whatever goes wrong — a
 * hook must never block the harness.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { normalizeGatewayUrl } from './http';

/** The harnesses with hook routes. */
export type HookHarness = 'claude-code' | 'codex';

/** Route of each harness on the gateway. */
export const HOOK_ROUTES: Readonly<Record<HookHarness, string>> = { 'claude-code': '/hooks/claude-code', codex: '/hooks/codex' };

/** Environment variable the generated Claude Code headers read the key from. @default "CTXMESH_API_KEY" */
export const DEFAULT_KEY_ENV = 'CTXMESH_API_KEY';

/** Claude Code's hook timeout we configure, seconds: the gateway answers within its own budget (1.5 s by default) long before. */
export const DEFAULT_HOOK_TIMEOUT_S = 5;

/**
 * The Claude Code events registered, with their matchers: every prompt; `SessionStart` only
 * for `resume|compact` (a fresh start has nothing to carry on); both compaction events; `Stop`;
 * every tool (`PostToolUse` matches tool names).
 */
export const CLAUDE_EVENTS: ReadonlyArray<{ event: string; matcher?: string }> = [
  { event: 'UserPromptSubmit' },
  { event: 'SessionStart', matcher: 'resume|compact' },
  { event: 'PreCompact' },
  { event: 'PostCompact' },
  { event: 'Stop' },
  { event: 'PostToolUse', matcher: '*' },
];

/** The Codex events registered (its hook protocol: no compaction events for command hooks). */
export const CODEX_EVENTS: ReadonlyArray<{ event: string; matcher?: string }> = [
  { event: 'UserPromptSubmit' },
  { event: 'SessionStart', matcher: 'resume' },
  { event: 'Stop' },
  { event: 'PostToolUse', matcher: 'Bash' },
];

type Json = Record<string, unknown>;

/** A matcher group of a harness's `hooks` table. */
interface MatcherGroup {
  matcher?: string;
  hooks: Json[];
}

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Check an environment variable name (it is interpolated by Claude Code). */
function checkEnvName(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`--key-env must be an environment variable name, got '${name}'`);
  return name;
}

/**
 * The `hooks` table of Claude Code settings for a gateway: one `http` hook per event of
 * {@link CLAUDE_EVENTS}, `Authorization: Bearer $<keyEnv>` with `allowedEnvVars: [keyEnv]`
 * (the key is never written into the file).
 */
export function claudeHooks(url: string, opts: { keyEnv?: string; timeoutS?: number } = {}): Record<string, MatcherGroup[]> {
  const keyEnv = checkEnvName(opts.keyEnv ?? DEFAULT_KEY_ENV);
  const hookUrl = `${normalizeGatewayUrl(url)}${HOOK_ROUTES['claude-code']}`;
  const out: Record<string, MatcherGroup[]> = {};
  for (const { event, matcher } of CLAUDE_EVENTS) {
    const hook = { type: 'http', url: hookUrl, headers: { Authorization: `Bearer $${keyEnv}` }, allowedEnvVars: [keyEnv], timeout: opts.timeoutS ?? DEFAULT_HOOK_TIMEOUT_S };
    out[event] = [{ ...(matcher === undefined ? {} : { matcher }), hooks: [hook] }];
  }
  return out;
}

/**
 * The `hooks` table of a Codex `hooks.json`: one command hook per event of {@link CODEX_EVENTS}
 * running `command` (e.g. `node /…/bin.js hook codex --url http://127.0.0.1:1933`).
 */
export function codexHooks(command: string, opts: { timeoutS?: number } = {}): Record<string, MatcherGroup[]> {
  const out: Record<string, MatcherGroup[]> = {};
  for (const { event, matcher } of CODEX_EVENTS) {
    out[event] = [{ ...(matcher === undefined ? {} : { matcher }), hooks: [{ type: 'command', command, timeout: opts.timeoutS ?? DEFAULT_HOOK_TIMEOUT_S }] }];
  }
  return out;
}

/** Whether a hook entry is one of ours (so a second `--write` replaces it instead of adding a twin). */
function isCtxmeshHook(h: unknown): boolean {
  if (!isObject(h)) return false;
  if (h.type === 'http' && typeof h.url === 'string') return /\/hooks\/(claude-code|codex)$/.test(h.url);
  if (h.type === 'command' && typeof h.command === 'string') return /\bhook (claude-code|codex)\b/.test(h.command) && h.command.includes('ctxmesh');
  return false;
}

/**
 * Merge a generated `hooks` table into existing settings, keeping everything there: other
 * keys, other events, other hooks of the same events. Earlier ctxmesh hooks are replaced
 * (a matcher group left empty by that is dropped).
 * @throws Error when `settings.hooks` (or one event's list) is not the shape Claude Code and Codex use
 */
export function mergeHooks(settings: Json, generated: Record<string, MatcherGroup[]>): Json {
  const hooks = settings.hooks ?? {};
  if (!isObject(hooks)) throw new Error('the settings file has a "hooks" value that is not an object; fix or remove it first');
  const merged: Json = { ...hooks };
  for (const [event, groups] of Object.entries(generated)) {
    const existing = merged[event] ?? [];
    if (!Array.isArray(existing)) throw new Error(`the settings file's hooks.${event} is not a list; fix or remove it first`);
    const kept = existing
      .map((g: unknown) => (isObject(g) && Array.isArray(g.hooks) ? { ...g, hooks: g.hooks.filter((h) => !isCtxmeshHook(h)) } : g))
      .filter((g: unknown) => !(isObject(g) && Array.isArray(g.hooks) && g.hooks.length === 0));
    merged[event] = [...kept, ...groups];
  }
  return { ...settings, hooks: merged };
}

/**
 * Merge into the JSON file at `path` (created with its directory when missing), atomically.
 * @returns the number of events written
 * @throws Error when the file exists and is not a JSON object (it is left as it is)
 */
export async function writeHooksFile(path: string, generated: Record<string, MatcherGroup[]>): Promise<number> {
  let current: Json = {};
  const text = await readFile(path, 'utf8').catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return null;
    throw e;
  });
  if (text !== null && text.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new Error(`${path} is not valid JSON (${(e as Error).message}); nothing written`);
    }
    if (!isObject(parsed)) throw new Error(`${path} is not a JSON object; nothing written`);
    current = parsed;
  }
  const next = mergeHooks(current, generated);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`);
  await rename(tmp, path);
  return Object.keys(generated).length;
}

/** Options of {@link forwardHook}. */
export interface ForwardOptions {
  /** Gateway base URL. */
  url: string;
  /** Sent as Bearer when set. */
  apiKey?: string;
  /** Whole-call timeout, ms. @default 3000 */
  timeoutMs?: number;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
}

/**
 * Forward a hook's stdin to the gateway and return what the hook should print: the route's
 * JSON answer on a 2xx, else `{}` (a refused or failed call, a timeout, a body that is not
 * JSON) together with the reason for stderr. Never throws.
 */
export async function forwardHook(harness: HookHarness, input: string, opts: ForwardOptions): Promise<{ stdout: string; problem: string | null }> {
  const empty = (problem: string) => ({ stdout: '{}', problem });
  let url: string;
  try {
    url = `${normalizeGatewayUrl(opts.url)}${HOOK_ROUTES[harness]}`;
  } catch (e) {
    return empty((e as Error).message);
  }
  try {
    const res = await (opts.fetch ?? fetch)(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
      body: input,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 3000),
    });
    const text = await res.text();
    if (!res.ok) return empty(`${url} answered ${res.status}: ${text.slice(0, 200)}`);
    const parsed: unknown = JSON.parse(text);
    if (!isObject(parsed)) return empty(`${url} answered something other than a JSON object`);
    return { stdout: JSON.stringify(parsed), problem: null };
  } catch (e) {
    return empty(`${url}: ${(e as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------
// The commands

type Env = Record<string, string | undefined>;
type Flags = Readonly<Record<string, string | boolean | undefined>>;

const VALUE = { type: 'string' } as const;
const SWITCH = { type: 'boolean' } as const;

/** `ctxmesh hooks` options. */
export const HOOKS_OPTIONS = { url: VALUE, 'key-env': VALUE, timeout: VALUE, write: SWITCH, settings: VALUE, help: { type: 'boolean', short: 'h' } } as const;

/** `ctxmesh hook` options. */
export const HOOK_OPTIONS = { url: VALUE, 'api-key': VALUE, 'timeout-ms': VALUE } as const;

/** `ctxmesh hooks --help`. */
export const HOOKS_HELP = `usage: ctxmesh hooks claude-code|codex [options]

Print the harness's hook configuration for a ctxmesh gateway, or merge it into the settings
file with --write (everything already there is kept; earlier ctxmesh hooks are replaced).

  claude-code   "type": "http" hooks posting to <url>/hooks/claude-code: UserPromptSubmit,
                SessionStart (resume|compact), PreCompact, PostCompact, Stop, PostToolUse.
                The key is read by Claude Code from $CTXMESH_API_KEY (allowedEnvVars), never
                written into the file. Default file: ./.claude/settings.json
  codex         command hooks running "ctxmesh hook codex" (UserPromptSubmit, SessionStart
                resume, Stop, PostToolUse Bash); enable them with [features] codex_hooks = true
                in ~/.codex/config.toml. Default file: ./.codex/hooks.json

options:
  --url URL         the gateway (default $CTXMESH_URL, else http://127.0.0.1:$GATEWAY_PORT, 1933)
  --key-env NAME    the variable holding the key (default CTXMESH_API_KEY)
  --timeout S       the harness's hook timeout, seconds (default ${DEFAULT_HOOK_TIMEOUT_S})
  --write           merge into the settings file instead of printing
  --settings PATH   the settings file --write merges into`;

function gatewayUrlOf(flags: Flags, env: Env): string {
  if (flags.url === true) throw new Error('--url needs a value: --url http://host:port or --url host:port');
  const raw = (typeof flags.url === 'string' ? flags.url : undefined) ?? env.CTXMESH_URL ?? `http://127.0.0.1:${env.GATEWAY_PORT ?? '1933'}`;
  return normalizeGatewayUrl(raw);
}

/** A word for a POSIX shell command line. */
function shellWord(s: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * `ctxmesh hooks claude-code|codex`.
 * @param io where to write, the working directory and this CLI's own entry point (for Codex's command)
 */
export async function hooksCommand(
  positionals: string[],
  flags: Flags,
  env: Env,
  io: { out: (s: string) => void; err: (s: string) => void; cwd: string; bin: string; node: string },
): Promise<number> {
  if (flags.help === true || positionals[0] === 'help') {
    io.out(`${HOOKS_HELP}\n`);
    return 0;
  }
  const harness = positionals[0];
  if (harness !== 'claude-code' && harness !== 'codex') throw new Error('hooks needs a harness: ctxmesh hooks claude-code|codex');
  const url = gatewayUrlOf(flags, env);
  let timeoutS: number | undefined;
  if (typeof flags.timeout === 'string') {
    if (!/^\d+$/.test(flags.timeout) || Number(flags.timeout) < 1 || Number(flags.timeout) > 600) throw new Error('--timeout must be a whole number of seconds from 1 to 600');
    timeoutS = Number(flags.timeout);
  }
  const keyEnv = typeof flags['key-env'] === 'string' ? flags['key-env'] : undefined;
  const generated =
    harness === 'claude-code'
      ? claudeHooks(url, { keyEnv, timeoutS })
      : codexHooks([io.node, io.bin, 'hook', 'codex', '--url', url].map(shellWord).join(' '), { timeoutS });
  if (flags.write !== true) {
    io.out(`${JSON.stringify({ hooks: generated }, null, 2)}\n`);
    return 0;
  }
  const { resolve } = require('node:path') as typeof import('node:path');
  const path = typeof flags.settings === 'string' ? resolve(io.cwd, flags.settings) : resolve(io.cwd, harness === 'claude-code' ? '.claude/settings.json' : '.codex/hooks.json');
  const n = await writeHooksFile(path, generated);
  io.err(`ctxmesh: wrote ${n} ${harness} hooks for ${url} into ${path}\n`);
  if (harness === 'claude-code' && !env[keyEnv ?? DEFAULT_KEY_ENV]) io.err(`ctxmesh: Claude Code sends the key from $${keyEnv ?? DEFAULT_KEY_ENV} (unset here; not needed with CTXMESH_AUTH_MODE=dev)\n`);
  if (harness === 'codex') io.err('ctxmesh: Codex runs hooks only with [features] codex_hooks = true in ~/.codex/config.toml\n');
  return 0;
}

/** Read all of a stream (a hook's stdin). */
export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** `ctxmesh hook claude-code|codex`: stdin → the route → stdout; always exit 0. */
export async function hookCommand(positionals: string[], flags: Flags, env: Env, io: { input: string; out: (s: string) => void; err: (s: string) => void }): Promise<number> {
  const harness = positionals[0];
  if (harness !== 'claude-code' && harness !== 'codex') throw new Error('hook needs a harness: ctxmesh hook claude-code|codex');
  let timeoutMs = 3000;
  if (typeof flags['timeout-ms'] === 'string') {
    if (!/^\d+$/.test(flags['timeout-ms'])) throw new Error('--timeout-ms must be a whole number of milliseconds');
    timeoutMs = Number(flags['timeout-ms']);
  }
  let url: string;
  try {
    url = gatewayUrlOf(flags, env);
  } catch (e) {
    io.out('{}\n');
    io.err(`ctxmesh hook: ${(e as Error).message}\n`);
    return 0;
  }
  const apiKey = (typeof flags['api-key'] === 'string' ? flags['api-key'] : undefined) ?? env.CTXMESH_API_KEY;
  const r = await forwardHook(harness, io.input, { url, apiKey, timeoutMs });
  io.out(`${r.stdout}\n`);
  if (r.problem) io.err(`ctxmesh hook: ${r.problem}\n`);
  return 0;
}
