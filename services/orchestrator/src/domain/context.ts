/**
 * The context-assembly pipeline (context-contract §1.6 context, §3–§8), one step per file
 * under `context/`:
 *
 * 1. `session.ts` — the session's ledger turn (§7)
 * 2. `queries.ts` — optional query expansion (§8.1)
 * 3. `candidates.ts` — gathering, then the optional cross-encoder order (§3, §10.4)
 * 4. `block.ts` — the tier bodies (§4, §5.4), then 5. plan and render (§5, §6)
 * 6. `digest.ts` — the optional digest rewrite (§8.2)
 * 7. `session.ts` — what the session was shown
 * 8. `report.ts` — stats, fates and the explanation
 *
 * The request arrives as a {@link ContextInput} (`context/input.ts`). Mandatory steps always
 * run; optional ones are declared in `context/run.ts` `CONTEXT_STAGES` and admitted by the
 * {@link StageRunner} against the time budget.
 */
import type { common, orchestrator } from '@ctxmesh/proto';
import type { Budget } from '@ctxmesh/rpc';
import { activeTraceId } from '@ctxmesh/telemetry';
import type { Ports } from './ports';
import { LatencyEstimator, StageRunner, type StageRecord } from './stages';
import { planBlock, readTiers } from './context/block';
import { gatherCandidates, rerankCandidates } from './context/candidates';
import { writeDigest } from './context/digest';
import type { ContextInput, ContextSettings } from './context/input';
import { planQueries } from './context/queries';
import { contextFates, contextStats, explanation } from './context/report';
import type { ContextRun } from './context/run';
import { beginTurn, recordServed } from './context/session';

export { contextInput, type ContextInput, type ContextSettings } from './context/input';
export { CONTEXT_STAGES } from './context/run';

/** What an assembly needs besides its input and budget. */
export interface ContextDeps {
  ports: Ports;
  settings: ContextSettings;
  /** Latency estimates shared by the orchestrator's requests (admission of optional stages). */
  estimator: LatencyEstimator;
  /** Stage metrics hook. */
  observe?: (r: StageRecord) => void;
}

/** Output of the pipeline. */
export interface ContextResult {
  entries: common.Entry[];
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
 * Assemble context for one request.
 * @throws CtxError INVALID_ARGUMENT from gather (empty query, image-only on a text embedder),
 *   DEADLINE_EXCEEDED/CANCELLED when the request's budget ends, INTERNAL when a mandatory leg fails
 */
export async function assembleContext(input: ContextInput, budget: Budget, deps: ContextDeps): Promise<ContextResult> {
  const runner = new StageRunner({ budget, timeBudgetMs: input.timeBudgetMs, estimator: deps.estimator, reserveMs: deps.settings.renderReserveMs, observe: deps.observe });
  const run: ContextRun = { input, ports: deps.ports, settings: deps.settings, budget, runner };

  const turn = await beginTurn(run);
  const planned = await planQueries(run);
  const gathered = await gatherCandidates(run, planned.queries, turn);
  const candidates = await rerankCandidates(run, gathered.candidates);
  const bestScore = gathered.evidence?.bestScore;
  const tiers = await readTiers(run, candidates, bestScore);
  const plan = await planBlock(run, candidates, tiers, bestScore, planned.queries);
  const digest = await writeDigest(run, plan.rendered, plan.entries);
  await recordServed(run, turn, plan.entries, digest.rewrite);

  const produced = { turn, planned, gathered, candidates, plan, digest };
  const fates = contextFates(run, produced);
  const explain = explanation(run, produced, fates, activeTraceId());
  return {
    entries: plan.entries,
    rendered: digest.rendered,
    digest: digest.digest,
    stats: contextStats(run, produced),
    stages: runner.records,
    runner,
    fates,
    ...(explain ? { explain } : {}),
  };
}
