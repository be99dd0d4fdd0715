/**
 * A scripted model provider on loopback (real HTTP, port 0): each test says how the next
 * requests are answered (JSON, status, a delay, or never), and the provider records every
 * request and whether the client closed the connection before an answer was sent.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request as the provider received it. */
export interface SeenRequest {
  /** Method. */
  method: string;
  /** Path and query. */
  path: string;
  /** Lower-cased headers. */
  headers: http.IncomingHttpHeaders;
  /** Raw body. */
  raw: string;
  /** Parsed JSON body (undefined when not JSON). */
  body: unknown;
  /** True once the client closed the connection before the answer was complete. */
  aborted: boolean;
}

/** How to answer one request. */
export type Answer =
  | { kind: 'json'; status?: number; body: unknown; delayMs?: number }
  | { kind: 'text'; status?: number; text: string; delayMs?: number }
  | { kind: 'never' };

/** A chat.completion body with one choice. */
export function chatBody(content: string, usage: { prompt_tokens: number; completion_tokens: number } | null = { prompt_tokens: 100, completion_tokens: 20 }): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: 'test-model',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
  };
}

/** The scripted provider. */
export class ScriptedProvider {
  /** Every request, in arrival order. */
  readonly requests: SeenRequest[] = [];
  private queue: Answer[] = [];
  private fallback: Answer = { kind: 'text', status: 599, text: 'no answer scripted' };
  private readonly timers = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: http.Server,
    /** `http://127.0.0.1:<port>`. */
    readonly url: string,
  ) {}

  /** Listen on a free loopback port. */
  static async start(): Promise<ScriptedProvider> {
    let self: ScriptedProvider | undefined;
    const server = http.createServer((req, res) => self!.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    self = new ScriptedProvider(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Answer the next requests with these, in order; afterwards with `always` (if set). */
  script(...answers: Answer[]): this {
    this.queue.push(...answers);
    return this;
  }

  /** Answer every request not covered by `script` with `a`. */
  always(a: Answer): this {
    this.fallback = a;
    return this;
  }

  /** Forget requests and scripts (between tests). */
  reset(): void {
    this.requests.length = 0;
    this.queue = [];
    this.fallback = { kind: 'text', status: 599, text: 'no answer scripted' };
  }

  /** Stop: drop open connections (stalled answers) and close. */
  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const seen: SeenRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body, aborted: false };
      this.requests.push(seen);
      // 'close' before the answer was written completely means the client gave up on us.
      res.on('close', () => {
        if (!res.writableFinished) seen.aborted = true;
      });
      const answer = this.queue.shift() ?? this.fallback;
      if (answer.kind === 'never') return;
      const send = () => {
        if (res.destroyed) return;
        const status = answer.status ?? 200;
        const text = answer.kind === 'json' ? JSON.stringify(answer.body) : answer.text;
        res.writeHead(status, { 'content-type': answer.kind === 'json' ? 'application/json' : 'text/plain' });
        res.end(text);
      };
      if (answer.delayMs) {
        const t = setTimeout(() => {
          this.timers.delete(t);
          send();
        }, answer.delayMs);
        this.timers.add(t);
      } else send();
    });
  }
}
