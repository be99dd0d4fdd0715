/**
 * Steps 4 and 5: the block (context-contract §4–§6). The tier-reader reads the bodies the tiers
 * need (a failed read only costs the deeper tiers), then budget-render places every candidate
 * at a tier under the budget and renders the `<memory>` block.
 */
import { detailFromWire, planEvidenceReads } from '@ctxmesh/kernel';
import type { budgetRender, gather, tierReader } from '@ctxmesh/proto';
import { Code, CtxError, isCode } from '@ctxmesh/rpc';
import type { ContextInput } from './input';
import type { ContextRun } from './run';

/** The plan, its stats guaranteed. */
export type Plan = budgetRender.PlanRenderResponse & { stats: budgetRender.PlanStats };

/**
 * Step 4: the tier texts, aligned with the candidates. The evidence packing often needs no body
 * at all (a memory's abstract is its body, its overview is stored): then the round trip is
 * skipped.
 */
export async function readTiers(run: ContextRun, candidates: readonly gather.Candidate[], bestScore: number | undefined): Promise<tierReader.ReadTiersResponse> {
  const { input, ports, runner, budget } = run;
  const evidence = input.packing === 'evidence';
  const none: tierReader.ReadTiersResponse = { items: candidates.map(() => ({ read: false, overview: '', full: '', note: '' })), reads: 0 };
  if (candidates.length === 0) return none;
  if (evidence && !evidenceNeedsBodies(candidates, input, bestScore)) {
    runner.notRun('tier_read', 'NOTHING_TO_DO');
    return none;
  }
  try {
    return await runner.mandatory('tier_read', (b) =>
      ports.tierReader.readTiers(
        {
          identity: input.identity,
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
          maxTokens: input.maxTokens,
          detail: input.detail,
          tokenizer: input.tokenizer,
          codeOutline: input.codeOutline,
          packing: evidence ? input.packing : '',
          bestScore,
        },
        b,
      ),
    );
  } catch (err) {
    if (budget.exhausted || isCode(err, Code.DEADLINE_EXCEEDED, Code.CANCELLED)) throw err;
    return none;
  }
}

/**
 * Step 5: place and render (mandatory); `queries` are the planned queries the evidence packing
 * cuts long texts for (query-biased excerpts).
 * @throws CtxError INTERNAL when budget-render answers without stats
 */
export async function planBlock(
  run: ContextRun,
  candidates: readonly gather.Candidate[],
  tiers: tierReader.ReadTiersResponse,
  bestScore: number | undefined,
  queries: readonly string[] = [],
): Promise<Plan> {
  const { input, ports, runner } = run;
  const evidence = input.packing === 'evidence';
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
        maxTokens: input.maxTokens,
        detail: input.detail,
        tokenizer: input.tokenizer,
        packing: evidence ? input.packing : '',
        priors: evidence && input.quotas !== null ? input.quotas : [],
        bestScore,
        explain: input.explain,
        // Evidence cuts long texts to the sentences that hold the planned queries' terms.
        query: evidence ? queries.join('\n') : '',
      },
      b,
    ),
  );
  if (!plan.stats) throw new CtxError(Code.INTERNAL, 'INTERNAL', 'budget-render returned no stats');
  return plan as Plan;
}

/**
 * Whether the evidence packing would read any body for these candidates (the kernel's own read
 * decision, run here so that a request needing none skips the tier-reader). When in doubt (a
 * detail or tokenizer the kernel refuses) it answers yes and lets the tier-reader decide.
 */
function evidenceNeedsBodies(candidates: readonly gather.Candidate[], input: ContextInput, bestScore: number | undefined): boolean {
  try {
    const plan = planEvidenceReads(
      candidates.map((c) => ({ uri: c.uri, category: c.category, score: c.score, abstract: c.abstract, is_directory: c.isDirectory, origin: c.origin, ranked_score: c.rankedScore, stored_overview: c.overview })),
      input.maxTokens,
      detailFromWire(input.detail),
      input.tokenizer || 'estimate',
      { bestScore: bestScore ?? null },
    );
    return plan.reads.length > 0;
  } catch {
    return true;
  }
}
