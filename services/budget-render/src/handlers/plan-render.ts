/** BudgetRender.PlanRender: plan tiers under the budget and render (context-contract §5, §6). */
import { planAndRender, UnknownTokenizerError } from '@ctxmesh/kernel';
import type { budgetRender } from '@ctxmesh/proto';
import { Code, CtxError, type Handler } from '@ctxmesh/rpc';
import { runExact } from '../domain/offload';

/** Parse a detail JSON (null, a tier string or a per-category object). */
export function parseDetail(json: string): unknown {
  if (!json) return null;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    throw new CtxError(Code.INVALID_ARGUMENT, 'BAD_DETAIL', 'detail_json is not valid JSON');
  }
}

/** Map kernel tokenizer errors to INVALID_ARGUMENT. */
export function asInvalidTokenizer(err: unknown): never {
  if (err instanceof UnknownTokenizerError) throw new CtxError(Code.INVALID_ARGUMENT, 'UNKNOWN_TOKENIZER', err.message);
  throw err;
}

export const planRender: Handler<budgetRender.PlanRenderRequest, budgetRender.PlanRenderResponse> = async (req, ctx) => {
  let res;
  try {
    const tokenizer = req.tokenizer || 'estimate';
    const args: Parameters<typeof planAndRender> = [
      req.items.map((i) => ({
        candidate: { uri: i.uri, category: i.category, score: i.score, abstract: i.abstract, is_directory: i.isDirectory, origin: i.origin },
        texts: { overview: i.overview, full: i.full },
      })),
      req.maxTokens,
      parseDetail(req.detailJson),
      tokenizer,
    ];
    const chars = req.items.reduce((n, i) => n + i.abstract.length + i.overview.length + i.full.length, 0);
    res = await runExact({ fn: 'planAndRender', args }, tokenizer, chars, ctx.budget.signal, () => planAndRender(...args));
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
      detailJson: JSON.stringify(s.detail ?? null),
      tierCounts: Object.entries(s.tier_counts).map(([name, count]) => ({ name, count })),
      floorTokens: s.fill.floor_tokens,
      overviewUpgrades: s.fill.overview_upgrades,
      fullUpgrades: s.fill.full_upgrades,
      spareUpgrades: s.fill.spare_upgrades,
    },
  };
};
