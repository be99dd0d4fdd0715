/**
 * Step 2: the queries to search (context-contract §8.1). Query expansion is optional and fails
 * closed to the original query: the session's recent messages and archive overview go to the
 * rewrite service, which answers planned queries or nothing.
 */
import { CONTEXT_STAGES, factsOf, type ContextRun } from './run';

/** What step 2 decided. */
export interface PlannedQueries {
  /** Queries to search, original first; `[""]` when there are none. */
  queries: string[];
  /** `stats.query_expansion`: `off`, `used` or `failed`. */
  expansion: 'off' | 'used' | 'failed';
}

/** Step 2: expand the query when the stage table lets it run. */
export async function planQueries(run: ContextRun): Promise<PlannedQueries> {
  const { input, ports, settings, runner } = run;
  let planned = [input.query];
  let expansion: PlannedQueries['expansion'] = 'off';
  let failed = false;
  const out = await runner.stage(CONTEXT_STAGES.queryExpansion, factsOf(run), async (b, timeoutMs) => {
    const ctx = await ports.sessions.getSearchContext({ identity: input.identity, sessionId: input.sessionId, create: true, limit: settings.expansionMessages }, b);
    if (ctx.messages.length === 0 && !ctx.archiveOverview) return null;
    const r = await ports.rewrite.expandQuery(
      { query: input.query, messages: ctx.messages.map((m) => ({ role: m.role, text: m.content })), archiveOverview: ctx.archiveOverview, timeoutMs },
      b,
    );
    if (r.status === 'failed') failed = true;
    return r;
  });
  if (out && out.status === 'used') {
    planned = out.queries;
    expansion = 'used';
  } else if (failed || (out === undefined && runner.records.at(-1)?.outcome !== 'skipped')) {
    expansion = 'failed';
  }
  const queries = planned.filter((q) => q !== '');
  return { queries: queries.length > 0 ? queries : [''], expansion };
}
