/**
 * Gateway configuration from the environment, validated at start with every problem listed
 * at once (STYLE B7). `main.ts` is the only caller that passes `process.env`.
 */
import { realpathSync, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';
import type { CallerRole } from '@ctxmesh/kernel';
import type { ApiKeyIdentity, AuthConfig } from './domain';

/** Schema: env var name → parser. */
export const schema = {
  /** HTTP port (0 = any free port). OpenViking's default port, so plugins find it unchanged. */
  GATEWAY_PORT: env.port(1933),
  /** Bind host. `ctxmesh serve gateway` runs in a container, hence all interfaces. */
  GATEWAY_HOST: env.str('0.0.0.0'),
  /** Orchestrator `host:port`. */
  ORCHESTRATOR_ADDR: env.addr('127.0.0.1:50061'),
  /** Sessions service `host:port`. */
  SESSIONS_ADDR: env.addr('127.0.0.1:50067'),
  /** `dev` | `api_key` | `trusted` (context-contract "Identity"). */
  CTXMESH_AUTH_MODE: env.oneOf(['dev', 'api_key', 'trusted'] as const, 'dev'),
  /**
   * API key table for `api_key` mode: `key=account:user[:role]` entries separated by commas,
   * or a JSON object `{"<key>": {"account_id", "user_id", "role"?}}`.
   */
  CTXMESH_API_KEYS: env.optStr(),
  /** Budget of a request that sends no `X-Request-Timeout-Ms`, ms. */
  CTXMESH_REQUEST_TIMEOUT_MS: env.int(60_000, 1, 600_000),
  /** Upper bound on any request's budget, ms (a larger header is clamped to it). */
  CTXMESH_MAX_REQUEST_TIMEOUT_MS: env.int(120_000, 1, 600_000),
  /** Largest accepted request body, bytes (a larger one is a 413 naming the limit). */
  GATEWAY_BODY_LIMIT_BYTES: env.int(8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
  /** Largest document a write may carry (`content`, UTF-8 bytes): what one write may cost the indexer. */
  CTXMESH_MAX_DOCUMENT_BYTES: env.int(4 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  /** Time to receive a request's headers, ms (a slow sender's connection is closed). */
  GATEWAY_HEADERS_TIMEOUT_MS: env.int(10_000, 100, 600_000),
  /** Time to receive a whole request, headers and body, ms (a body trickling in is answered 408 and closed). */
  GATEWAY_REQUEST_TIMEOUT_MS: env.int(30_000, 100, 600_000),
  /** NATS servers (the event bus); required by `ctxmesh serve gateway`. */
  NATS_URL: env.optStr(),
  /** Subject the gateway publishes writes on; the indexer's CTXMESH_INGEST_SUBJECTS must cover it. */
  CTXMESH_INGEST_SUBJECT: env.str('ctxmesh.ingest.write'),
  /** JetStream stream of ingest writes (shared with the indexer). */
  CTXMESH_INGEST_STREAM: env.str('CTXMESH_INGEST'),
  /** Core NATS prefix of the indexer's done notices (shared with the indexer). */
  CTXMESH_INGEST_DONE_PREFIX: env.str('ctxmesh.done.ingest'),
  /** Dead-letter subject of the ingest stream (shared with the indexer). */
  CTXMESH_INGEST_DLQ_SUBJECT: env.str('ctxmesh.dlq.ingest'),
  /** Time a hook answer (`/hooks/*`) may take, ms; later is an empty 200. Well under Claude Code's hook timeout. */
  CTXMESH_HOOK_BUDGET_MS: env.int(1500, 50, 60_000),
  /** `dedup_turns` of the context a hook's prompt gets (the plugins' 5). */
  CTXMESH_HOOK_DEDUP_TURNS: env.int(5, 0, 1000),
  /** Largest carry-on block a resumed or compacted session gets, characters. */
  CTXMESH_HOOK_CARRY_CHARS: env.int(8000, 500, 200_000),
  /** A directory under which hooks may read `transcript_path` (absolute, existing); unset: transcripts are never read. */
  CTXMESH_HOOK_TRANSCRIPT_ROOT: env.optStr(),
};

/** Parsed configuration. */
export interface GatewayConfig {
  port: number;
  host: string;
  orchestratorAddr: string;
  sessionsAddr: string;
  /** Authentication mode and, for `api_key`, the key table. */
  auth: AuthConfig;
  /** Request budgets in ms. */
  deadlines: DeadlineConfig;
  /** @default 8 MiB */
  bodyLimitBytes: number;
  /** @default 4 MiB */
  maxDocumentBytes: number;
  /** Header and whole-request receive timeouts, ms. @default { headersMs: 10000, requestMs: 30000 } */
  receive: ReceiveTimeouts;
  /** NATS servers, or undefined when unset. */
  natsUrl: string | undefined;
  /** Event-bus names shared with the indexer. */
  ingest: { stream: string; subject: string; doneSubjectPrefix: string; deadLetterSubject: string };
  /** The harness hook routes. */
  hooks: HooksConfig;
}

/** The harness hook routes (`/hooks/claude-code`, `/hooks/codex`). */
export interface HooksConfig {
  /** Time an answer may take, ms; later is an empty 200. @default 1500 */
  budgetMs: number;
  /** `dedup_turns` of a prompt's context. @default 5 */
  dedupTurns: number;
  /** Largest carry-on block, characters. @default 8000 */
  carryChars: number;
  /** Resolved root under which `transcript_path` may be read; null: never read. @default null */
  transcriptRoot: string | null;
}

/** Hook settings when none are configured (tests, embedders). */
export const DEFAULT_HOOKS: HooksConfig = Object.freeze({ budgetMs: 1500, dedupTurns: 5, carryChars: 8000, transcriptRoot: null });

/**
 * Resolve CTXMESH_HOOK_TRANSCRIPT_ROOT: absolute, an existing directory, symlinks resolved.
 * @returns the real path, or a problem line
 */
export function resolveTranscriptRoot(raw: string): { root: string } | { problem: string } {
  if (!isAbsolute(raw)) return { problem: 'CTXMESH_HOOK_TRANSCRIPT_ROOT: must be an absolute path' };
  try {
    const root = realpathSync(raw);
    if (!statSync(root).isDirectory()) return { problem: 'CTXMESH_HOOK_TRANSCRIPT_ROOT: not a directory' };
    return { root };
  } catch {
    return { problem: 'CTXMESH_HOOK_TRANSCRIPT_ROOT: no such directory' };
  }
}

/** How long the gateway waits for a request to arrive (against slow senders). */
export interface ReceiveTimeouts {
  /** Headers, ms. @default 10000 */
  headersMs: number;
  /** Headers and body, ms. @default 30000 */
  requestMs: number;
}

/** Request budgets (STYLE B5: never wait forever). */
export interface DeadlineConfig {
  /** Budget when `X-Request-Timeout-Ms` is absent or unparsable, ms. @default 60000 */
  defaultMs: number;
  /** Clamp of any request budget, ms. @default 120000 */
  maxMs: number;
}

const ROLES: readonly CallerRole[] = ['root', 'admin', 'user'];
const ID = /^[A-Za-z0-9_.@-]+$/;

/**
 * Parse the API key table (see {@link schema} `CTXMESH_API_KEYS`).
 * @returns the table and one line per problem (an empty list when valid)
 */
export function parseApiKeys(raw: string): { keys: Map<string, ApiKeyIdentity>; problems: string[] } {
  const keys = new Map<string, ApiKeyIdentity>();
  const problems: string[] = [];
  const add = (key: string, accountId: unknown, userId: unknown, role: unknown, where: string) => {
    if (key === '') problems.push(`CTXMESH_API_KEYS: ${where}: empty key`);
    else if (keys.has(key)) problems.push(`CTXMESH_API_KEYS: ${where}: duplicate key`);
    if (typeof accountId !== 'string' || !ID.test(accountId)) problems.push(`CTXMESH_API_KEYS: ${where}: account must match ${ID.source}`);
    if (typeof userId !== 'string' || !ID.test(userId)) problems.push(`CTXMESH_API_KEYS: ${where}: user must match ${ID.source}`);
    if (role !== undefined && !(ROLES as readonly unknown[]).includes(role)) problems.push(`CTXMESH_API_KEYS: ${where}: role must be one of ${ROLES.join(', ')}`);
    keys.set(key, { accountId: String(accountId), userId: String(userId), role: (role as CallerRole | undefined) ?? 'user' });
  };
  const text = raw.trim();
  if (text.startsWith('{')) {
    let table: unknown;
    try {
      table = JSON.parse(text);
    } catch (e) {
      return { keys, problems: [`CTXMESH_API_KEYS: not valid JSON (${(e as Error).message})`] };
    }
    if (typeof table !== 'object' || table === null || Array.isArray(table)) return { keys, problems: ['CTXMESH_API_KEYS: the JSON form must be an object of key → identity'] };
    for (const [key, v] of Object.entries(table)) {
      const o = (typeof v === 'object' && v !== null ? v : {}) as Record<string, unknown>;
      add(key, o.account_id ?? o.account, o.user_id ?? o.user, o.role, `key #${keys.size + 1}`);
    }
  } else {
    text.split(',').forEach((entry, i) => {
      const e = entry.trim();
      const eq = e.indexOf('=');
      // Never echo the key itself: the message ends up in logs.
      if (eq < 0) {
        problems.push(`CTXMESH_API_KEYS: entry #${i + 1}: expected key=account:user[:role]`);
        return;
      }
      const [account, user, role, ...rest] = e.slice(eq + 1).split(':');
      if (rest.length > 0) problems.push(`CTXMESH_API_KEYS: entry #${i + 1}: expected key=account:user[:role]`);
      add(e.slice(0, eq).trim(), account, user, role === undefined || role === '' ? undefined : role, `entry #${i + 1}`);
    });
  }
  if (problems.length === 0 && keys.size === 0) problems.push('CTXMESH_API_KEYS: no keys');
  return { keys, problems };
}

/**
 * Parse and validate the gateway's environment.
 * @throws ConfigError listing every problem (including cross-field ones: `api_key` mode
 *   without keys, a default budget above the maximum)
 */
export function loadGatewayConfig(e: Env): GatewayConfig {
  const problems: string[] = [];
  let c: ReturnType<typeof loadConfig<typeof schema>> | undefined;
  try {
    c = loadConfig(schema, e);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  let auth: AuthConfig = { mode: 'dev' };
  const mode = c?.CTXMESH_AUTH_MODE ?? e.CTXMESH_AUTH_MODE?.trim();
  if (mode === 'api_key') {
    const raw = e.CTXMESH_API_KEYS?.trim();
    if (!raw) problems.push('CTXMESH_API_KEYS: required when CTXMESH_AUTH_MODE=api_key');
    else {
      const parsed = parseApiKeys(raw);
      problems.push(...parsed.problems);
      auth = { mode: 'api_key', keys: parsed.keys };
    }
  } else if (mode === 'trusted') auth = { mode: 'trusted' };
  if (c && c.CTXMESH_REQUEST_TIMEOUT_MS > c.CTXMESH_MAX_REQUEST_TIMEOUT_MS) {
    problems.push('CTXMESH_REQUEST_TIMEOUT_MS: must be ≤ CTXMESH_MAX_REQUEST_TIMEOUT_MS');
  }
  if (c && c.GATEWAY_HEADERS_TIMEOUT_MS > c.GATEWAY_REQUEST_TIMEOUT_MS) {
    problems.push('GATEWAY_HEADERS_TIMEOUT_MS: must be ≤ GATEWAY_REQUEST_TIMEOUT_MS');
  }
  let transcriptRoot: string | null = null;
  // From the raw environment too: another variable's problem must not hide this one (every problem at once).
  const rawRoot = (c?.CTXMESH_HOOK_TRANSCRIPT_ROOT ?? e.CTXMESH_HOOK_TRANSCRIPT_ROOT)?.trim();
  if (rawRoot) {
    const r = resolveTranscriptRoot(rawRoot);
    if ('problem' in r) problems.push(r.problem);
    else transcriptRoot = r.root;
  }
  if (problems.length > 0 || !c) throw new ConfigError(problems);
  return Object.freeze({
    port: c.GATEWAY_PORT,
    host: c.GATEWAY_HOST,
    orchestratorAddr: c.ORCHESTRATOR_ADDR,
    sessionsAddr: c.SESSIONS_ADDR,
    auth,
    deadlines: { defaultMs: c.CTXMESH_REQUEST_TIMEOUT_MS, maxMs: c.CTXMESH_MAX_REQUEST_TIMEOUT_MS },
    bodyLimitBytes: c.GATEWAY_BODY_LIMIT_BYTES,
    maxDocumentBytes: c.CTXMESH_MAX_DOCUMENT_BYTES,
    receive: { headersMs: c.GATEWAY_HEADERS_TIMEOUT_MS, requestMs: c.GATEWAY_REQUEST_TIMEOUT_MS },
    natsUrl: c.NATS_URL,
    ingest: { stream: c.CTXMESH_INGEST_STREAM, subject: c.CTXMESH_INGEST_SUBJECT, doneSubjectPrefix: c.CTXMESH_INGEST_DONE_PREFIX, deadLetterSubject: c.CTXMESH_INGEST_DLQ_SUBJECT },
    hooks: Object.freeze({ budgetMs: c.CTXMESH_HOOK_BUDGET_MS, dedupTurns: c.CTXMESH_HOOK_DEDUP_TURNS, carryChars: c.CTXMESH_HOOK_CARRY_CHARS, transcriptRoot }),
  });
}
