import { detailToWire } from '@ctxmesh/kernel';
import { common, type orchestrator } from '@ctxmesh/proto';
import { validateRecallBody, validateSearchBody, type ContextParams } from '../domain';
import { contextStats } from './__tests__/context-stats';
import type { Caller } from '../domain';
import { protoIdentity } from './identity';
import { contextResult, listResult, toAssembleContextRequest, toSearchRequest } from './search';

const caller: Caller = { accountId: 'acme', userId: 'alice', role: 'user', actorPeerId: null, requestId: 'r-1', workspace: '' };
const ctx = { identity: caller, nowMs: Date.UTC(2026, 0, 15) };

function contextParams(body: Record<string, unknown>): ContextParams {
  const v = validateSearchBody({ mode: 'context', ...body }, ctx);
  if (v.mode !== 'context') throw new Error('expected context mode');
  return v.params;
}

describe('protoIdentity', () => {
  it.each<[Caller['role'], common.Role]>([
    ['root', common.Role.ROLE_ROOT],
    ['admin', common.Role.ROLE_ADMIN],
    ['user', common.Role.ROLE_USER],
  ])('maps role %p and an absent actor peer to ""', (role, want) => {
    expect(protoIdentity({ ...caller, role, workspace: 'proj' })).toEqual({
      accountId: 'acme',
      userId: 'alice',
      role: want,
      actorPeerId: '',
      workspace: 'proj',
      requestId: 'r-1',
    });
  });
});

describe('toSearchRequest', () => {
  it('maps list parameters, the typed filter and absent values as proto defaults', () => {
    const v = validateSearchBody({ query: 'q', target_uri: 'viking://~/memories', context_type: 'memory', node_limit: 3, level: '0,2', session_id: 's' }, ctx);
    if (v.mode !== 'list') throw new Error('expected list mode');
    const req = toSearchRequest(v.params, caller, v.params.sessionId);
    expect(req).toEqual({
      identity: protoIdentity(caller),
      query: 'q',
      imageUrl: '',
      targetUris: ['viking://user/alice/memories'],
      filter: { node: { $case: 'must', value: { field: 'context_type', values: [{ kind: { $case: 'text', value: 'memory' } }] } } },
      limit: 3,
      scoreThreshold: undefined,
      levels: [0, 2],
      sessionId: 's',
      asOfMs: undefined,
    });
  });

  it('sends no filter and no levels when none were asked for', () => {
    const v = validateSearchBody({ query: 'q', score_threshold: 0.35 }, ctx);
    if (v.mode !== 'list') throw new Error('expected list mode');
    expect(toSearchRequest(v.params, caller)).toMatchObject({ filter: undefined, levels: [], scoreThreshold: 0.35, sessionId: '' });
  });
});

describe('toAssembleContextRequest', () => {
  it('maps the plugin body: purpose preset quotas in order, bucketed, rewrite auto', () => {
    const req = toAssembleContextRequest(
      contextParams({ query: 'what did we deploy?', purpose: 'coding', score_threshold: 0.35, session_id: 'cc-s1', dedup_turns: 5, rewrite: 'auto' }),
      caller,
    );
    expect(req.bucketed).toBe(true);
    expect(req.quotas.map((q) => q.name)).toEqual(['events', 'entities', 'preferences', 'experiences', 'resources', 'skills']);
    expect(req).toMatchObject({
      query: 'what did we deploy?',
      scoreThreshold: 0.35,
      sessionId: 'cc-s1',
      dedupTurns: 5,
      rewrite: 'auto',
      purpose: 'coding',
      queryExpansion: 'auto',
      maxTokens: 1600,
      detail: undefined,
      timeBudgetMs: 0,
      tokenizer: 'estimate',
      peerScope: 'all',
    });
  });

  it('keeps explicit quota order, penalties over all seven categories and the detail pin', () => {
    const req = toAssembleContextRequest(
      contextParams({ query: 'q', quotas: { skills: 2, events: 1 }, other_peer_penalty: { events: 0.5 }, detail: { resources: 'full' }, rewrite: true, time_budget_ms: 800 }),
      caller,
    );
    expect(req.quotas).toEqual([
      { name: 'skills', count: 2 },
      { name: 'events', count: 1 },
    ]);
    expect(req.otherPeerPenalties).toEqual([
      { name: 'events', value: 0.5 },
      { name: 'entities', value: 0.1 },
      { name: 'preferences', value: 0.02 },
      { name: 'experiences', value: 0.02 },
      { name: 'resources', value: 0.02 },
      { name: 'skills', value: 0.02 },
      { name: 'memories', value: 0.1 },
    ]);
    expect(req.detail).toEqual(detailToWire({ resources: 'full' }));
    expect(req.rewrite).toBe('on');
    expect(req.timeBudgetMs).toBe(800);
  });

  it('is flat without quotas or purpose, and bucketed with an empty quota object', () => {
    expect(toAssembleContextRequest(contextParams({ query: 'q' }), caller)).toMatchObject({ bucketed: false, quotas: [], purpose: '' });
    expect(toAssembleContextRequest(contextParams({ query: 'q', quotas: {} }), caller)).toMatchObject({ bucketed: true, quotas: [] });
  });

  it('asks for code outlines, so code overviews are skeletons (§4.4 rule 2)', () => {
    expect(toAssembleContextRequest(contextParams({ query: 'q' }), caller).codeOutline).toBe(true);
    const p = validateRecallBody({ query: 'q' }, { identity: caller });
    expect(toAssembleContextRequest(p, caller).codeOutline).toBe(true);
  });

  it('leaves the names reported in stats.ignored to the gateway (they are not sent)', () => {
    const p = contextParams({ query: 'q', level: 2, limit: 5, purpose: 'chat' });
    expect(p.ignored).toEqual(['level', 'limit']);
    expect(toAssembleContextRequest(p, caller)).not.toHaveProperty('ignored');
  });

  it('maps the /recall folding (v1 quotas, threshold 0.1, coding, folded max_tokens)', () => {
    const p = validateRecallBody({ query: 'q', max_chars: 6502, quotas: { events: 5 } }, { identity: caller });
    const req = toAssembleContextRequest(p, caller);
    expect(req).toMatchObject({ maxTokens: 1626, scoreThreshold: 0.1, purpose: 'coding', bucketed: true, filter: undefined, limit: 10 });
    expect(req.quotas).toEqual([
      { name: 'events', count: 5 },
      { name: 'entities', count: 10 },
      { name: 'preferences', count: 3 },
      { name: 'experiences', count: 0 },
    ]);
  });
});

