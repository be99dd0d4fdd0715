/**
 * Planned queries (context-contract §3.1, §8.1): what every gathering search runs once per.
 */

/** At most this many queries come out of query expansion (original included). */
export const MAX_PLANNED_QUERIES = 3;

/**
 * Planned queries from the expansion output: empty strings removed; `[""]` when nothing
 * remains (so a blank request still makes its retrieval calls, which then reject it).
 * @returns a new array
 */
export function planQueries(queries: readonly string[]): string[] {
  const kept = queries.filter((q) => q !== '');
  return kept.length > 0 ? kept : [''];
}

/**
 * Merge a successful expansion (§8.1): the original query first, then each planned query
 * trimmed, non-empty and not already present, stopping at `max` queries in total.
 * @param max total cap @default 3
 */
export function mergeExpandedQueries(original: string, planned: readonly string[], max: number = MAX_PLANNED_QUERIES): string[] {
  const out = [original];
  for (const raw of planned) {
    if (out.length >= max) break;
    const q = typeof raw === 'string' ? raw.trim() : '';
    if (q !== '' && !out.includes(q)) out.push(q);
  }
  return out;
}
