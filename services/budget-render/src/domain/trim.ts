/**
 * The retrieve `token_budget` trim (retrieve-contract "Trimming"): after ranking, drop the
 * lowest-scored passage until the total fits; survivors keep their order; memories and
 * group memories count but are never dropped.
 */

/** A trimmable item with its token count. */
export interface Sized {
  /** Id. */
  id: string;
  /** Score; the lowest goes first (ties: the later-ranked one goes first). */
  score: number;
  /** Tokens. */
  tokens: number;
}

/** Result of {@link trimToBudget}. */
export interface TrimResult {
  /** Ids kept, in original order. */
  keptIds: string[];
  /** Tokens of kept passages plus every fixed item. */
  tokensTotal: number;
  /** Passages removed. */
  droppedCount: number;
}

/**
 * Trim `passages` (in rank order) so that passages + `fixedTokens` fit `budget`; a budget of
 * 0 or less means no budget. Deterministic: the same input gives the same output.
 */
export function trimToBudget(passages: readonly Sized[], fixedTokens: number, budget: number): TrimResult {
  let total = fixedTokens + passages.reduce((a, p) => a + p.tokens, 0);
  if (budget <= 0 || total <= budget) return { keptIds: passages.map((p) => p.id), tokensTotal: total, droppedCount: 0 };
  // Drop order: ascending score, and among equal scores the later-ranked first.
  const order = passages.map((p, i) => ({ p, i })).sort((a, b) => a.p.score - b.p.score || b.i - a.i);
  const dropped = new Set<number>();
  for (const { p, i } of order) {
    if (total <= budget) break;
    dropped.add(i);
    total -= p.tokens;
  }
  return { keptIds: passages.filter((_, i) => !dropped.has(i)).map((p) => p.id), tokensTotal: total, droppedCount: dropped.size };
}
