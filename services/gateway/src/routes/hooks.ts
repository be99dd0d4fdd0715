/**
 * Harness hooks with no plugin: `POST /hooks/claude-code` (a Claude Code `"type": "http"`
 * hook posts its event here) and `POST /hooks/codex` (`ctxmesh hook --harness codex`, a
 * Codex command hook, forwards its stdin here). One route per harness, the event named in the
 * body (`hook_event_name`):
 *
 *   UserPromptSubmit         the prompt → the session log; answers the context block of the
 *                            prompt (server default packing, the session's dedup ledger) and
 *                            the session recall (hidden originals that match the prompt)
 *   SessionStart             `compact`/`resume`: answers the session log's surface (carry-on)
 *   PreCompact               the user's `/compact` instructions → the log; answers `{}`
 *   PostCompact              `compact_summary` becomes a block over the compressible ranges
 *                            (the log mirrors the harness's compaction; originals stay searchable)
 *   Stop                     the last assistant message → the log (from the event, or the
 *                            transcript tail under CTXMESH_HOOK_TRANSCRIPT_ROOT only)
 *   PostToolUse              the tool call and its output → the log
 *   anything else            `{}`
 *
 * Auth is the `/api` scope's (Bearer / X-API-Key). A bad body is a 400 naming the field; every
 * other outcome is a 200 within the hook budget (CTXMESH_HOOK_BUDGET_MS): a downstream failure
 * or an answer not ready in time is `{}` — logged, never an error the user sees.
 */
import { createHash } from 'node:crypto';
import { CtxError, Code, type Budget } from '@ctxmesh/rpc';
import type { sessions } from '@ctxmesh/proto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OrchestratorPort } from '../clients/orchestrator';
import type { SessionsLogPort } from '../clients/sessions';
import type { TranscriptReader } from '../clients/transcript';
import type { HooksConfig } from '../config';
import { HOOK_MAX_QUERY_CHARS, validateHookEvent, validateSearchBody, type Harness, type HookEvent } from '../domain';
import { budgetOf, callerOf } from '../http/context';
import { captureEvents, carryOnBlock, contextBlock, EMPTY_ANSWER, hookAnswer, recallBlock, type HookAnswer, type RecalledItem } from '../mapping/hooks';
import { protoIdentity } from '../mapping/identity';
import { toAssembleContextRequest } from '../mapping/search';

/** What the hook routes need. */
export interface HookRouteDeps {
  /** Context assembly. */
  orchestrator: Pick<OrchestratorPort, 'assembleContext'>;
  /** The session log. */
  sessions: Pick<SessionsLogPort, 'appendEvents' | 'projectSurface' | 'listCompressibleRanges' | 'compress' | 'searchContext' | 'decompress'>;
  /** Budget, dedup, carry-on size, transcript root. */
  hooks: HooksConfig;
  /** Reads a transcript tail under the operator's root (absent: transcripts are never read). */
  transcripts?: TranscriptReader;
  /** Clock, ms. @default Date.now */
  now?: () => number;
}

/** Paths of the hook routes, by harness. */
export const HOOK_PATHS: Readonly<Record<Harness, string>> = { 'claude-code': '/hooks/claude-code', codex: '/hooks/codex' };

/** The provider recorded on a mirrored compaction, by session prefix. */
const HARNESS_OF: Readonly<Record<string, string>> = { 'cc-': 'claude-code', 'cx-': 'codex' };

/** Session recall: hits asked of the log, originals injected. */
const RECALL_HITS = 8;
const RECALL_ITEMS = 3;
/** Pages of a block searched for one recalled seq. */
const RECALL_PAGES = 8;
/** Time kept back from the hook budget to write the answer, ms. */
const ANSWER_RESERVE_MS = 5;

