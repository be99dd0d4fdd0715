/**
 * A small JSON client for the gateway's REST API (the CLI's ingest and search use it).
 */
import { GatewayError, GatewayUrlError } from './errors';

export { GatewayError, GatewayUrlError };

/** Client options. */
export interface ClientOptions {
  /** Base URL, e.g. http://127.0.0.1:1933. */
  url: string;
  /** API key (sent as Bearer). */
  apiKey?: string;
  /** Per-request timeout in ms. @default 60000 */
  timeoutMs?: number;
}

/** Call the gateway and unwrap the `{status, result}` envelope. */
export async function callGateway<T>(opts: ClientOptions, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  headers['x-request-timeout-ms'] = String(timeoutMs);
  const res = await fetch(new URL(path, opts.url), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs + 1000),
  });
  const text = await res.text();
  let json: { status?: string; result?: T; error?: { code?: string; message?: string } } = {};
  try {
    json = JSON.parse(text) as typeof json;
  } catch {
    throw new GatewayError(res.status, 'BAD_RESPONSE', `gateway answered ${res.status} with a non-JSON body`);
  }
  if (!res.ok || json.status === 'error') {
    throw new GatewayError(res.status, json.error?.code ?? 'HTTP_' + res.status, json.error?.message ?? `HTTP ${res.status}`);
  }
  return json.result as T;
}

/** True when something answers /health at `url` with a 2xx (the `probe` command). */
export async function isUp(url: string, timeoutMs = 800): Promise<boolean> {
  try {
    const res = await fetch(new URL('/health', url), { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * A gateway address as typed by a user: `127.0.0.1:19433` and `localhost:1933` gain `http://`;
 * a trailing slash is dropped.
 * @throws GatewayUrlError when the result is not an http(s) URL
 */
export function normalizeGatewayUrl(raw: string): string {
  const trimmed = raw.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    throw new GatewayUrlError(`not a gateway URL: '${raw}' (expected http://host:port or host:port)`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new GatewayUrlError(`not a gateway URL: '${raw}' (only http and https)`);
  return withScheme.replace(/\/+$/, '');
}

/** What `/health` says about the server at a URL. */
export interface GatewayIdentity {
  /** The normalised URL that answered. */
  url: string;
  /** `name` from `/health` (always `ctxmesh` here). */
  name: string;
  /** `version` from `/health`. */
  version: string;
}

/**
 * Ask `url` who it is: `GET /health` must answer JSON with `name: "ctxmesh"`.
 * @param timeoutMs how long to wait for the answer. @default 2000
 * @throws GatewayUrlError (one line naming the URL) when nothing answers, the answer is not
 *   JSON, or it is not a ctxmesh gateway
 */
export async function identifyGateway(url: string, timeoutMs = 2000): Promise<GatewayIdentity> {
  let res: Response;
  try {
    res = await fetch(new URL('/health', url), { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
    throw new GatewayUrlError(`no ctxmesh gateway answers at ${url} (${why})`);
  }
  const text = await res.text();
  let body: { name?: unknown; version?: unknown; healthy?: unknown } = {};
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    /* handled below: not JSON is not a gateway */
  }
  if (typeof body !== 'object' || body === null || body.name !== 'ctxmesh') {
    throw new GatewayUrlError(`${url} answered /health with HTTP ${res.status} but is not a ctxmesh gateway`);
  }
  return { url, name: body.name, version: typeof body.version === 'string' ? body.version : 'unknown' };
}
