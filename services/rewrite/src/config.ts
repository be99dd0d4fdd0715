/**
 * rewrite configuration: the chat model (expansion, digest, query rewrite), the `/rerank`
 * endpoint and the fuses. Validated at start with every problem listed at once, including
 * the cross-field ones (a model name without an endpoint is as wrong as a bad URL).
 */
import { openAiUrl } from '@ctxmesh/provider';
import { ConfigError, env, loadConfig, type Env } from '@ctxmesh/runtime';

/** Upper bound on every fuse, in ms (10 minutes: a fuse is a bound, not a wish). */
const MAX_FUSE_MS = 600_000;

// Keys and model names are checked in `formatProblems` (with the cross-field rules), so that
// this package needs no schema library of its own.
const apiKey = () => env.optStr();
const modelName = () => env.optStr();
const fuse = (def: number) => env.int(def, 1, MAX_FUSE_MS);

/** Schema: env var name → parser. */
export const schema = {
  /** gRPC port. @default 50066 */
  REWRITE_PORT: env.port(50066),
  /** Bind host. @default 127.0.0.1 */
  REWRITE_HOST: env.str('127.0.0.1'),
  /**
   * OpenAI-compatible chat endpoint: a full `…/chat/completions` URL, a base ending in
   * `/v1`, or a bare base (`/v1/chat/completions` is appended). Unset = no model: expansion
   * off, extractive digest.
   */
  CTXMESH_LLM_URL: env.optUrl(['http', 'https']),
  /** Bearer key of the chat endpoint (optional: local servers need none). */
  CTXMESH_LLM_API_KEY: apiKey(),
  /** Chat model name; required with CTXMESH_LLM_URL. */
  CTXMESH_LLM_MODEL: modelName(),
  /** Intent analysis (query expansion); false answers ExpandQuery with `off`. @default true */
  CTXMESH_ENABLE_INTENT: env.bool(true),
  /** Query expansion fuse in ms (context-contract §8.1). @default 5000 */
  CTXMESH_EXPANSION_TIMEOUT_MS: fuse(5000),
  /** Digest rewrite fuse in ms (context-contract §8.2). @default 30000 */
  CTXMESH_REWRITE_TIMEOUT_MS: fuse(30_000),
  /** Retrieve query-rewrite fuse in ms (retrieve-contract "Stages"). @default 6000 */
  SEARCH_QUERY_REWRITE_TIMEOUT_MS: fuse(6000),
  /** Cross-encoder rerank fuse in ms (retrieve-contract "Stages"). @default 8000 */
  SEARCH_RERANKING_TIMEOUT_MS: fuse(8000),
  /**
   * Jina/Cohere/TEI-style rerank endpoint: a full `…/rerank` URL, or a base (`/rerank` is
   * appended). Unset = Rerank answers `off`.
   */
  CTXMESH_RERANK_URL: env.optUrl(['http', 'https']),
  /** Bearer key of the rerank endpoint (optional). */
  CTXMESH_RERANK_API_KEY: apiKey(),
  /** Rerank model name; required with CTXMESH_RERANK_URL unless the style is `tei`. */
  CTXMESH_RERANK_MODEL: modelName(),
  /**
   * Request body style: `documents` sends `{model, query, documents, top_n}` (Jina, Cohere,
   * vLLM, Infinity); `tei` sends `{query, texts, raw_scores:false}` (HuggingFace TEI, which
   * serves one model and names the field `texts`). Both response shapes are always accepted.
   * @default documents
   */
  CTXMESH_RERANK_STYLE: env.oneOf(['documents', 'tei'] as const, 'documents'),
};

/** Raw parsed configuration (env var names). */
export type RewriteEnvConfig = ReturnType<typeof parseEnv>;

function parseEnv(e: Env) {
  return loadConfig(schema, e);
}

/** A chat model endpoint. */
export interface ChatEndpoint {
  /** Resolved `…/chat/completions` URL. */
  readonly url: string;
  /** Bearer key ("" = none). */
  readonly apiKey: string;
  /** Model name sent in every request. */
  readonly model: string;
}

/** A rerank endpoint. */
export interface RerankEndpoint {
  /** Resolved `…/rerank` URL. */
  readonly url: string;
  /** Bearer key ("" = none). */
  readonly apiKey: string;
  /** Model name ("" only for the `tei` style). */
  readonly model: string;
  /** Request body style (see CTXMESH_RERANK_STYLE). */
  readonly style: 'documents' | 'tei';
}

/** What the handlers need: endpoints (null = not configured) and fuses in ms. */
export interface RewriteSettings {
  /** Chat model, or null: expansion off, query rewrite off, extractive digest. */
  readonly llm: ChatEndpoint | null;
  /** Rerank endpoint, or null: Rerank answers `off`. */
  readonly rerank: RerankEndpoint | null;
  /** Query expansion enabled (CTXMESH_ENABLE_INTENT). */
  readonly enableIntent: boolean;
  /** Expansion fuse, ms. @default 5000 */
  readonly expansionTimeoutMs: number;
  /** Digest rewrite fuse, ms. @default 30000 */
  readonly rewriteTimeoutMs: number;
  /** Query rewrite fuse, ms. @default 6000 */
  readonly queryRewriteTimeoutMs: number;
  /** Rerank fuse, ms. @default 8000 */
  readonly rerankTimeoutMs: number;
}

/** Parsed configuration: the raw values, and the settings derived from them. */
export interface RewriteConfig {
  /** Parsed env values. */
  readonly env: RewriteEnvConfig;
  /** Handler settings. */
  readonly settings: RewriteSettings;
}