const hit = (uri: string, contextType = 'memory'): orchestrator.ListHit => ({ contextType, uri, level: 2, score: 0.5, abstract: 'abs', tags: ['k=v'] });

describe('listResult', () => {
  it('keeps the hit shape and counts the total', () => {
    const r = listResult({ memories: [hit('viking://user/default/memories/events/a.md')], resources: [hit('viking://resources/r', 'resource')], skills: [], queryPlan: [], queryPlanReasoning: '', hasQueryPlan: false });
    expect(JSON.stringify(r)).toBe(
      '{"memories":[{"context_type":"memory","uri":"viking://user/default/memories/events/a.md","level":2,"score":0.5,"abstract":"abs","tags":["k=v"]}],' +
        '"resources":[{"context_type":"resource","uri":"viking://resources/r","level":2,"score":0.5,"abstract":"abs","tags":["k=v"]}],"skills":[],"total":2}',
    );
  });

  it('adds query_plan only when intent analysis ran', () => {
    const r = listResult({
      memories: [],
      resources: [],
      skills: [],
      queryPlan: [{ query: 'q1', contextType: '', intent: 'recall', priority: 1 }],
      queryPlanReasoning: 'why',
      hasQueryPlan: true,
    });
    expect(r.query_plan).toEqual({ reasoning: 'why', queries: [{ query: 'q1', context_type: null, intent: 'recall', priority: 1 }] });
  });
});

const entry = (origin: string): common.Entry => ({ uri: 'viking://resources/a', category: 'resources', score: 0.42, detail: 'abstract', text: 't', origin });

describe('contextResult', () => {
  const stats = contextStats();
  const res = (origin = 'self', s: orchestrator.ContextStats | undefined = stats): orchestrator.AssembleContextResponse => ({
    entries: [entry(origin)],
    rendered: '<memory/>',
    digest: '',
    stats: s,
    stages: [],
    fates: [],
    explain: undefined,
  });

  it('keeps entry and stats key order, nulls inside stats, and ignored after dedup', () => {
    const r = contextResult(res(), { ignored: ['level'] });
    expect(JSON.stringify(r)).toBe(
      '{"entries":[{"uri":"viking://resources/a","category":"resources","score":0.42,"detail":"abstract","text":"t","origin":"self"}],' +
        '"rendered":"<memory/>","digest":"","stats":{"searched":{"all":1},"candidates":1,"excluded":0,"origins":{"actor_peer":0,"self":1,"other_peer":0},' +
        '"peer_scope":"all","quotas":null,"max_tokens":1600,"used_tokens":20,"per_entry_cap":800,"returned":1,"dropped":0,"deduped":0,"detail":null,' +
        '"tier_counts":{"abstract":1},"fill":{"floor_tokens":20,"overview_upgrades":0,"full_upgrades":0,"spare_upgrades":0},"purpose":null,' +
        '"query_expansion":"off","planned_queries":["what shipped"],"score_threshold":null,' +
        '"other_peer_penalties":{"events":0.1,"entities":0.1,"preferences":0.02,"experiences":0.02,"resources":0.02,"skills":0.02,"memories":0.1},' +
        '"rewrite":"off","rewrite_usage":null,"dedup":{"turns":0,"status":"off","cooled":0,"turn":null},"ignored":["level"]}}',
    );
  });

  it('appends stats.deprecated last and blanks rendered when render is false', () => {
    const deprecated = { endpoint: '/api/v1/search/recall', successor: '/api/v1/search/search', successor_body: { mode: 'context' }, aliases_used: ['render'] } as const;
    const r = contextResult(res(), { render: false, ignored: ['limit'], deprecated: { ...deprecated, aliases_used: ['render'] } });
    expect(Object.keys(r.stats).slice(-3)).toEqual(['dedup', 'ignored', 'deprecated']);
    expect(r.stats.deprecated).toEqual(deprecated);
    expect(r.rendered).toBe('');
  });

  it('omits an empty origin, and answers {} stats when the orchestrator sent none', () => {
    const bare = contextResult({ ...res(''), stats: undefined });
    expect(Object.keys(bare.entries[0])).toEqual(['uri', 'category', 'score', 'detail', 'text']);
    expect(bare.stats).toEqual({});
  });
});
