/**
 * `/mcp`: the MCP endpoint (streamable HTTP, context-contract §1.5), mounted on the
 * authenticated scope so it shares the REST auth and identity: the scope's hook has resolved
 * the caller (or answered 401/400 in the contract's envelope) before MCP sees the request.
 *
 * Stateless: every POST gets a fresh MCP server and transport (`sessionIdGenerator:
 * undefined`) answering with plain JSON, so any gateway replica can serve any call. There is
 * no server-initiated stream, so GET and DELETE answer 405 as the transport spec allows.
 */
import type { ServerResponse } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DeadlineConfig } from '../config';
import { budgetOf, callerOf, elapsedMs } from '../http/context';
import { createMcpServer, type McpToolDeps } from './tools';

/** Path of the endpoint. */
export const MCP_PATH = '/mcp';

/** JSON-RPC body of a 405 (no session, no standalone stream in stateless mode). */
const METHOD_NOT_ALLOWED = { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this MCP endpoint is stateless; send POST.' }, id: null };

/** `X-Process-Time` as the app's other responses write it (Python `str(float)` seconds). */
function seconds(ms: number): string {
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}.0` : String(s);
}

/**
 * Hand the raw response to the transport but keep the gateway's response headers: the
 * Fastify `onSend` hook does not run for a hijacked reply, so `X-Request-ID` is set now and
 * `X-Process-Time` when the transport writes its head.
 */
function stampHeaders(request: FastifyRequest, raw: ServerResponse): void {
  raw.setHeader('x-request-id', request.id);
  const writeHead = raw.writeHead;
  raw.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!this.headersSent) this.setHeader('x-process-time', seconds(elapsedMs(request)));
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

/** What the MCP endpoint needs. */
export interface McpRouteDeps {
  /** The orchestrator: the tools' searches and reads. */
  orchestrator: McpToolDeps['orchestrator'];
  /** Request budgets (`X-Request-Timeout-Ms`, clamped; the default when absent). */
  deadlines: DeadlineConfig;
  /** "Now", ms since the epoch (relative times). @default Date.now */
  now?: () => number;
  /** Version reported in `initialize`. @default "0.0.0" */
  version?: string;
}

/** Mount `/mcp` on an authenticated scope (one MCP server per request). */
export function mcpRoutes(api: FastifyInstance, deps: McpRouteDeps): void {
  const now = deps.now ?? Date.now;

  api.post(MCP_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
    const server = createMcpServer({
      orchestrator: deps.orchestrator,
      caller: callerOf(request),
      budget: () => budgetOf(request, deps.deadlines),
      now,
      log: request.log,
      version: deps.version ?? '0.0.0',
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The server and transport live exactly as long as this response.
    reply.raw.once('close', () => {
      void server.close().catch((err: unknown) => request.log.warn({ err }, 'mcp server close failed'));
    });
    await server.connect(transport);
    reply.hijack();
    stampHeaders(request, reply.raw);
    try {
      // The body was parsed by the app's JSON parser (a malformed body was already a 400).
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (err) {
      request.log.error({ err }, 'mcp transport failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'internal error' }, id: null }));
      } else if (!reply.raw.writableEnded) reply.raw.end();
    }
  });

  const notAllowed = async (_request: FastifyRequest, reply: FastifyReply) => reply.code(405).header('allow', 'POST').send(METHOD_NOT_ALLOWED);
  api.get(MCP_PATH, notAllowed);
  api.delete(MCP_PATH, notAllowed);
}
