/**
 * The session log and workspace routes on the wire (overflow-recovery §3.3): each validated
 * body as its `ctxmesh.sessions.v1` request, and each answer as the snake_case `result` the
 * routes send — the keys, their order, and the keys written only when they apply.
 */
import type { common, sessions } from '@ctxmesh/proto';
import type { AppendEventsBody, CompressBody, ProjectSurfaceBody, RecoverOverflowBody, RouteBody, SearchContextBody, WindowBody } from '../domain';

/** Who asks, and about which session: the part every session-log request shares. */
export interface SessionRef {
  identity: common.Identity;
  sessionId: string;
}

function windowOf(w: WindowBody | undefined): sessions.Window | undefined {
  return w === undefined ? undefined : { contextTokens: w.context_tokens, reservedOutputTokens: w.reserved_output_tokens ?? 0 };
}

function routeOf(r: RouteBody | undefined): sessions.Route | undefined {
  return r === undefined ? undefined : { provider: r.provider ?? '', model: r.model ?? '' };
}

/** `AppendEvents`: each event travels as its JSON text, typed by its own `type`. */
export function toAppendEventsRequest(ref: SessionRef, b: AppendEventsBody): sessions.AppendEventsRequest {
  const events = b.events.map((e): sessions.SessionEvent => ({ type: typeof e.type === 'string' ? e.type : '', json: JSON.stringify(e), seq: 0 }));
  return { ...ref, expectedHead: b.expected_head, agentId: b.agent_id ?? '', events };
}

/** `result` of `POST …/events`. */
export function appendEventsResult(res: sessions.AppendEventsResponse) {
  return {
    seqs: res.seqs,
    head: res.head,
    generation: res.generation,
    prunes: res.prunes.map((p) => ({ prune_id: p.pruneId, reason: p.reason, shadowed_seqs: p.shadowedSeqs, stub_seq: p.stubSeq })),
  };
}

/** `ProjectSurface`. */
export function toProjectSurfaceRequest(ref: SessionRef, b: ProjectSurfaceBody): sessions.ProjectSurfaceRequest {
  return { ...ref, window: windowOf(b.window), includeRanges: b.include_ranges === true, preserveRecent: b.preserve_recent };
}

function rangeJson(r: sessions.Range) {
  return { start: r.start, end: r.end, count: r.count, rank_tokens: r.rankTokens, tool_pct: r.toolPct, images: r.images, files: r.files };
}

function messageJson(m: sessions.SurfaceMessage) {
  return {
    seq: m.seq,
    id: m.id,
    role: m.role,
    class: m.class,
    text: m.text,
    ...(m.toolCallId !== '' ? { tool_call_id: m.toolCallId } : {}),
    ...(m.toolName !== '' ? { tool_name: m.toolName } : {}),
    ...(m.toolArgs !== '' ? { tool_args: m.toolArgs } : {}),
  };
}

/** `result` of `POST …/surface:project`; `ranges` only when the request asked for them. */
export function projectSurfaceResult(res: sessions.ProjectSurfaceResponse, includeRanges: boolean) {
  return {
    head: res.head,
    generation: res.generation,
    messages: res.messages.map(messageJson),
    usage: { rank_tokens: res.rankTokens },
    input_budget: res.inputBudget,
    over_window: res.overWindow,
    ...(includeRanges ? { ranges: res.ranges.map(rangeJson) } : {}),
  };
}

/** `result` of `GET …/ranges`. */
export function rangesResult(res: sessions.ListCompressibleRangesResponse) {
  return { generation: res.generation, ranges: res.ranges.map(rangeJson) };
}

/** `Compress`. */
export function toCompressRequest(ref: SessionRef, b: CompressBody): sessions.CompressRequest {
  return {
    ...ref,
    requestId: b.request_id,
    expectedGeneration: b.expected_generation,
    author: b.author,
    route: routeOf(b.route),
    ranges: b.ranges.map((r) => ({ startSeq: r.start_seq, endSeq: r.end_seq, summary: r.summary, topic: r.topic ?? '', verifiedReadings: r.verified_readings ?? [] })),
  };
}

