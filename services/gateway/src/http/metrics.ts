/**
 * The `route` label of the gateway's HTTP metrics: one spelling per route, the one the README
 * and the contracts use (`/api/v1/sessions/{sid}/surface:project`), instead of the router's
 * pattern syntax (`:sid`, `::` for a literal colon) or a parameter that stands for a whole
 * segment (`:agentStatus` for `{aid}:status`).
 */

/** Route patterns whose documented spelling is not a plain rewrite of the router's. */
const SPELLED: Readonly<Record<string, string>> = {
  '/api/v1/sessions/:sid/agents/:agentStatus': '/api/v1/sessions/{sid}/agents/{aid}:status',
};

/** The label of requests that matched no route (404s, URLs rejected before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Documented spelling of a router pattern: `:name` → `{name}`, `::` → `:`.
 * @param pattern the matched route's pattern (`request.routeOptions.url`), or undefined when none matched
 * @returns the label, or {@link UNMATCHED_ROUTE}
 */
export function routeLabel(pattern: string | undefined): string {
  if (pattern === undefined || pattern === '') return UNMATCHED_ROUTE;
  const spelled = SPELLED[pattern];
  if (spelled) return spelled;
  // A literal colon is written `::` in find-my-way; protect it before rewriting parameters.
  return pattern
    .split('::')
    .map((part) => part.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}'))
    .join(':');
}
