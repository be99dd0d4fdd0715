/**
 * The context-assembly pipeline (context-contract §1.6 context, §3–§8): ledger turn →
 * optional query expansion → gather → tier read → plan/render → optional digest rewrite
 * → ledger record → stats (what happened; the gateway writes the JSON).
 */
import { DEFAULT_PACKING, detailFromWire, planEvidenceReads, resolvePacking, UnknownPackingError, type Packing } from '@ctxmesh/kernel';
import type { budgetRender, common, gather, orchestrator, tierReader } from '@ctxmesh/proto';
import { Code, CtxError, isCode, type Budget } from '@ctxmesh/rpc';
import { activeTraceId } from '@ctxmesh/telemetry';
import { contextExplain } from './explain';
import type { Ports } from './ports';
import { LatencyEstimator, StageRunner, statusOutcome, type StageRecord } from './stages';

/** Pipeline settings from the orchestrator's config. */
export interface ContextSettings {
  /** Intent analysis (query expansion) enabled (`CTXMESH_ENABLE_INTENT`). */
  enableIntent: boolean;
  /** A chat model is configured in the rewrite service. */
  modelConfigured: boolean;
  /** Expansion fuse in ms (default 5000). */
  expansionTimeoutMs: number;
  /** Digest rewrite fuse in ms (default 30000). */
  rewriteTimeoutMs: number;
  /** Reserve kept for mandatory legs when admitting optional stages, ms. */
  renderReserveMs: number;
  /** Messages read from the session for expansion. */
  expansionMessages: number;
  /**
   * Re-order the gathered candidates with the cross-encoder (`CTXMESH_RERANK_URL` configured
   * and `SEARCH_RERANKING_ENABLED`). Off by default: it changes the order the plugins get.
   * @default false
   */
  rerank?: boolean;
  /** Rerank stage timeout, ms (`SEARCH_RERANKING_TIMEOUT_MS`). @default 8000 */
  rerankTimeoutMs?: number;
  /**
   * Packing of a request that names none (`CTXMESH_CONTEXT_PACKING`). `compat` keeps the
   * contract's bytes for every client that does not ask for another.
   * @default "compat"
   */
  defaultPacking?: Packing;
}

/** Output of the pipeline. */
export interface ContextResult {
  entries: budgetRender.PlanRenderResponse['entries'];
  rendered: string;
  digest: string;
  /** What the assembly did (context-contract §6.3). */
  stats: orchestrator.ContextStats;
  stages: StageRecord[];
  runner: StageRunner;
  /** With `explain`: the fate of every node considered (gathering's, then planning's). */
  fates: common.CandidateFate[];
  /** The explanation, only when the request asked for it. */
  explain?: orchestrator.ContextExplain;
}


/**
 * Assemble context for one validated request.
 * @throws CtxError INVALID_ARGUMENT from gather (empty query, image-only on a text embedder) or
 *   for an unknown `packing`, DEADLINE_EXCEEDED/CANCELLED when the request's budget ends,
 *   INTERNAL when a mandatory leg fails
 */
