/**
 * The one-round-trip retrieve pipeline (retrieve-contract; seed 004): workspace → optional
 * query rewrite → gather (passages, memories, group memories) → optional graph assist →
 * optional cross-encoder rerank → per-document cap and top_k → token trim → citations → trace.
 *
 * Mandatory legs (workspace resolution, gather, trim) always run and their errors fail the
 * request; optional stages are declared in {@link RETRIEVE_STAGE_TABLE} and admitted by the
 * {@link StageRunner} against `time_budget_ms` (expected cost = running latency estimate, the
 * configured timeout before the first run), are clamped to what remains, and degrade into
 * `degradedStages` when skipped for budget, failed or timed out. The answer is always
 * well-formed.
 */
import type { common, gather, orchestrator, rewrite } from '@ctxmesh/proto';
import { Code, CtxError, type Budget } from '@ctxmesh/rpc';
import { activeTraceId } from '@ctxmesh/telemetry';
import { retrieveExplain } from './explain';
import type { Ports } from './ports';
import { rerankOrder } from './rerank';
import { LatencyEstimator, StageRunner, statusOutcome, type OptionalStage, type StageRecord } from './stages';
import { newTraceId, traceToStored, writeWithin, type TraceDrop, type TraceSink } from './trace';

/** The optional stages of retrieve, in run order. */
export const RETRIEVE_STAGES = ['query_rewrite', 'graph_assist', 'rerank'] as const;
/** An optional stage of retrieve. */
export type RetrieveStage = (typeof RETRIEVE_STAGES)[number];

/** Contract defaults (retrieve-contract "Request"). */
export const RETRIEVE_DEFAULTS = { topK: 8, memoryK: 5, maxPerDocument: 2 } as const;

/** Retrieve settings from the orchestrator's configuration. */
export interface RetrieveSettings {
  /** Query rewrite timeout, ms (`SEARCH_QUERY_REWRITE_TIMEOUT_MS`). @default 6000 */
  queryRewriteTimeoutMs: number;
  /** Rerank timeout, ms (`SEARCH_RERANKING_TIMEOUT_MS`). @default 8000 */
  rerankTimeoutMs: number;
  /** Graph assist timeout, ms (`SEARCH_GRAPH_ASSIST_TIMEOUT_MS`). @default 2000 */
  graphAssistTimeoutMs: number;
  /** Time kept back for the mandatory legs when admitting an optional stage, ms. @default 20 */
  reserveMs: number;
  /** A chat model is configured in the rewrite service (query rewrite can run). */
  modelConfigured: boolean;
  /** A `/rerank` endpoint is configured in the rewrite service (rerank can run). */
  rerankConfigured: boolean;
  /** Stages run when the request's `stages` does not name them. */
  defaults: Readonly<Record<RetrieveStage, boolean>>;
  /** Write one trace row per request (`RETRIEVAL_TRACE_ENABLED`). @default false */
  traceEnabled: boolean;
  /** Longest wait for a trace write before answering without a trace id, ms. @default 2000 */
  traceWriteTimeoutMs: number;
}

/** Settings with the configuration defaults (nothing configured, traces off). */
export function defaultRetrieveSettings(over: Partial<RetrieveSettings> = {}): RetrieveSettings {
  return {
    queryRewriteTimeoutMs: 6000,
    rerankTimeoutMs: 8000,
    graphAssistTimeoutMs: 2000,
    reserveMs: 20,
    modelConfigured: false,
    rerankConfigured: false,
    defaults: { query_rewrite: true, graph_assist: false, rerank: true },
    traceEnabled: false,
    traceWriteTimeoutMs: 2000,
    ...over,
  };
}

/** Hooks and collaborators of one retrieve. */
export interface RetrieveOptions {
  /** Stage metrics hook. */
  observe?: (r: StageRecord) => void;
  /** Trace store; traces are written only when `settings.traceEnabled` and a sink exists. */
  traces?: TraceSink | null;
  /** Logger of trace write failures. */
  warn?: (obj: Record<string, unknown>, msg: string) => void;
  /** Clock, ms since the epoch. @default Date.now */
  now?: () => number;
  /** Trace id factory. @default newTraceId */
  newId?: () => string;
}

