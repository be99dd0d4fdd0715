/** BudgetRender.CountTokens. */
import { countTokens as count } from '@ctxmesh/kernel';
import type { budgetRender } from '@ctxmesh/proto';
import type { Handler } from '@ctxmesh/rpc';
import { runExact } from '../domain/offload';
import { asInvalidTokenizer } from './plan-render';

/** Count every text in one tokenizer, off the event loop when the texts are large (see `runExact`). */
export function countAll(texts: string[], tokenizer: string, signal: AbortSignal): Promise<number[]> {
  const chars = texts.reduce((n, t) => n + t.length, 0);
  return runExact({ fn: 'countTokens', texts, tokenizer }, tokenizer, chars, signal, () => texts.map((t) => count(t, tokenizer)));
}

export const countTokens: Handler<budgetRender.CountTokensRequest, budgetRender.CountTokensResponse> = async (req, ctx) => {
  try {
    return { counts: await countAll(req.texts, req.tokenizer || 'estimate', ctx.budget.signal) };
  } catch (err) {
    return asInvalidTokenizer(err);
  }
};
