/**
 * A small JSON client for the gateway's REST API (the CLI's ingest and search use it).
 */

/** Error from the gateway, with its HTTP status and contract error code. */
export class GatewayError extends Error {
  override readonly name = 'GatewayError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

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

/** True when a gateway answers /health at `url`. */
export async function isUp(url: string, timeoutMs = 800): Promise<boolean> {
  try {
    const res = await fetch(new URL('/health', url), { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}