/** A candidate passage moving through the stages. */
export interface RankedPassage {
  uri: string;
  docUri: string;
  title: string;
  text: string;
  /** Current score (the rerank score once rerank ran). */
  score: number;
  /** The score gather gave it. */
  searchScore: number;
  /** Where it came from. */
  source: 'search' | 'graph_assist';
  /** Cross-encoder score, when rerank scored it. */
  rerankScore: number | null;
}

/** What a retrieve produced: the wire answer, the stage records and the trace (when written). */
export interface RetrieveResult {
  response: orchestrator.RetrieveResponse;
  runner: StageRunner;
  /** The trace that was written, or null. */
  trace: orchestrator.RetrievalTrace | null;
}

/** A retrieve request as the pipeline reads it: identity checked, defaults and bounds applied. */
export interface RetrieveInput {
  /** Caller identity, with an account and a user. */
  identity: common.Identity;
  /** The query (not blank). */
  query: string;
  /** Subject whose memories are searched ("" = the caller). */
  subject: string;
  /** Passages wanted, 1..100. */
  topK: number;
  /** Memories wanted, 0..100. */
  memoryK: number;
  /** MMR trade-off (absent = no MMR). */
  mmrLambda: number | undefined;
  /** At most this many passages per document (≥ 1). */
  maxPerDocument: number;
  /** Valid-time instant, ms (absent = now). */
  asOfMs: number | undefined;
  /** Token budget (0 = none). */
  tokenBudget: number;
  /** Time budget, ms (null = none). */
  timeBudgetMs: number | null;
  /** Which optional stages run (the request's choices over the configured defaults). */
  wants: Record<RetrieveStage, boolean>;
  /** Tokenizer (`estimate` when none was named). */
  tokenizer: string;
  /** Also answer the explanation. */
  explain: boolean;
}

/**
 * Which optional stages a request wants: the request's explicit choices over the configured
 * defaults (unknown names are ignored: the gateway has refused them already).
 */
export function stageWants(requested: readonly orchestrator.StageRequest[], defaults: Readonly<Record<RetrieveStage, boolean>>): Record<RetrieveStage, boolean> {
  const out = { ...defaults } as Record<RetrieveStage, boolean>;
  for (const s of requested) if ((RETRIEVE_STAGES as readonly string[]).includes(s.name)) out[s.name as RetrieveStage] = s.enabled;
  return out;
}

/**
 * Passages gather is asked for: `topK`, or a larger pool when graph assist or rerank may
 * reorder them (gather's selection is prefix-consistent, so cutting the pool back to `topK`
 * when those stages do not run gives the same answer as asking for `topK`).
 */
export function gatherSize(topK: number, reordering: boolean): number {
  return reordering ? Math.min(100, Math.max(3 * topK, topK + 12)) : topK;
}

/**
 * Merge graph-assist passages into the candidates: a passage already present keeps its place
 * (with the better score); a new one enters the ranking at its score, before the first
 * candidate scored strictly lower (so the existing order, MMR's included, is kept).
 */
export function mergeLinked(candidates: readonly RankedPassage[], linked: readonly gather.PassageRef[]): RankedPassage[] {
  const out = candidates.map((c) => ({ ...c }));
  const at = new Map(out.map((c, i) => [c.uri, i]));
  for (const l of linked) {
    const i = at.get(l.uri);
    if (i !== undefined) {
      if (l.score > out[i].score) out[i].score = l.score;
      continue;
    }
    const p: RankedPassage = { uri: l.uri, docUri: l.docUri || l.uri, title: l.title, text: l.text, score: l.score, searchScore: l.score, source: 'graph_assist', rerankScore: null };
    let pos = out.findIndex((c) => c.score < p.score);
    if (pos < 0) pos = out.length;
    out.splice(pos, 0, p);
    at.clear();
    out.forEach((c, j) => at.set(c.uri, j));
  }
  return out;
}

