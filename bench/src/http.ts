/**
 * A minimal keep-alive JSON client for the gateway. Plain `node:http` with a persistent agent
 * so a latency sample measures the gateway and the mesh behind it, not connection setup or a
 * heavier client library.
 */
import { Agent, request } from 'node:http';

/** A response as the bench needs it. */
export interface JsonResponse {
  status: number;
  /** Parsed body (null when it was not JSON). */
  body: unknown;
  /** Wall time from sending to the last byte, ms. */
  ms: number;
}

/** Thrown for a transport failure (no HTTP response at all). */
export class GatewayUnreachableError extends Error {
  /** The request went out on a reused keep-alive socket that the server had closed (it never reached the server). */
  staleSocket = false;

  constructor(url: string, cause: unknown) {
    super(`no response from ${url}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'GatewayUnreachableError';
  }
}

/** A JSON client bound to one base URL. */
export class JsonClient {
  private readonly agent: Agent;

  /**
   * @param baseUrl e.g. `http://127.0.0.1:1933`
   * @param maxSockets concurrent connections kept alive @default 64
   */
  constructor(
    readonly baseUrl: string,
    maxSockets = 64,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets });
  }

  /**
   * Send one request.
   * @param headers extra headers (identity, workspace…)
   * @param timeoutMs socket inactivity timeout @default 120000
   * @throws GatewayUnreachableError when no response arrives
   */
  async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs = 120_000): Promise<JsonResponse> {
    try {
      return await this.sendOnce(method, path, body, headers, timeoutMs);
    } catch (err) {
      // A keep-alive socket the server closed while it sat idle (a section that ran long in
      // process, past the server's keep-alive timeout) resets on reuse: that request never
      // reached the server, so it is sent once more on a fresh socket (Node's advice).
      if (err instanceof GatewayUnreachableError && err.staleSocket) return this.sendOnce(method, path, body, headers, timeoutMs);
      throw err;
    }
  }

  private sendOnce(method: string, path: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<JsonResponse> {
    const url = new URL(path, this.baseUrl);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = request(
        url,
        {
          method,
          agent: this.agent,
          headers: {
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {}),
            ...headers,
          },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            const ms = performance.now() - t0;
            const text = Buffer.concat(chunks).toString('utf8');
            let parsed: unknown = null;
            try {
              parsed = text === '' ? null : JSON.parse(text);
            } catch {
              parsed = null;
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, ms });
          });
          res.on('error', (err) => reject(new GatewayUnreachableError(url.href, err)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
      req.on('error', (err) => {
        const e = new GatewayUnreachableError(url.href, err);
        e.staleSocket = req.reusedSocket && (err as NodeJS.ErrnoException).code === 'ECONNRESET';
        reject(e);
      });
      if (payload) req.write(payload);
      req.end();
    });
  }

  /** POST a JSON body. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<JsonResponse> {
    return this.send('POST', path, body, headers);
  }

  /** GET a path. */
  get(path: string, headers?: Record<string, string>): Promise<JsonResponse> {
    return this.send('GET', path, undefined, headers);
  }

  /** Close idle sockets. */
  close(): void {
    this.agent.destroy();
  }
}

/**
 * Poll `GET <baseUrl><path>` until it answers 200 or `timeoutMs` passes.
 * @returns ms waited until the first 200, or null when it never came
 */
export async function waitForOk(baseUrl: string, path: string, timeoutMs: number, intervalMs = 25): Promise<number | null> {
  const client = new JsonClient(baseUrl, 1);
  const t0 = performance.now();
  try {
    while (performance.now() - t0 < timeoutMs) {
      try {
        const r = await client.send('GET', path, undefined, {}, 1000);
        if (r.status === 200) return performance.now() - t0;
      } catch {
        // Not listening yet.
      }
      await new Promise((r) => setTimeout(r, intervalMs));
    }
    return null;
  } finally {
    client.close();
  }
}
