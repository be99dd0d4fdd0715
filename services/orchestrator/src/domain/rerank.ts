/**
 * The one cross-encoder merge of both pipelines (context-contract §10.4, retrieve-contract
 * "Stages"): items the provider scored come first, best score first (ties keep their previous
 * order); items it left out keep their previous order after them. Context mode keeps the
 * retrieval score it reports; retrieve ranks by the rerank score from then on.
 */
import type { rewrite } from '@ctxmesh/proto';

/** One item in its new place, with the score the cross-encoder gave it (null: not scored). */
export interface Reranked<T> {
  item: T;
  score: number | null;
}

/**
 * Order `items` by the provider's scores.
 * @param idOf the id an item was sent under (its index, its URI…)
 * @param scores the provider's answer; the first finite score of an id counts, the rest are ignored
 */
export function rerankOrder<T>(items: readonly T[], scores: readonly rewrite.RerankScore[], idOf: (item: T, index: number) => string): Array<Reranked<T>> {
  const byId = new Map<string, number>();
  for (const s of scores) if (Number.isFinite(s.score) && !byId.has(s.id)) byId.set(s.id, s.score);
  const all = items.map((item, i) => ({ item, i, score: byId.get(idOf(item, i)) ?? null }));
  const scored = all.filter((x) => x.score !== null).sort((a, b) => (b.score as number) - (a.score as number) || a.i - b.i);
  const rest = all.filter((x) => x.score === null);
  return [...scored, ...rest].map(({ item, score }) => ({ item, score }));
}
