/** BudgetRender.PlanRender: plan tiers under the budget and render (context-contract §5, §6). */
import { detailFromWire, detailToWire, fateToWire, planAndRender, planEvidence, resolvePacking, UnknownPackingError, UnknownTokenizerError, type PlanResult } from '@ctxmesh/kernel';
import type { budgetRender } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { runExact } from '../domain/offload';

/** Map kernel tokenizer and packing errors to INVALID_ARGUMENT. */
export function asInvalidTokenizer(err: unknown): never {
  if (err instanceof UnknownTokenizerError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_TOKENIZER', err.message);
  if (err instanceof UnknownPackingError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_PACKING', err.message);
  throw err;
}

/**
 * Plan and render with the packing the request names (`""`/`compat`: §5 as written; `evidence`:
 * the evidence packing with the request's priors and best score), exact-tokenizer work over
 * large texts off the event loop. The items' `ranked_score` is read by the evidence packing only.
 */
export const planRender: Handler<budgetRender.PlanRenderRequest, budgetRender.PlanRenderResponse> = async (req, ctx) => {
  let res: PlanResult;
  try {
    const tokenizer = req.tokenizer || 'estimate';
    const items = req.items.map((i) => ({
      candidate: { uri: i.uri, category: i.category, score: i.score, abstract: i.abstract, is_directory: i.isDirectory, origin: i.origin, ranked_score: i.rankedScore },
      texts: { overview: i.overview, full: i.full },
    }));
    const detail = detailFromWire(req.detail);
    const chars = req.items.reduce((n, i) => n + i.abstract.length + i.overview.length + i.full.length, 0);
    if (resolvePacking(req.packing) === 'evidence') {
      const args: Parameters<typeof planEvidence> = [
        items,
        req.maxTokens,
        detail,
        tokenizer,
        {
          priors: req.priors.length > 0 ? Object.fromEntries(req.priors.map((p) => [p.name, Number(p.count)])) : null,
          bestScore: req.bestScore ?? null,
          fates: req.explain,
          query: req.query || null,
        },
      ];
      res = await runExact({ fn: 'planEvidence', args }, tokenizer, chars, ctx.budget.signal, () => planEvidence(...args));
    } else {
      const args: Parameters<typeof planAndRender> = [items, req.maxTokens, detail, tokenizer, { fates: req.explain }];
      res = await runExact({ fn: 'planAndRender', args }, tokenizer, chars, ctx.budget.signal, () => planAndRender(...args));
    }
  } catch (err) {
    asInvalidTokenizer(err);
  }
  const s = res.stats;
  return {
    entries: res.entries.map((e) => ({ uri: e.uri, category: e.category, score: e.score, detail: e.detail, text: e.text, origin: e.origin })),
    rendered: res.rendered,
    stats: {
      maxTokens: s.max_tokens,
      usedTokens: s.used_tokens,
      perEntryCap: s.per_entry_cap,
      returned: s.returned,
      dropped: s.dropped,
      deduped: s.deduped,
      detail: detailToWire(s.detail),
      tierCounts: Object.entries(s.tier_counts).map(([name, count]) => ({ name, count })),
      floorTokens: s.fill.floor_tokens,
      overviewUpgrades: s.fill.overview_upgrades,
      fullUpgrades: s.fill.full_upgrades,
      spareUpgrades: s.fill.spare_upgrades,
      belowFloor: res.evidence?.belowFloor ?? 0,
      relevanceFloor: res.evidence && Number.isFinite(res.evidence.relevanceFloor) ? res.evidence.relevanceFloor : undefined,
    },
    fates: (res.fates ?? []).map(fateToWire),
  };
};
