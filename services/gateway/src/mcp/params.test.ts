import { DomainError } from '../domain';
import {
  DETAIL_COMBINATION_MESSAGE,
  MCP_LIST_MIN_SCORE,
  mcpDetail,
  mcpSearchParams,
  PENALTY_COMBINATION_MESSAGE,
  TARGET_URI_MESSAGE,
  type McpSearchArgs,
} from './params';

const ctx = { identity: { userId: 'alice', role: 'user' as const }, nowMs: Date.UTC(2026, 0, 1) };
const context = (args: Omit<McpSearchArgs, 'mode'>) => {
  const v = mcpSearchParams({ ...args, mode: 'context' }, ctx);
  if (v.mode !== 'context') throw new Error('expected context mode');
  return v.params;
};
const list = (args: McpSearchArgs) => {
  const v = mcpSearchParams(args, ctx);
  if (v.mode !== 'list') throw new Error('expected list mode');
  return v.params;
};
const failure = (args: McpSearchArgs): DomainError => {
  try {
    mcpSearchParams(args, ctx);
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
};

describe('mcpSearchParams (context mode)', () => {
  it('applies the §1.5 defaults: no threshold, flat, no pin, rewrite off, expansion auto', () => {
    const p = context({ query: 'q' });
    expect(p).toMatchObject({
      scoreThreshold: null,
      quotas: null,
      detail: null,
      rewrite: 'off',
      queryExpansion: 'auto',
      maxTokens: 1600,
      dedupTurns: 0,
      limit: 10,
      peerScope: 'all',
      rewriteMaxBullets: 6,
      filter: null,
      imageUrl: null,
      excludeUris: [],
      ignored: [],
    });
    expect(p.otherPeerPenalties.events).toBe(0.1);
  });

  it('maps rewrite "auto" (and true) to always attempt, not the configuration-dependent HTTP "auto"', () => {
    expect(context({ query: 'q', rewrite: 'auto' }).rewrite).toBe('on');
    expect(context({ query: 'q', rewrite: true }).rewrite).toBe('on');
    expect(context({ query: 'q', rewrite: 'off' }).rewrite).toBe('off');
    expect(context({ query: 'q', rewrite: false }).rewrite).toBe('off');
  });

  it('uses min_score as score_threshold and context_type as the only filter', () => {
    const p = context({ query: 'q', min_score: 0.4, context_type: ['Memory', 'skill'] });
    expect(p.scoreThreshold).toBe(0.4);
    expect(p.filter).toEqual({ op: 'must', field: 'context_type', conds: ['memory', 'skill'] });
  });

  it('drops unknown quota keys silently and keeps the known ones in order', () => {
    expect(context({ query: 'q', quotas: { skills: 2, bogus: 9, events: 1 } }).quotas).toEqual({ skills: 2, events: 1 });
  });

  it('reports level, and limit while bucketed, in ignored', () => {
    expect(context({ query: 'q', level: 2, quotas: { events: 1 }, limit: 5 }).ignored).toEqual(['level', 'limit']);
    expect(context({ query: 'q', limit: 5 }).ignored).toEqual([]);
  });

  it('takes penalties from whichever penalty argument was sent', () => {
    expect(context({ query: 'q', other_peer_penalty: 0.3 }).otherPeerPenalties.skills).toBe(0.3);
    const byCat = context({ query: 'q', other_peer_penalties: { skills: 0.5, nope: 1 } }).otherPeerPenalties;
    expect(byCat.skills).toBe(0.5);
    expect(byCat.events).toBe(0.1);
    // An empty map next to a scalar is not a combination.
    expect(context({ query: 'q', other_peer_penalty: 0.2, other_peer_penalties: {} }).otherPeerPenalties.events).toBe(0.2);
  });

  it('clamps out-of-range integers into the HTTP ranges instead of rejecting', () => {
    const p = context({ query: 'q', max_tokens: 10, dedup_turns: 500, rewrite_max_bullets: 0 });
    expect([p.maxTokens, p.dedupTurns, p.rewriteMaxBullets]).toEqual([64, 100, 1]);
    expect(context({ query: 'q', max_tokens: 99_999 }).maxTokens).toBe(32000);
  });

  it('treats any peer_scope other than "actor" as "all"', () => {
    expect(context({ query: 'q', peer_scope: 'actor' }).peerScope).toBe('actor');
    expect(context({ query: 'q', peer_scope: 'everyone' }).peerScope).toBe('all');
  });

  it('validates and ~-expands exclude_uris like HTTP', () => {
    expect(context({ query: 'q', exclude_uris: [' viking://~/memories/a.md ', '', 'viking://~/memories/a.md'] }).excludeUris).toEqual(['viking://user/alice/memories/a.md']);
    expect(failure({ query: 'q', mode: 'context', exclude_uris: ['file:///etc/passwd'] }).code).toBe('INVALID_URI');
  });

  it('does not reject a blank query itself (gathering does, as over HTTP)', () => {
    expect(context({ query: '  ' }).query).toBe('  ');
  });

  it.each<[string, Omit<McpSearchArgs, 'query' | 'mode'>, string]>([
    ['a non-empty target_uri', { target_uri: 'viking://~/memories' }, TARGET_URI_MESSAGE],
    ['a non-empty target_uri list', { target_uri: ['viking://resources'] }, TARGET_URI_MESSAGE],
    ['detail with detail_by_category', { detail: 'abstract', detail_by_category: { events: 'full' } }, DETAIL_COMBINATION_MESSAGE],
    ['both penalty forms', { other_peer_penalty: 0.1, other_peer_penalties: { events: 0.3 } }, PENALTY_COMBINATION_MESSAGE],
  ])('rejects %s with INVALID_ARGUMENT', (_title, extra, message) => {
    const e = failure({ query: 'q', mode: 'context', ...extra });
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toBe(message);
  });

  it('checks target_uri before detail and detail before penalties', () => {
    const all = { target_uri: 'viking://x', detail: 'full', detail_by_category: { events: 'full' }, other_peer_penalty: 1, other_peer_penalties: { events: 1 } };
    expect(failure({ query: 'q', mode: 'context', ...all }).message).toBe(TARGET_URI_MESSAGE);
    expect(failure({ query: 'q', mode: 'context', ...all, target_uri: '' }).message).toBe(DETAIL_COMBINATION_MESSAGE);
    expect(failure({ query: 'q', mode: 'context', ...all, target_uri: [], detail: 'auto' }).message).toBe(PENALTY_COMBINATION_MESSAGE);
  });
});

describe('mcpDetail', () => {
  it.each<[string | null | undefined, Record<string, string> | null | undefined, unknown]>([
    ['auto', null, null],
    [undefined, undefined, null],
    ['full', null, 'full'],
    ['overview', {}, 'overview'],
    ['bogus', null, null],
    ['auto', { events: 'full', memories: 'abstract' }, { events: 'full', memories: 'abstract' }],
    ['auto', { events: 'full', planets: 'full', skills: 'everything' }, { events: 'full' }],
    ['auto', { planets: 'full' }, null],
  ])('detail %p with detail_by_category %p → %p', (detail, byCategory, expected) => {
    expect(mcpDetail(detail, byCategory)).toEqual(expected);
  });
});

describe('mcpSearchParams (list mode)', () => {
  it('defaults to list mode with the 0.35 threshold and the default scope', () => {
    const p = list({ query: 'deploy' });
    expect(p).toMatchObject({ scoreThreshold: MCP_LIST_MIN_SCORE, targetUris: [], limit: 10, levels: null, sessionId: null, filter: null });
    expect(list({ query: 'deploy', min_score: null }).scoreThreshold).toBe(0.35);
    expect(list({ query: 'deploy', min_score: 0 }).scoreThreshold).toBe(0);
  });

  it('expands ~ in target_uri, parses level and ignores context-only arguments', () => {
    const p = list({ query: 'deploy', target_uri: ['viking://~/skills', ''], level: '0,2', quotas: { events: 3 }, rewrite: 'auto', session_id: 's' });
    expect(p.targetUris).toEqual(['viking://user/alice/skills']);
    expect(p.levels).toEqual([0, 2]);
    expect(p.sessionId).toBe('s');
  });

  it('rejects a blank query, a bad context_type and another user\'s space', () => {
    expect(failure({ query: ' ' }).message).toBe('Search query or image_url must not be empty.');
    expect(failure({ query: 'q', context_type: 'planet' }).code).toBe('INVALID_ARGUMENT');
    expect(failure({ query: 'q', target_uri: 'viking://user/bob/memories' }).code).toBe('PERMISSION_DENIED');
  });
});