/**
 * Order candidates by cross-encoder score (descending, ties in the previous order); the score
 * becomes the rerank score. Candidates the provider left out keep their score and follow, in
 * their previous order (the merge context mode shares, `rerank.ts`).
 */
export function applyRerank(candidates: readonly RankedPassage[], scores: readonly rewrite.RerankScore[]): RankedPassage[] {
  return rerankOrder(candidates, scores, (c) => c.uri).map(({ item, score }) => (score === null ? { ...item } : { ...item, score, rerankScore: score }));
}

/**
 * The final selection: in order, at most `maxPerDocument` passages of a document, at most
 * `topK` in all.
 * @returns kept passages, and the dropped ones with their reason
 */
export function selectFinal(candidates: readonly RankedPassage[], maxPerDocument: number, topK: number): { kept: RankedPassage[]; dropped: TraceDrop[] } {
  const cap = Math.max(1, maxPerDocument);
  const perDoc = new Map<string, number>();
  const kept: RankedPassage[] = [];
  const dropped: TraceDrop[] = [];
  for (const c of candidates) {
    const n = perDoc.get(c.docUri) ?? 0;
    if (n >= cap) dropped.push({ uri: c.uri, id: null, reason: 'max_per_document' });
    else if (kept.length >= topK) dropped.push({ uri: c.uri, id: null, reason: 'top_k' });
    else {
      perDoc.set(c.docUri, n + 1);
      kept.push(c);
    }
  }
  return { kept, dropped };
}

/**
 * Citations of the returned passages: one per document, numbered `c1…` in order of the
 * document's first passage; `passage_ids` in passage order; the title is the document's.
 * @returns the citations and, aligned with `passages`, each passage's citation id
 */
export function buildCitations(passages: ReadonlyArray<{ id: string; docUri: string; title: string }>): { citations: orchestrator.Citation[]; citationOf: string[] } {
  const byDoc = new Map<string, orchestrator.Citation>();
  const citationOf: string[] = [];
  for (const p of passages) {
    let c = byDoc.get(p.docUri);
    if (!c) {
      c = { id: `c${byDoc.size + 1}`, docUri: p.docUri, title: p.title, passageIds: [] };
      byDoc.set(p.docUri, c);
    }
    c.passageIds.push(p.id);
    citationOf.push(c.id);
  }
  return { citations: [...byDoc.values()], citationOf };
}

const clampInt = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.trunc(v)));

/**
 * The pipeline's input of a wire request (the gateway has applied the contract's defaults and
 * bounds; zeros on the wire fall back to the defaults here too).
 * @param defaults the configured stage choices a request's `stages` overrides
 * @throws CtxError INVALID_ARGUMENT `MISSING_IDENTITY` without an account or user, `EMPTY_QUERY`
 *   for a blank query
 */
export function retrieveInput(req: orchestrator.RetrieveRequest, defaults: Readonly<Record<RetrieveStage, boolean>>): RetrieveInput {
  const identity = req.identity;
  if (!identity || !identity.accountId || !identity.userId) throw new CtxError(Code.INVALID_ARGUMENT, 'MISSING_IDENTITY', 'identity with account_id and user_id is required');
  if (req.query.trim() === '') throw new CtxError(Code.INVALID_ARGUMENT, 'EMPTY_QUERY', 'query must not be blank');
  return {
    identity,
    query: req.query,
    subject: req.subject,
    topK: req.topK > 0 ? clampInt(req.topK, 1, 100) : RETRIEVE_DEFAULTS.topK,
    memoryK: clampInt(req.memoryK, 0, 100),
    mmrLambda: req.mmrLambda,
    maxPerDocument: req.maxPerDocument > 0 ? Math.trunc(req.maxPerDocument) : RETRIEVE_DEFAULTS.maxPerDocument,
    asOfMs: req.asOfMs,
    tokenBudget: req.tokenBudget !== undefined && req.tokenBudget > 0 ? req.tokenBudget : 0,
    timeBudgetMs: req.timeBudgetMs !== undefined && req.timeBudgetMs > 0 ? req.timeBudgetMs : null,
    wants: stageWants(req.stages, defaults),
    tokenizer: req.tokenizer || 'estimate',
    explain: req.explain,
  };
}