/** Resolve a chat endpoint as documented on CTXMESH_LLM_URL. */
export function chatCompletionsUrl(url: string): string {
  return openAiUrl(url, 'chat/completions');
}

/** Resolve a rerank endpoint as documented on CTXMESH_RERANK_URL. */
export function rerankUrl(url: string): string {
  const u = url.replace(/\/+$/, '');
  return u.endsWith('/rerank') ? u : `${u}/rerank`;
}

/**
 * Problems of key and model formats, and those that involve more than one variable (read
 * from the same trimmed input as `loadConfig`).
 */
function formatProblems(e: Env): string[] {
  const val = (k: string) => (e[k] ?? '').trim();
  const set = (k: string) => val(k) !== '';
  const problems: string[] = [];
  // A header value must be visible ASCII: a key with a space or a newline would make every
  // request fail at fetch time, so it is rejected at start instead.
  for (const k of ['CTXMESH_LLM_API_KEY', 'CTXMESH_RERANK_API_KEY']) {
    if (set(k) && !/^[\x21-\x7e]+$/.test(val(k))) problems.push(`${k}: must be printable ASCII without spaces`);
  }
  // Provider model ids look like `gpt-4o-mini`, `Qwen/Qwen2.5-7B-Instruct`, `llama3.1:8b`.
  for (const k of ['CTXMESH_LLM_MODEL', 'CTXMESH_RERANK_MODEL']) {
    if (!set(k)) continue;
    if (/\s/.test(val(k))) problems.push(`${k}: must not contain whitespace (got ${JSON.stringify(val(k))})`);
    else if (val(k).length > 200) problems.push(`${k}: must be at most 200 characters`);
  }
  if (set('CTXMESH_LLM_URL') && !set('CTXMESH_LLM_MODEL')) problems.push('CTXMESH_LLM_MODEL: required when CTXMESH_LLM_URL is set');
  for (const k of ['CTXMESH_LLM_MODEL', 'CTXMESH_LLM_API_KEY']) {
    if (set(k) && !set('CTXMESH_LLM_URL')) problems.push(`${k}: set but CTXMESH_LLM_URL is not (no model would be used)`);
  }
  const tei = (e.CTXMESH_RERANK_STYLE ?? '').trim().toLowerCase() === 'tei';
  if (set('CTXMESH_RERANK_URL') && !tei && !set('CTXMESH_RERANK_MODEL')) {
    problems.push('CTXMESH_RERANK_MODEL: required when CTXMESH_RERANK_URL is set (unless CTXMESH_RERANK_STYLE=tei)');
  }
  for (const k of ['CTXMESH_RERANK_MODEL', 'CTXMESH_RERANK_API_KEY']) {
    if (set(k) && !set('CTXMESH_RERANK_URL')) problems.push(`${k}: set but CTXMESH_RERANK_URL is not (no reranker would be used)`);
  }
  return problems;
}

/** Settings from parsed values. */
export function settingsOf(c: RewriteEnvConfig): RewriteSettings {
  return Object.freeze({
    llm:
      c.CTXMESH_LLM_URL && c.CTXMESH_LLM_MODEL
        ? Object.freeze({ url: chatCompletionsUrl(c.CTXMESH_LLM_URL), apiKey: c.CTXMESH_LLM_API_KEY ?? '', model: c.CTXMESH_LLM_MODEL })
        : null,
    rerank: c.CTXMESH_RERANK_URL
      ? Object.freeze({
          url: rerankUrl(c.CTXMESH_RERANK_URL),
          apiKey: c.CTXMESH_RERANK_API_KEY ?? '',
          model: c.CTXMESH_RERANK_MODEL ?? '',
          style: c.CTXMESH_RERANK_STYLE,
        })
      : null,
    enableIntent: c.CTXMESH_ENABLE_INTENT,
    expansionTimeoutMs: c.CTXMESH_EXPANSION_TIMEOUT_MS,
    rewriteTimeoutMs: c.CTXMESH_REWRITE_TIMEOUT_MS,
    queryRewriteTimeoutMs: c.SEARCH_QUERY_REWRITE_TIMEOUT_MS,
    rerankTimeoutMs: c.SEARCH_RERANKING_TIMEOUT_MS,
  });
}

/**
 * Parse and validate.
 * @throws ConfigError listing every problem: per-variable ones (bad URL, key with spaces,
 *   non-positive fuse…) and cross-field ones (URL without model, model without URL…)
 */
export function loadRewriteConfig(e: Env): RewriteConfig {
  const cross = formatProblems(e);
  let parsed: RewriteEnvConfig;
  try {
    parsed = parseEnv(e);
  } catch (err) {
    if (err instanceof ConfigError) throw new ConfigError([...err.problems, ...cross]);
    throw err;
  }
  if (cross.length > 0) throw new ConfigError(cross);
  return Object.freeze({ env: parsed, settings: settingsOf(parsed) });
}

/** Settings with defaults and no endpoints (tests, the all-in-one launcher without a model). */
export function defaultSettings(overrides: Partial<RewriteSettings> = {}): RewriteSettings {
  return Object.freeze({
    llm: null,
    rerank: null,
    enableIntent: true,
    expansionTimeoutMs: 5000,
    rewriteTimeoutMs: 30_000,
    queryRewriteTimeoutMs: 6000,
    rerankTimeoutMs: 8000,
    ...overrides,
  });
}
