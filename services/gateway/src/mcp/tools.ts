/**
 * The MCP server of one HTTP request: tools `search` (list or context mode, context-contract
 * §1.5) and `read` (a URI's full text), both routed through the orchestrator as the REST
 * routes are, under the request's caller and Budget.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Budget } from '@ctxmesh/rpc';
import { z } from 'zod';
import type { OrchestratorPort } from '../clients/orchestrator';
import { assertTargetsAccessible, resolveRequestUri, type Caller } from '../domain';
import { renderError } from '../http/errors';
import { protoIdentity } from '../mapping/identity';
import { contextResult, listResult, toAssembleContextRequest, toSearchRequest } from '../mapping/search';
import { mcpSearchParams, type McpSearchArgs } from './params';
import { contextText, listText } from './text';

/** Name the server reports in `initialize`. */
export const MCP_SERVER_NAME = 'ctxmesh';

/** Input schema of `search` (§1.5 parameters; unknown arguments are stripped). */
export const SEARCH_INPUT = {
  query: z.string().describe('What to look for (natural language).'),
  mode: z
    .enum(['list', 'context'])
    .optional()
    .describe('"list" (default): ranked hits with URIs and abstracts. "context": one token-budgeted block of memories, resources and skills, ready to use.'),
  target_uri: z
    .union([z.string(), z.array(z.string())])
    .optional()
    .describe('List mode only: viking:// URI(s) to search under, e.g. viking://~/memories ("~" is your user space). Must be empty in context mode.'),
  session_id: z.string().nullable().optional().describe('Session whose recent messages expand the query (and whose dedup ledger applies in context mode).'),
  limit: z.number().int().optional().describe('Hits to return (list mode, and flat context mode). Default 10.'),
  min_score: z.number().nullable().optional().describe('Minimum relevance 0..1. Default 0.35 in list mode, none in context mode.'),
  level: z.union([z.number().int(), z.string(), z.array(z.number().int())]).nullable().optional().describe('List mode: levels to keep (0 abstract, 1 overview, 2 file).'),
  context_type: z.union([z.string(), z.array(z.string())]).nullable().optional().describe('memory, resource and/or skill.'),
  query_expansion: z.enum(['off', 'auto']).optional().describe('Context mode: expand the query from the session. Default "auto".'),
  max_tokens: z.number().int().optional().describe('Context mode: token budget of the block (64..32000). Default 1600.'),
  quotas: z
    .record(z.string(), z.number())
    .nullable()
    .optional()
    .describe('Context mode: rows per bucket (events, entities, preferences, experiences, resources, skills); other keys are ignored.'),
  purpose: z.enum(['chat', 'coding']).nullable().optional().describe('Context mode: bucket preset when no quotas are given.'),
  detail: z.string().optional().describe('Context mode: "auto" (default), "abstract", "overview" or "full" for every entry.'),
  detail_by_category: z
    .record(z.string(), z.string())
    .nullable()
    .optional()
    .describe('Context mode: tier per category, e.g. {"events":"full"}; cannot be combined with a detail other than "auto".'),
  dedup_turns: z.number().int().optional().describe('Context mode: hold back entries served to this session in the last N turns (0..100). Default 0.'),
  exclude_uris: z.array(z.string()).nullable().optional().describe('Context mode: viking:// URIs to leave out (at most 200 are used).'),
  peer_scope: z.string().optional().describe('Context mode: "all" (default) or "actor".'),
  other_peer_penalty: z.number().nullable().optional().describe('Context mode: score penalty 0..1 for other peers\' entries, all categories.'),
  other_peer_penalties: z.record(z.string(), z.number()).nullable().optional().describe('Context mode: the same penalty per category.'),
  rewrite: z
    .union([z.enum(['off', 'auto']), z.boolean()])
    .optional()
    .describe('Context mode: "auto" always attempts a short cited digest of the block; "off" (default) returns the block.'),
  rewrite_max_bullets: z.number().int().optional().describe('Context mode: most digest bullets (1..20). Default 6.'),
  packing: z
    .enum(['compat', 'evidence'])
    .optional()
    .describe('Context mode: "compat" (the contract\'s packing) or "evidence" (spend the budget on as much relevant evidence as fits). Default: the server\'s.'),
};