/** What retrieve's optional stages' rules read. */
interface RetrieveFacts {
  wants: Record<RetrieveStage, boolean>;
  settings: RetrieveSettings;
  /** Candidate passages so far. */
  candidates: number;
}

/** Retrieve's optional stages (retrieve-contract "Stages"), in run order: when each is not entered, and its fuse. */
export const RETRIEVE_STAGE_TABLE = {
  query_rewrite: {
    name: 'query_rewrite',
    fuseMs: (f) => f.settings.queryRewriteTimeoutMs,
    skipWhen: [
      ['NOT_REQUESTED', (f) => !f.wants.query_rewrite],
      ['NOT_CONFIGURED', (f) => !f.settings.modelConfigured],
    ],
  },
  graph_assist: {
    name: 'graph_assist',
    fuseMs: (f) => f.settings.graphAssistTimeoutMs,
    skipWhen: [
      ['NOT_REQUESTED', (f) => !f.wants.graph_assist],
      ['NOTHING_TO_DO', (f) => f.candidates === 0],
    ],
  },
  rerank: {
    name: 'rerank',
    fuseMs: (f) => f.settings.rerankTimeoutMs,
    skipWhen: [
      ['NOT_REQUESTED', (f) => !f.wants.rerank],
      ['NOT_CONFIGURED', (f) => !f.settings.rerankConfigured],
      ['NOTHING_TO_DO', (f) => f.candidates === 0],
    ],
  },
} as const satisfies Record<RetrieveStage, OptionalStage<RetrieveFacts>>;

/** What {@link retrievalTrace} reads from a finished retrieve. */
interface TraceInput {
  /** Trace id. */
  id: string;
  /** When the request started, ms since the epoch. */
  startedAt: number;
  /** The request as the pipeline read it. */
  request: RetrieveInput;
  /** The workspace searched. */
  workspace: string;
  /** Queries searched, original first. */
  queries: readonly string[];
  records: readonly StageRecord[];
  /** Candidate passages in final rank order. */
  candidates: readonly RankedPassage[];
  dropped: readonly TraceDrop[];
  /** The answer. */
  response: orchestrator.RetrieveResponse;
}

/** The trace of a finished retrieve (retrieve-contract "Traces"). */
function retrievalTrace(t: TraceInput): orchestrator.RetrievalTrace {
  const { request: req, response } = t;
  return {
    traceId: t.id,
    createdAtMs: t.startedAt,
    requestId: req.identity.requestId,
    user: req.identity.userId,
    workspace: t.workspace,
    query: req.query,
    plannedQueries: [...t.queries],
    params: {
      subject: req.subject || req.identity.userId,
      topK: req.topK,
      memoryK: req.memoryK,
      mmrLambda: req.mmrLambda,
      maxPerDocument: req.maxPerDocument,
      asOfMs: req.asOfMs,
      tokenBudget: req.tokenBudget > 0 ? req.tokenBudget : undefined,
      timeBudgetMs: req.timeBudgetMs ?? undefined,
      stages: { queryRewrite: req.wants.query_rewrite, graphAssist: req.wants.graph_assist, rerank: req.wants.rerank },
      tokenizer: req.tokenizer,
    },
    stages: t.records.map((r) => ({ stage: r.stage, outcome: r.outcome, ms: Math.round(r.ms * 100) / 100, reason: r.reason, optional: r.optional })),
    degradedStages: response.degradedStages,
    candidates: t.candidates.map((c) => ({ uri: c.uri, docUri: c.docUri, score: c.score, searchScore: c.searchScore, source: c.source, rerankScore: c.rerankScore ?? undefined })),
    dropped: t.dropped.map((d) => ({ uri: d.uri, id: d.id ?? '', reason: d.reason })),
    result: {
      passages: response.passages.map((p) => ({ id: p.id, uri: p.uri, score: p.score, tokens: p.tokens })),
      memories: response.memories.map((m) => ({ id: '', uri: m.uri, score: m.score, tokens: m.tokens })),
      groupMemories: response.groupMemories.map((m) => ({ id: '', uri: m.uri, score: m.score, tokens: m.tokens })),
      tokensTotal: response.tokensTotal,
      droppedCount: response.droppedCount,
    },
  };
}

