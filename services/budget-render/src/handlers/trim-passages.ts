/** BudgetRender.TrimPassages: the retrieve token_budget trim. */
import { countTokens } from '@ctxmesh/kernel';
import type { budgetRender } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { trimToBudget } from '../domain/trim';
import { asInvalidTokenizer } from './plan-render';

export const trimPassages: Handler<budgetRender.TrimPassagesRequest, budgetRender.TrimPassagesResponse> = async (req) => {
  try {
    const tok = req.tokenizer || 'estimate';
    const passageTokens = req.passages.map((p) => countTokens(p.text, tok));
    const fixedTokens = req.fixed.map((f) => countTokens(f.text, tok));
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
