/**
 * `ctxmesh search "<query>"`: what an agent would get, printed for a human.
 */
import { callGateway, type ClientOptions } from './http';

/** Search options from the command line. */
export interface SearchArgs {
  query: string;
  mode: 'list' | 'context' | 'find';
  limit?: number;
  maxTokens?: number;
  purpose?: 'chat' | 'coding';
  targetUri?: string;
  json: boolean;
}

interface ListHit {
  context_type: string;
  uri: string;
  level: number;
  score: number;
  abstract: string;
}

/** Run the search and return the text to print. */
export async function runSearch(args: SearchArgs, client: ClientOptions): Promise<string> {
  if (args.mode === 'context') {
    const body: Record<string, unknown> = { query: args.query, mode: 'context' };
    if (args.maxTokens !== undefined) body.max_tokens = args.maxTokens;
    if (args.limit !== undefined) body.limit = args.limit;
    if (args.purpose) body.purpose = args.purpose;
    const r = await callGateway<{ entries: Array<{ uri: string; detail: string; score: number }>; rendered: string; digest: string; stats: Record<string, unknown> }>(
      client,
      'POST',
      '/api/v1/search/search',
      body,
    );
    if (args.json) return JSON.stringify(r, null, 2);
    const s = r.stats;
    const head = `# ${r.entries.length} entries, ${String(s.used_tokens)}/${String(s.max_tokens)} tokens, tiers ${JSON.stringify(s.tier_counts)}`;
    return [head, r.digest || r.rendered || '(nothing relevant)'].join('\n');
  }
  const path = args.mode === 'find' ? '/api/v1/search/find' : '/api/v1/search/search';
  const body: Record<string, unknown> = { query: args.query };
  if (args.limit !== undefined) body.limit = args.limit;
  if (args.targetUri) body.target_uri = args.targetUri;
  const r = await callGateway<{ memories: ListHit[]; resources: ListHit[]; skills: ListHit[]; total: number }>(client, 'POST', path, body);
  if (args.json) return JSON.stringify(r, null, 2);
  const hits = [...r.memories, ...r.resources, ...r.skills].sort((a, b) => b.score - a.score);
  if (hits.length === 0) return '(no hits)';
  return hits
    .map((h) => `${h.score.toFixed(3)}  ${h.context_type.padEnd(8)} ${h.uri}\n         ${(h.abstract || '').replace(/\s+/g, ' ').slice(0, 160)}`)
    .join('\n');
}