/** Mount the hook routes on an authenticated scope. */
export function hookRoutes(api: FastifyInstance, deps: HookRouteDeps): void {
  const now = deps.now ?? Date.now;
  const { hooks } = deps;
  const deadlines = { defaultMs: hooks.budgetMs, maxMs: hooks.budgetMs };

  for (const harness of Object.keys(HOOK_PATHS) as Harness[]) {
    api.post(HOOK_PATHS[harness], async (request, reply) => {
      const ev = validateHookEvent(harness, request.body);
      // A Claude Code http hook reads a JSON body; say so even for `{}`.
      void reply.type('application/json');
      if (ev.kind === 'ignored') return EMPTY_ANSWER;
      const budget = budgetOf(request, deadlines);
      return withinBudget(request, budget, ev, () => handle(request, ev, budget));
    });
  }

  /** The answer of `work`, or `{}` when it fails or is not ready within the budget. */
  async function withinBudget(request: FastifyRequest, budget: Budget, ev: HookEvent, work: () => Promise<HookAnswer>): Promise<HookAnswer> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), Math.max(0, budget.remainingMs() - ANSWER_RESERVE_MS));
    });
    const running = work().catch((err: unknown) => {
      request.log.warn({ err, event: ev.eventName }, 'hook answered empty: the work failed');
      return EMPTY_ANSWER;
    });
    try {
      const out = await Promise.race([running, late]);
      if (out === 'late') {
        request.log.warn({ event: ev.eventName, budget_ms: hooks.budgetMs }, 'hook answered empty: over its budget');
        return EMPTY_ANSWER;
      }
      return out;
    } finally {
      clearTimeout(timer);
    }
  }

  async function handle(request: FastifyRequest, ev: HookEvent, budget: Budget): Promise<HookAnswer> {
    const ref = { sessionId: ev.sessionId, identity: protoIdentity(callerOf(request)) };
    switch (ev.kind) {
      case 'prompt':
        return promptAnswer(request, ev, ref, budget);
      case 'session-start': {
        if (ev.source !== 'compact' && ev.source !== 'resume') return EMPTY_ANSWER;
        const surface = await orAbsent(deps.sessions.projectSurface({ ...ref, includeRanges: false }, budget));
        return hookAnswer(ev.eventName, [surface ? carryOnBlock(surface.messages, hooks.carryChars) : null]);
      }
      case 'post-compact':
        await mirrorCompaction(ev, ref, budget);
        return EMPTY_ANSWER;
      case 'stop': {
        const transcriptText = ev.lastAssistantMessage === null && ev.transcriptPath && deps.transcripts ? await deps.transcripts.lastAssistantMessage(ev.transcriptPath) : null;
        await append(ref, ev.agentId, captureEvents(ev, { transcriptText, fallbackCallId: '' }), budget);
        return EMPTY_ANSWER;
      }
      default:
        await append(ref, ev.agentId, captureEvents(ev, { fallbackCallId: `hook-${now().toString(36)}` }), budget);
        return EMPTY_ANSWER;
    }
  }

  async function append(ref: SessionRef, agentId: string, events: ReturnType<typeof captureEvents>, budget: Budget): Promise<void> {
    if (events.length === 0) return;
    await deps.sessions.appendEvents({ ...ref, agentId, events: events.map((e) => ({ ...e, seq: 0 })) }, budget);
  }

  async function promptAnswer(request: FastifyRequest, ev: Extract<HookEvent, { kind: 'prompt' }>, ref: SessionRef, budget: Budget): Promise<HookAnswer> {
    const query = ev.prompt.trim().slice(0, HOOK_MAX_QUERY_CHARS);
    if (query === '') return EMPTY_ANSWER;
    // The same body a plugin would send, minus what the server decides: its default packing,
    // budget and expansion. Validated as any context request is.
    const v = validateSearchBody({ query, mode: 'context', session_id: ref.sessionId, dedup_turns: hooks.dedupTurns }, { identity: callerOf(request), nowMs: now() });
    if (v.mode !== 'context') return EMPTY_ANSWER;
    const [context, recall] = await Promise.all([
      deps.orchestrator.assembleContext(toAssembleContextRequest(v.params, callerOf(request)), budget).catch((err: unknown) => {
        request.log.warn({ err }, 'hook: context assembly failed');
        return null;
      }),
      recallHidden(ref, query, budget).catch((err: unknown) => {
        request.log.warn({ err }, 'hook: session recall failed');
        return [] as RecalledItem[];
      }),
      // After the recall's search, which only looks at hidden originals, so order does not matter.
      append(ref, ev.agentId, captureEvents(ev, { fallbackCallId: '' }), budget).catch((err: unknown) => request.log.warn({ err }, 'hook: prompt capture failed')),
    ]);
    return hookAnswer(ev.eventName, [context ? contextBlock(context) : null, recallBlock(recall)]);
  }

  /** Originals hidden from the surface that match the query (the earliest block or prune that hides each). */
  async function recallHidden(ref: SessionRef, query: string, budget: Budget): Promise<RecalledItem[]> {
    const found = await orAbsent(deps.sessions.searchContext({ ...ref, query, limit: RECALL_HITS }, budget));
    if (!found) return [];
    const hits = found.hits.filter((h) => h.kind === 'message' && h.seq !== undefined && (h.role === 'tool' || h.role === 'user' || h.role === 'assistant')).slice(0, RECALL_ITEMS);
    const items: RecalledItem[] = [];
    const pages = new Map<string, sessions.OriginalItem[]>();
    for (const h of hits) {
      const seq = Number(h.seq);
      let item = pages.get(h.blockId)?.find((i) => Number(i.seq) === seq);
      for (let page = 0, offset = 0; !item && page < RECALL_PAGES; page++) {
        const res = await deps.sessions.decompress({ ...ref, ref: h.blockId, offset, limit: 100 }, budget);
        pages.set(h.blockId, [...(pages.get(h.blockId) ?? []), ...res.items]);
        item = res.items.find((i) => Number(i.seq) === seq);
        if (res.nextOffset === undefined) break;
        offset = Number(res.nextOffset);
      }
      items.push({ seq, role: h.role, text: item?.text ?? h.preview });
    }
    return items;
  }

  /** PostCompact: the harness's summary as a block over every compressible range, so the log's surface matches the harness's context. */
  async function mirrorCompaction(ev: Extract<HookEvent, { kind: 'post-compact' }>, ref: SessionRef, budget: Budget): Promise<void> {
    const summary = ev.compactSummary.trim();
    if (summary === '') return;
    // The default protected tail, the one Compress itself guards: the newest turns stay on the surface.
    const listed = await orAbsent(deps.sessions.listCompressibleRanges({ ...ref }, budget));
    if (!listed || listed.ranges.length === 0) return;
    const topic = `${ev.eventName} (${ev.trigger || 'auto'})`;
    const largest = listed.ranges.reduce((a, b) => (b.rankTokens > a.rankTokens ? b : a));
    // A request id from what the compaction is: the same summary posted twice lands once.
    const requestId = `hook-compact-${createHash('sha256').update(`${ref.sessionId}\n${listed.generation}\n${summary}`).digest('hex').slice(0, 32)}`;
    await deps.sessions.compress(
      {
        ...ref,
        requestId,
        expectedGeneration: listed.generation,
        author: 'model',
        route: { provider: HARNESS_OF[ev.sessionId.slice(0, 3)] ?? '', model: '' },
        ranges: listed.ranges.map((r) => ({
          startSeq: r.start,
          endSeq: r.end,
          summary: r === largest ? summary : `Part of the ${ev.trigger || 'auto'} compaction; its summary is on the larger checkpoint of the same compaction.`,
          topic,
          verifiedReadings: [],
        })),
      },
      budget,
    );
  }
}

/** The session a hook event is about, on the wire. */
interface SessionRef {
  sessionId: string;
  identity: ReturnType<typeof protoIdentity>;
}

/** A read of a session that may not exist yet: NOT_FOUND is "nothing there", not a failure. */
async function orAbsent<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch (e) {
    if (e instanceof CtxError && e.code === Code.NOT_FOUND) return null;
    throw e;
  }
}