export async function assembleContext(
  req: orchestrator.AssembleContextRequest,
  ports: Ports,
  budget: Budget,
  settings: ContextSettings,
  estimator: LatencyEstimator,
  observe?: (r: StageRecord) => void,
): Promise<ContextResult> {
  const runner = new StageRunner({
    budget,
    timeBudgetMs: req.timeBudgetMs > 0 ? req.timeBudgetMs : null,
    estimator,
    reserveMs: settings.renderReserveMs,
    observe,
  });
  const identity = req.identity;
  let packing: Packing;
  try {
    packing = req.packing ? resolvePacking(req.packing) : (settings.defaultPacking ?? DEFAULT_PACKING);
  } catch (err) {
    if (err instanceof UnknownPackingError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_PACKING', err.message, { cause: err });
    throw err;
  }
  const evidence = packing === 'evidence';

  // 1. Ledger turn: every context request naming a session advances its clock.
  const dedup: orchestrator.DedupStats = { turns: req.dedupTurns, status: 'off', cooled: 0, turn: undefined };
  let cooled: string[] = [];
  // The turn each cooled URI was served at (for fates: "cooled at turn T").
  const cooledAt = new Map<string, number>();
  let ledgerTurn: number | null = null;
  if (req.sessionId) {
    try {
      const t = await runner.mandatory('ledger', (b) =>
        ports.ledger.beginTurn({ identity, sessionId: req.sessionId, dedupTurns: req.dedupTurns }, b),
      );
      if (t.status !== 'unavailable') ledgerTurn = t.turn;
      if (req.dedupTurns > 0) {
        dedup.status = t.status;
        // Only a loaded ledger has a turn; proto3 sends 0 for "none" (`unavailable`).
        if (t.status === 'new' || t.status === 'ok') {
          dedup.turn = t.turn;
          cooled = t.cooledUris;
          dedup.cooled = cooled.length;
          cooled.forEach((u, i) => {
            if (t.cooledTurns[i] !== undefined) cooledAt.set(u, Number(t.cooledTurns[i]));
          });
        }
      }
    } catch (err) {
      if (budget.exhausted) throw err;
      // A ledger outage degrades dedup; the request still answers.
      if (req.dedupTurns > 0) dedup.status = 'unavailable';
    }
  }

  // 2. Query expansion (optional, fails closed to the original query).
  let planned = [req.query];
  let expansion = 'off';
  const wantsExpansion = req.queryExpansion !== 'off' && !!req.sessionId && settings.enableIntent;
  if (!wantsExpansion) runner.notRun('query_expansion', req.queryExpansion === 'off' ? 'NOT_REQUESTED' : 'NOT_CONFIGURED');
  else if (!settings.modelConfigured) runner.notRun('query_expansion', 'NOT_CONFIGURED');
  else {
    let failed = false;
    const out = await runner.optional('query_expansion', settings.expansionTimeoutMs, async (b, timeoutMs) => {
      const ctx = await ports.sessions.getSearchContext(
        { identity, sessionId: req.sessionId, create: true, limit: settings.expansionMessages },
        b,
      );
      if (ctx.messages.length === 0 && !ctx.archiveOverview) return null;
      const r = await ports.rewrite.expandQuery(
        { query: req.query, messages: ctx.messages.map((m) => ({ role: m.role, text: m.content })), archiveOverview: ctx.archiveOverview, timeoutMs },
        b,
      );
      if (r.status === 'failed') failed = true;
      return r;
    });
    if (out && out.status === 'used') {
      planned = out.queries;
      expansion = 'used';
    } else if (failed || (out === undefined && runner.records.at(-1)?.outcome !== 'skipped')) {
      expansion = 'failed';
    }
  }
  const queries = planned.filter((q) => q !== '');
  const plannedQueries = queries.length > 0 ? queries : [''];

  // 3. Gather (mandatory). Invalid input surfaces as 400; an unavailable gather degrades.
  const excluded = [...new Set([...req.excludeUris, ...cooled])];
  let gathered: gather.GatherCandidatesResponse;
  try {
    gathered = await runner.mandatory('gather', (b) =>
      ports.gather.gatherCandidates(
        {
          identity,
          queries: plannedQueries,
          imageUrl: req.imageUrl,
          filter: req.filter,
          limit: req.limit,
          scoreThreshold: req.scoreThreshold,
          bucketed: req.bucketed,
          quotas: req.quotas,
          peerScope: req.peerScope,
          otherPeerPenalties: req.otherPeerPenalties,
          excludedUris: excluded,
          asOfMs: req.asOfMs,
          packing: evidence ? packing : '',
          maxTokens: req.maxTokens,
          tokenizer: req.tokenizer,
          explain: req.explain,
          cooledUris: req.explain ? cooled : [],
        },
        b,
      ),
    );
  } catch (err) {
    if (budget.exhausted || isCode(err, Code.INVALID_ARGUMENT, Code.DEADLINE_EXCEEDED, Code.CANCELLED)) throw err;
    const e = err as CtxError;
    gathered = { candidates: [], searched: [], excluded: 0, retrievalErrors: [`${e.reason ?? 'Error'}: ${e.message}`.slice(0, 200)], evidence: undefined, fates: [] };
  }
  let candidates = gathered.candidates;

  // 3b. Cross-encoder rerank (optional): re-orders the candidates; `score` stays the
  // retrieval score the contract reports. Candidates the reranker leaves out keep their place
  // after the scored ones.
  if (!settings.rerank) runner.notRun('rerank', 'NOT_CONFIGURED');
  else if (candidates.length < 2) runner.notRun('rerank', 'NOTHING_TO_DO');
  else {
    const documents = candidates.map((c, i) => ({ id: String(i), text: c.abstract || c.uri }));
    const out = await runner.optional('rerank', settings.rerankTimeoutMs ?? 8000, async (b, timeoutMs) =>
      statusOutcome('rerank', await ports.rewrite.rerank({ query: req.query, documents, timeoutMs }, b)),
    );
    if (out && out.scores.length > 0) {
      const byId = new Map(out.scores.map((x) => [x.id, x.score]));
      const scored = candidates.map((c, i) => ({ c, i, r: byId.get(String(i)) })).filter((x) => x.r !== undefined);
      scored.sort((a, b) => (b.r as number) - (a.r as number) || a.i - b.i);
      const rest = candidates.filter((_, i) => !byId.has(String(i)));
      candidates = [...scored.map((x) => x.c), ...rest];
    }
  }

  // 4. Tier read (mandatory, but a failed read only costs the deeper tiers). The evidence
  // packing often needs no body at all (a memory's abstract is its body, its overview is
  // stored): then the tier-reader's round trip is skipped.
  let tiers: tierReader.ReadTiersResponse = { items: candidates.map(() => ({ read: false, overview: '', full: '', note: '' })), reads: 0 };
  if (evidence && candidates.length > 0 && !evidenceNeedsBodies(candidates, req, gathered.evidence?.bestScore)) {
    runner.notRun('tier_read', 'NOTHING_TO_DO');
  } else if (candidates.length > 0) {
    try {
      tiers = await runner.mandatory('tier_read', (b) =>
        ports.tierReader.readTiers(
          {
            identity,
            candidates: candidates.map((c) => ({
              uri: c.uri,
              category: c.category,
              abstract: c.abstract,
              isDirectory: c.isDirectory,
              openContext: c.openContext,
              score: c.score,
              rankedScore: c.rankedScore,
              storedOverview: evidence ? c.overview : '',
            })),
            maxTokens: req.maxTokens,
            detail: req.detail,
            tokenizer: req.tokenizer,
            codeOutline: req.codeOutline,
            packing: evidence ? packing : '',
            bestScore: gathered.evidence?.bestScore,
          },
          b,
        ),
      );
    } catch (err) {
      if (budget.exhausted || isCode(err, Code.DEADLINE_EXCEEDED, Code.CANCELLED)) throw err;
    }
  }

  // 5. Plan and render (mandatory).
  const plan = await runner.mandatory('budget_render', (b) =>
    ports.budgetRender.planRender(
      {
        items: candidates.map((c, i) => ({
          uri: c.uri,
          category: c.category,
          score: c.score,
          origin: c.origin,
          isDirectory: c.isDirectory,
          abstract: c.abstract,
          // Evidence serves the index's stored overview for a node whose body it did not read.
          overview: evidence && !tiers.items[i]?.read ? c.overview : (tiers.items[i]?.overview ?? ''),
          full: tiers.items[i]?.full ?? '',
          rankedScore: c.rankedScore,
        })),
        maxTokens: req.maxTokens,
        detail: req.detail,
        tokenizer: req.tokenizer,
        packing: evidence ? packing : '',
        priors: evidence && req.bucketed ? req.quotas : [],
        bestScore: gathered.evidence?.bestScore,
        explain: req.explain,
      },
      b,
    ),
  );
  if (!plan.stats) throw new CtxError(Code.INTERNAL, 'INTERNAL', 'budget-render returned no stats');
  let rendered = plan.rendered;
  const entries = plan.entries;

  // 6. Digest rewrite (optional, fails closed: rendered is kept). "auto" is decided by the
  // rewrite service, which owns the model configuration: it answers `off` without a model.
  let rewrite = 'off';
  let rewriteUsage: orchestrator.TokenUsage | undefined;
  let rewriteEngine = '';
  let digest = '';
  if (req.rewrite !== 'on' && req.rewrite !== 'auto') runner.notRun('rewrite', 'NOT_REQUESTED');
  else if (entries.length === 0) runner.notRun('rewrite', 'NO_ENTRIES');
  else {
    const out = await runner.optional('rewrite', settings.rewriteTimeoutMs, (b, timeoutMs) =>
      ports.rewrite.rewriteDigest(
        {
          query: req.query,
          rendered,
          servedUris: entries.map((e) => e.uri),
          maxBullets: Math.max(1, req.rewriteMaxBullets),
          timeoutMs,
          sources: entries.map((e) => ({ uri: e.uri, text: e.text })),
          onlyIfModel: req.rewrite === 'auto',
        },
        b,
      ),
    );
    const last = runner.records.at(-1);
    if (out) {
      rewrite = out.status;
      rewriteEngine = out.engine;
      if (out.usage) rewriteUsage = { promptTokens: out.usage.promptTokens, completionTokens: out.usage.completionTokens };
      if (out.status === 'ok') digest = out.digest;
      if (out.status === 'no_relevant') rendered = '';
      // "auto" without a model: nothing ran, so telemetry says so (and it is not a degradation).
      if (out.status === 'off' && last) Object.assign(last, { outcome: 'skipped', reason: 'NOT_CONFIGURED' });
    } else {
      rewrite = last?.outcome === 'timeout' ? 'timeout' : 'failed';
    }
  }

  // 7. Ledger record: every returned entry, unless nothing was relevant.
  if (req.sessionId && req.dedupTurns > 0 && (dedup.status === 'new' || dedup.status === 'ok') && ledgerTurn !== null && entries.length > 0 && rewrite !== 'no_relevant') {
    try {
      const r = await runner.mandatory('ledger_record', (b) =>
        ports.ledger.recordServed(
          {
            identity,
            sessionId: req.sessionId,
            dedupTurns: req.dedupTurns,
            turn: ledgerTurn!,
            entries: entries.map((e) => ({ uri: e.uri, detail: e.detail })),
          },
          b,
        ),
      );
      if (r.status === 'write_failed') dedup.status = 'write_failed';
    } catch (err) {
      if (budget.exhausted) throw err;
      dedup.status = 'write_failed';
    }
  }

  // 8. Stats: what happened (§6.3); the gateway decides which keys a request sees.
  const s = plan.stats;
  const ev = gathered.evidence;
  const stats: orchestrator.ContextStats = {
    searched: gathered.searched,
    candidates: candidates.length,
    excluded: gathered.excluded,
    origins: countOrigins(candidates),
    peerScope: req.peerScope === 'actor' ? 'actor' : 'all',
    quotas: req.bucketed ? { counts: req.quotas } : undefined,
    retrievalErrors: gathered.retrievalErrors.slice(0, 5),
    maxTokens: s.maxTokens,
    usedTokens: s.usedTokens,
    perEntryCap: s.perEntryCap,
    returned: s.returned,
    dropped: s.dropped,
    deduped: s.deduped,
    detail: s.detail,
    tierCounts: s.tierCounts,
    fill: { floorTokens: s.floorTokens, overviewUpgrades: s.overviewUpgrades, fullUpgrades: s.fullUpgrades, spareUpgrades: s.spareUpgrades },
    purpose: req.purpose,
    queryExpansion: expansion,
    plannedQueries,
    scoreThreshold: req.scoreThreshold,
    otherPeerPenalties: req.otherPeerPenalties,
    rewrite,
    rewriteUsage,
    dedup,
    rewriteEngine,
    tokenizer: req.tokenizer,
    packing,
    evidence:
      packing !== DEFAULT_PACKING
        ? { rounds: ev?.rounds ?? 0, widths: ev?.widths ?? [], relevanceFloor: ev?.relevanceFloor ?? s.relevanceFloor, belowFloor: (ev?.belowFloor ?? 0) + s.belowFloor }
        : undefined,
    timeBudgetMs: req.timeBudgetMs,
    // Stage accounting belongs to a time budget (§10.2).
    degradedStages: req.timeBudgetMs > 0 ? runner.degraded() : [],
    stageMs: req.timeBudgetMs > 0 ? Object.entries(runner.timings()).map(([name, value]) => ({ name, value })) : [],
  };
  const fates = req.explain
    ? [...gathered.fates.map((f) => (f.fate === 'cooled' && cooledAt.has(f.uri) ? { ...f, cooledTurn: cooledAt.get(f.uri) } : f)), ...plan.fates]
    : [];
  const explain = req.explain
    ? contextExplain({
        traceId: activeTraceId(),
        packing,
        candidates,
        gatherFates: fates.slice(0, fates.length - plan.fates.length),
        planFates: plan.fates,
        records: runner.records,
        usedTokens: s.usedTokens,
        floorTokens: s.floorTokens,
      })
    : undefined;
  return { entries, rendered, digest, stats, stages: runner.records, runner, fates, ...(explain ? { explain } : {}) };
}

/**
 * Whether the evidence packing would read any body for these candidates (the kernel's own read
 * decision, run here so that a request needing none skips the tier-reader). When in doubt (a
 * detail or tokenizer the kernel refuses) it answers yes and lets the tier-reader decide.
 */
function evidenceNeedsBodies(candidates: gather.Candidate[], req: orchestrator.AssembleContextRequest, bestScore: number | undefined): boolean {
  try {
    const plan = planEvidenceReads(
      candidates.map((c) => ({ uri: c.uri, category: c.category, score: c.score, abstract: c.abstract, is_directory: c.isDirectory, origin: c.origin, ranked_score: c.rankedScore, stored_overview: c.overview })),
      req.maxTokens,
      detailFromWire(req.detail),
      req.tokenizer || 'estimate',
      { bestScore: bestScore ?? null },
    );
    return plan.reads.length > 0;
  } catch {
    return true;
  }
}

function countOrigins(candidates: gather.Candidate[]): orchestrator.OriginCounts {
  const o = { actorPeer: 0, self: 0, otherPeer: 0 };
  for (const c of candidates) {
    if (c.origin === 'actor_peer') o.actorPeer += 1;
    else if (c.origin === 'self') o.self += 1;
    else if (c.origin === 'other_peer') o.otherPeer += 1;
  }
  return o;
}