/** What a retrieve needs besides its input and budget. */
export interface RetrieveDeps extends RetrieveOptions {
  ports: Ports;
  settings: RetrieveSettings;
  /** Latency estimates shared by the orchestrator's requests (admission of optional stages). */
  estimator: LatencyEstimator;
}

/**
 * Run one retrieve: workspace → optional query rewrite → gather → optional graph assist →
 * optional rerank → per-document cap and top_k → trim → citations → trace → explanation.
 * @throws CtxError INVALID_ARGUMENT (gather's rejections), NOT_FOUND / PERMISSION_DENIED
 *   (unknown or foreign workspace; another user's subject), DEADLINE_EXCEEDED / CANCELLED when
 *   the request's own deadline ends, INTERNAL when a mandatory leg fails
 */
export async function retrieve(input: RetrieveInput, budget: Budget, deps: RetrieveDeps): Promise<RetrieveResult> {
  const { ports, settings } = deps;
  const startedAt = (deps.now ?? Date.now)();
  const { identity, topK, maxPerDocument, wants } = input;
  const runner = new StageRunner({ budget, timeBudgetMs: input.timeBudgetMs, estimator: deps.estimator, reserveMs: settings.reserveMs, observe: deps.observe });
  const facts = (candidates = 0): RetrieveFacts => ({ wants, settings, candidates });

  // 1. Workspace (mandatory): the identity's slug (body, else X-Workspace), else the persisted
  // active workspace, else default. Unknown → NOT_FOUND, foreign → PERMISSION_DENIED.
  const ws = await runner.mandatory('workspace', (b) => ports.sessions.resolveWorkspace({ identity, workspace: '' }, b));
  const scoped = { ...identity, workspace: ws.workspace };

  // 2. Query rewrite (optional).
  let queries = [input.query];
  const rewritten = await runner.stage(RETRIEVE_STAGE_TABLE.query_rewrite, facts(), async (b, timeoutMs) =>
    statusOutcome('query_rewrite', await ports.rewrite.rewriteQuery({ query: input.query, timeoutMs }, b)),
  );
  if (rewritten) queries = [...new Set([input.query, ...rewritten.queries.filter((q) => q.trim() !== '')])];

  // 3. Gather (mandatory).
  const reordering = wants.graph_assist || (wants.rerank && settings.rerankConfigured);
  const gathered = await runner.mandatory('gather', (b) =>
    ports.gather.gatherPassages(
      {
        identity: scoped,
        queries,
        subject: input.subject,
        topK: gatherSize(topK, reordering),
        memoryK: input.memoryK,
        mmrLambda: input.mmrLambda,
        maxPerDocument,
        asOfMs: input.asOfMs,
        candidatePool: 0,
      },
      b,
    ),
  );
  let candidates: RankedPassage[] = gathered.passages.map((p) => ({
    uri: p.uri,
    docUri: p.docUri || p.uri,
    title: p.title,
    text: p.text,
    score: p.score,
    searchScore: p.score,
    source: 'search',
    rerankScore: null,
  }));

  // 4. Graph assist (optional): expand the would-be answer along its documents' links.
  const seeds = candidates.slice(0, topK).map((c) => c.uri);
  const linked = await runner.stage(RETRIEVE_STAGE_TABLE.graph_assist, facts(candidates.length), (b) =>
    ports.gather.expandLinks({ identity: scoped, seedUris: seeds, queries, limit: topK, asOfMs: input.asOfMs }, b),
  );
  if (linked) candidates = mergeLinked(candidates, linked.passages);

  // 5. Cross-encoder rerank (optional).
  const docs = candidates.map((c) => ({ id: c.uri, text: c.text }));
  const reranked = await runner.stage(RETRIEVE_STAGE_TABLE.rerank, facts(candidates.length), async (b, timeoutMs) =>
    statusOutcome('rerank', await ports.rewrite.rerank({ query: input.query, documents: docs, timeoutMs }, b)),
  );
  if (reranked) candidates = applyRerank(candidates, reranked.scores);

  // 6. Final selection, ids in rank order.
  const { kept, dropped } = selectFinal(candidates, maxPerDocument, topK);
  const ranked = kept.map((p, i) => ({ ...p, id: `p${i + 1}` }));
  const fixed = [...gathered.memories, ...gathered.groupMemories];

  // 7. Trim (mandatory): counts every entry and drops the lowest-scored passages over the budget.
  const trim = await runner.mandatory('trim', (b) =>
    ports.budgetRender.trimPassages(
      {
        passages: ranked.map((p) => ({ id: p.id, score: p.score, text: p.text })),
        fixed: fixed.map((m, i) => ({ id: `m${i + 1}`, score: m.score, text: m.text })),
        tokenBudget: input.tokenBudget,
        tokenizer: input.tokenizer,
      },
      b,
    ),
  );
  const keptIds = new Set(trim.keptIds);
  const tokensOf = new Map(ranked.map((p, i) => [p.id, trim.passageTokens[i] ?? 0]));
  const survivors = ranked.filter((p) => keptIds.has(p.id));
  for (const p of ranked) if (!keptIds.has(p.id)) dropped.push({ uri: p.uri, id: p.id, reason: 'token_budget' });
  const { citations, citationOf } = buildCitations(survivors);

  const memTokens = (i: number) => trim.fixedTokens[i] ?? 0;
  const response: orchestrator.RetrieveResponse = {
    passages: survivors.map((p, i) => ({ id: p.id, uri: p.uri, docUri: p.docUri, text: p.text, score: p.score, tokens: tokensOf.get(p.id) ?? 0, citation: citationOf[i] })),
    memories: gathered.memories.map((m, i) => ({ uri: m.uri, text: m.text, score: m.score, tokens: memTokens(i), subject: m.subject })),
    groupMemories: gathered.groupMemories.map((m, i) => ({ uri: m.uri, text: m.text, score: m.score, tokens: memTokens(gathered.memories.length + i), subject: '' })),
    citations,
    tokensTotal: trim.tokensTotal,
    droppedCount: trim.droppedCount,
    degradedStages: runner.degraded(),
    stages: runner.toProto(),
    budgetMs: input.timeBudgetMs ?? undefined,
    traceId: '',
    explain: undefined,
  };

  // 8. Trace (when on): one row, its id in the answer; a failed write leaves trace_id null.
  let trace: orchestrator.RetrievalTrace | null = null;
  if (settings.traceEnabled && deps.traces) {
    const id = (deps.newId ?? newTraceId)();
    trace = retrievalTrace({ id, startedAt, request: input, workspace: ws.workspace, queries, records: runner.records, candidates, dropped, response });
    const cap = Math.max(1, Math.min(settings.traceWriteTimeoutMs, budget.remainingMs()));
    const ok = await writeWithin(deps.traces, { id, account: identity.accountId, createdAt: startedAt, data: traceToStored(trace) }, cap, (err) =>
      deps.warn?.({ err, traceId: id }, 'retrieval trace not written'),
    );
    if (ok) response.traceId = id;
    else trace = null;
  }

  // 9. Explanation (when asked for).
  if (input.explain) {
    response.explain = retrieveExplain({
      traceId: activeTraceId(),
      retrievalTraceId: response.traceId || null,
      candidates,
      ranked,
      dropped,
      passageTokens: tokensOf,
      memories: [
        ...response.memories.map((m) => ({ uri: m.uri, score: m.score, tokens: m.tokens, group: false })),
        ...response.groupMemories.map((m) => ({ uri: m.uri, score: m.score, tokens: m.tokens, group: true })),
      ],
      records: runner.records,
    });
  }
  return { response, runner, trace };
}