/** Input schema of `read`. */
export const READ_INPUT = {
  uri: z.string().describe('A viking:// URI from a search result ("viking://~/…" is your user space).'),
};

/** The logging a tool needs (pino's and Fastify's request loggers both fit). */
export interface ToolLog {
  error(obj: object, msg: string): void;
}

/** What one request's MCP server needs. */
export interface McpToolDeps {
  /** The orchestrator: list mode, context assembly and reads. */
  orchestrator: Pick<OrchestratorPort, 'search' | 'assembleContext' | 'readContent'>;
  /** The authenticated caller of the HTTP request. */
  caller: Caller;
  /** The HTTP request's Budget (created on first use). */
  budget: () => Budget;
  /** "Now", ms since epoch. */
  now: () => number;
  /** Request logger (mesh faults are logged; callers get the code's message only). */
  log: ToolLog;
  /** Version reported in `initialize`. */
  version: string;
}

function text(t: string): CallToolResult {
  return { content: [{ type: 'text', text: t }] };
}

/**
 * A failure as an MCP tool error whose text is the message the REST envelope would carry
 * (the §1.5 errors verbatim; `internal error` for mesh faults, whose cause is logged).
 */
export function toolError(err: unknown, requestId: string, log: ToolLog): CallToolResult {
  const r = renderError(err, requestId);
  if (r.fault) log.error({ err }, 'mcp tool failed');
  return { content: [{ type: 'text', text: r.body.error.message }], isError: true };
}

/**
 * Build the MCP server for one request. Tools:
 * - `search`: list mode → orchestrator `Search`, answered as {@link listText}; context mode →
 *   `AssembleContext` with the §1.5 mapping, answered as {@link contextText};
 * - `read`: `~`-expanded URI → `ReadContent` tier `read` (the full body); unknown → a tool error.
 * Every failure (bad arguments, unknown URI, mesh errors) is a tool error (`isError: true`),
 * never a JSON-RPC error, so the model sees the message.
 */
export function createMcpServer(deps: McpToolDeps): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: deps.version }, { capabilities: { tools: {} } });
  const { caller } = deps;

  server.registerTool(
    'search',
    {
      title: 'Search memories, resources and skills',
      description:
        'Search the user\'s memories, resources and skills. mode "context" returns one ready-to-use block (cited with viking:// URIs); ' +
        'mode "list" returns ranked hits. Use the read tool on a URI to get its full text.',
      inputSchema: SEARCH_INPUT,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const v = mcpSearchParams(args as McpSearchArgs, { identity: caller, nowMs: deps.now() });
        if (v.mode === 'list') {
          const res = await deps.orchestrator.search(toSearchRequest(v.params, caller, v.params.sessionId), deps.budget());
          return text(listText(listResult(res)));
        }
        const res = await deps.orchestrator.assembleContext(toAssembleContextRequest(v.params, caller), deps.budget());
        return text(contextText(contextResult(res, { ignored: v.params.ignored })));
      } catch (err) {
        return toolError(err, caller.requestId, deps.log);
      }
    },
  );

  server.registerTool(
    'read',
    {
      title: 'Read a URI',
      description: 'Return the full text of a viking:// URI (for example one cited in a search result).',
      inputSchema: READ_INPUT,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async ({ uri }) => {
      try {
        const resolved = resolveRequestUri(uri, caller.userId);
        assertTargetsAccessible([resolved], caller);
        const res = await deps.orchestrator.readContent({ identity: protoIdentity(caller), uri: resolved, tier: 'read' }, deps.budget());
        return text(res.text);
      } catch (err) {
        return toolError(err, caller.requestId, deps.log);
      }
    },
  );
  return server;
}