/** One Compress result: the landed block's fields, or the refusal's detail and extras. */
function compressResultJson(r: sessions.CompressResult) {
  if (r.status === 'landed') {
    return {
      status: r.status,
      block_id: r.blockId,
      kernel_ref: r.kernelRef,
      start: r.start,
      end: r.end,
      shadowed_seqs: r.shadowedSeqs,
      claim_tokens: r.claimTokens,
      tier: r.tier,
      adjusted: r.adjusted,
      recovered: r.recovered,
    };
  }
  return {
    status: r.status,
    detail: r.detail,
    ...(r.status === 'already_compressed' ? { covering_block_ids: r.coveringBlockIds } : {}),
    ...(r.status === 'guarded' ? { guarded_seqs: r.guardedSeqs, compressible: r.compressible.map(rangeJson) } : {}),
  };
}

/** `result` of `POST …/compress`. */
export function compressResult(res: sessions.CompressResponse) {
  return { generation: res.generation, results: res.results.map(compressResultJson) };
}

/** `result` of `GET …/blocks/{ref}/originals`. */
export function decompressResult(res: sessions.DecompressResponse) {
  return {
    block_id: res.blockId, kind: res.kind, kernel_ref: res.kernelRef, summary: res.summary, tier: res.tier,
    total: res.total, offset: res.offset, items: res.items.map((i) => ({ seq: i.seq, role: i.role, text: i.text })),
    next_offset: res.nextOffset ?? null, note: res.note,
  };
}

/** `SearchContext` (limit 0: the service's default). */
export function toSearchContextRequest(ref: SessionRef, b: SearchContextBody): sessions.SearchContextRequest {
  return { ...ref, query: b.query, limit: b.limit ?? 0 };
}

/** `result` of `POST …/search`. */
export function searchContextResult(res: sessions.SearchContextResponse) {
  return {
    hits: res.hits.map((h) => ({
      kind: h.kind,
      block_id: h.blockId,
      ...(h.seq !== undefined ? { seq: h.seq } : {}),
      ...(h.role !== '' ? { role: h.role } : {}),
      score: h.score,
      preview: h.preview,
    })),
  };
}

/** `RecoverOverflow`. */
export function toRecoverOverflowRequest(ref: SessionRef, b: RecoverOverflowBody): sessions.RecoverOverflowRequest {
  const f = b.failure;
  return {
    ...ref,
    requestId: b.request_id,
    agentId: b.agent_id,
    failure: { code: f.code, message: f.message ?? '', providerRequestId: f.provider_request_id ?? '' },
    aborted: b.aborted === true,
    window: windowOf(b.window),
    route: routeOf(b.route),
  };
}

function budgetJson(b: sessions.RetryBudget | undefined) {
  return { used: b?.used ?? 0, max: b?.max ?? 0 };
}

/** `result` of `POST …/overflow:recover`; `block` only when one landed. */
export function recoverOverflowResult(res: sessions.RecoverOverflowResponse) {
  return {
    action: res.action,
    reason: res.reason,
    ...(res.block
      ? { block: { block_id: res.block.blockId, start: res.block.start, end: res.block.end, hidden_count: res.block.hiddenCount, claim_tokens: res.block.claimTokens } }
      : {}),
    budget: budgetJson(res.budget),
    generation: res.generation,
  };
}

/** `result` of `POST …/agents/{aid}:status`. */
export function agentStatusResult(agentId: string, res: sessions.ReportAgentStatusResponse) {
  return { agent_id: agentId, budget: budgetJson(res.budget) };
}

/** `result` of `GET …/status`. */
export function statusResult(s: sessions.GetStatusResponse) {
  return {
    head: s.head, generation: s.generation, surface_nodes: s.surfaceNodes, rank_tokens: s.rankTokens,
    blocks: s.blocks.map((b) => ({
      block_id: b.blockId, kernel_ref: b.kernelRef, tier: b.tier, topic: b.topic, author: b.author,
      summary_seq: b.summarySeq, hidden_count: b.hiddenCount, claim_tokens: b.claimTokens, active: b.active,
    })),
    checkpoint_seqs: s.checkpointSeqs,
    budgets: s.budgets.map((b) => ({ agent_id: b.agentId, ...budgetJson(b.budget) })),
    claims: { appended: s.claims?.appended ?? 0, claimed: s.claims?.claimed ?? 0, projected: s.claims?.projected ?? 0 },
    estimator_id: s.estimatorId,
    dangling_compactions: s.danglingCompactions,
  };
}
