/** BudgetRender.CountTokens. */
import { countTokens as count } from '@ctxmesh/kernel';
import type { budgetRender } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { asInvalidTokenizer } from './plan-render';

export const countTokens: Handler<budgetRender.CountTokensRequest, budgetRender.CountTokensResponse> = async (req) => {
  try {
    return { counts: req.texts.map((t) => count(t, req.tokenizer || 'estimate')) };
  } catch (err) {
    return asInvalidTokenizer(err);
  }
};
