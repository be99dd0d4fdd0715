/** BudgetRender.TrimPassages: the retrieve token_budget trim. */
import type { budgetRender } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { trimToBudget } from '../domain/trim';
import { countAll } from './count-tokens';
import { asInvalidTokenizer } from './plan-render';

export const trimPassages: Handler<budgetRender.TrimPassagesRequest, budgetRender.TrimPassagesResponse> = async (req, ctx) => {
  try {
    const tok = req.tokenizer || 'estimate';
    const counts = await countAll([...req.passages.map((p) => p.text), ...req.fixed.map((f) => f.text)], tok, ctx.budget.signal);
    const passageTokens = counts.slice(0, req.passages.length);
    const fixedTokens = counts.slice(req.passages.length);
    const r = trimToBudget(
      req.passages.map((p, i) => ({ id: p.id, score: p.score, tokens: passageTokens[i] })),
      fixedTokens.reduce((a, b) => a + b, 0),
      req.tokenBudget,
    );
    return { keptIds: r.keptIds, passageTokens, fixedTokens, tokensTotal: r.tokensTotal, droppedCount: r.droppedCount };
  } catch (err) {
    return asInvalidTokenizer(err);
  }
};
