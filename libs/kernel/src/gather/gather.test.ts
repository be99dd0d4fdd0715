import { EMPTY_QUERY_MESSAGE, InvalidArgumentError, InvalidUriError } from '../errors';
import { DEFAULT_OTHER_PEER_PENALTIES } from '../request/penalties';
import {
  gatherCandidates,
  overfetch,
  type GatherHit,
  type GatherParams,
  type SearchCall,
  type SearchLists,
} from './gather';
import type { FilterLike, GatherFilter } from './targets';

const U = 'viking://user/default';
const PEERS = `${U}/peers`;

type Call = SearchCall<GatherFilter<FilterLike>>;
type Reply = Partial<SearchLists> | Error;

/** A scripted search: `script` answers each call; every call is recorded in launch order. */
function fakeSearch(script: (call: Call) => Reply = () => ({})) {
  const calls: Call[] = [];
  const fn = async (call: Call): Promise<SearchLists> => {
    calls.push(call);
    const r = script(call);
    if (r instanceof Error) throw r;
    return { memories: [], resources: [], skills: [], ...r };
  };
  return { fn, calls };
}

/** Replies by target (and open context for peer scans). */
function byTarget(table: Record<string, Partial<SearchLists>>, scans: Partial<SearchLists> = {}) {
  return (call: Call): Reply => (call.openContext ? scans : (table[call.targetUri] ?? {}));
}

const hit = (uri: string, score: number, extra: Partial<GatherHit> = {}): GatherHit => ({ uri, score, abstract: `abs ${uri}`, ...extra });

function params(over: Partial<GatherParams> = {}): GatherParams {
  return {
    queries: ['q'],
    userId: 'default',
    role: 'root',
    actorPeerId: null,
    quotas: null,
    limit: 10,
    peerScope: 'all',
    filter: null,
    scoreThreshold: null,
    imageUrl: null,
    excluded: [],
    penalties: { ...DEFAULT_OTHER_PEER_PENALTIES },
    ...over,
  };
}

const brief = (cs: Array<{ uri: string; category: string; score: number; origin: string }>) =>
  cs.map((c) => [c.uri, c.category, c.score, c.origin]);

describe('overfetch', () => {
  it.each<[number, number, number]>([
    [10, 0, 10],
    [10, 3, 13],
    [1, 3, 3],
    [3, 100, 9],
    [40, 3, 43],
    [0, 5, 0],
    [-2, 5, 0],
  ])('w=%p with %p excluded → %p rows', (w, n, rows) => {
    expect(overfetch(w, n)).toBe(rows);
  });
});

describe('gatherCandidates', () => {
  describe('flat mode', () => {
    it('makes the §1.6 calls: default scope, then an open-context peer scan with 4·limit', async () => {
      const filter = { op: 'must', field: 'context_type', conds: ['memory'] };
      const s = fakeSearch();
      await gatherCandidates(params({ queries: ['what shipped'], filter, scoreThreshold: 0.35, userId: 'default' }), s.fn);
      expect(s.calls).toEqual([
        { query: 'what shipped', targetUri: '', limit: 10, filter, scoreThreshold: 0.35, imageUrl: null, openContext: false },
        { query: 'what shipped', targetUri: PEERS, limit: 40, filter, scoreThreshold: 0.35, imageUrl: null, openContext: true },
      ]);
    });

    it('skips the peer scan when peer_scope is actor', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ peerScope: 'actor', actorPeerId: 'p1' }), s.fn);
      expect(s.calls.map((c) => [c.targetUri, c.openContext])).toEqual([['', false]]);
    });

    it('treats an unknown peer_scope as all', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ peerScope: 'everyone' }), s.fn);
      expect(s.calls).toHaveLength(2);
    });

    it('runs every search once per planned query', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ queries: ['a', 'b'], limit: 2 }), s.fn);
      expect(s.calls.map((c) => [c.query, c.targetUri, c.limit])).toEqual([
        ['a', '', 2],
        ['b', '', 2],
        ['a', PEERS, 8],
        ['b', PEERS, 8],
      ]);
    });

    it('asks for compensating rows when URIs are excluded', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ limit: 10, excluded: ['viking://a', 'viking://b', 'viking://c', 'viking://a'] }), s.fn);
      expect(s.calls.map((c) => c.limit)).toEqual([13, 43]);
    });

    it('classifies memories by URI, keeps resources/skills lists, and the first list wins', async () => {
      const s = fakeSearch(
        byTarget({
          '': {
            memories: [
              hit(`${U}/memories/events/2026/launch.md`, 0.9),
              hit(`${U}/memories/trajectories/t.md`, 0.89),
              hit(`${U}/memories/cases/c.md`, 0.88),
              hit(`${U}/memories/skills/s.md`, 0.87),
              hit(`${U}/memories/identity.md`, 0.86),
              hit(`${U}/notes/x.md`, 0.85, { category: 'experiences' }),
              hit(`${U}/skills/deploy.md`, 0.84),
              hit(`${U}/things/y.md`, 0.83),
              hit('viking://resources/shared.md', 0.5),
            ],
            resources: [hit('viking://resources/backup/memories/events/log.md', 0.8), hit('viking://resources/shared.md', 0.7)],
            skills: [hit('viking://agent/skills/memories/preferences/p.md', 0.79)],
          },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.category])).toEqual([
        [`${U}/memories/events/2026/launch.md`, 'events'],
        [`${U}/memories/trajectories/t.md`, 'memories'],
        [`${U}/memories/cases/c.md`, 'memories'],
        [`${U}/memories/skills/s.md`, 'memories'],
        [`${U}/memories/identity.md`, 'memories'],
        [`${U}/notes/x.md`, 'experiences'],
        [`${U}/skills/deploy.md`, 'skills'],
        [`${U}/things/y.md`, 'memories'],
        ['viking://resources/backup/memories/events/log.md', 'resources'],
        ['viking://agent/skills/memories/preferences/p.md', 'skills'],
      ]);
      // shared.md was first seen in the memories list (0.5) and replaced by the higher
      // resources-list score (0.7): position and the memories-list rule are kept.
      expect(r.searched).toEqual({ all: 11 });
    });

    it('keeps the first position but takes a strictly higher later score, and the first list', async () => {
      const s = fakeSearch(
        byTarget({
          '': {
            memories: [hit('viking://resources/x.md', 0.4, { abstract: 'first' }), hit(`${U}/memories/events/e.md`, 0.5, { abstract: 'e1' })],
            resources: [hit('viking://resources/x.md', 0.6, { abstract: 'better' }), hit(`${U}/memories/events/e.md`, 0.5, { abstract: 'e2' })],
          },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      const x = r.candidates.find((c) => c.uri === 'viking://resources/x.md')!;
      const e = r.candidates.find((c) => c.uri === `${U}/memories/events/e.md`)!;
      expect([x.score, x.abstract, x.category]).toEqual([0.6, 'better', 'resources']);
      // Equal score: the first occurrence stays.
      expect([e.abstract, e.category]).toEqual(['e1', 'events']);
      expect(r.searched).toEqual({ all: 2 });
    });

    it('keeps a directory’s two sidecar hits as two candidates', async () => {
      const d = 'viking://resources/docs';
      const s = fakeSearch(byTarget({ '': { resources: [hit(`${d}/.abstract.md`, 0.7), hit(`${d}/.overview.md`, 0.6)] } }));
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.isDirectory, c.score])).toEqual([
        [d, true, 0.7],
        [d, true, 0.6],
      ]);
    });

    it('keeps the first `limit` after sorting, and nothing when limit ≤ 0', async () => {
      const lists = { '': { memories: [hit(`${U}/memories/events/a.md`, 0.2), hit(`${U}/memories/events/b.md`, 0.9), hit(`${U}/memories/events/c.md`, 0.5)] } };
      const two = await gatherCandidates(params({ peerScope: 'actor', limit: 2 }), fakeSearch(byTarget(lists)).fn);
      expect(two.candidates.map((c) => c.uri)).toEqual([`${U}/memories/events/b.md`, `${U}/memories/events/c.md`]);
      expect(two.searched).toEqual({ all: 3 });
      const none = fakeSearch(byTarget(lists));
      const zero = await gatherCandidates(params({ peerScope: 'actor', limit: 0 }), none.fn);
      expect(zero.candidates).toEqual([]);
      expect(none.calls).toHaveLength(1);
      expect(zero.searched).toEqual({ all: 3 });
    });

    it('takes only other-peer memory hits from the peer scan', async () => {
      const s = fakeSearch(
        byTarget(
          { '': { memories: [hit(`${U}/memories/events/own.md`, 0.5)] } },
          {
            memories: [
              hit(`${PEERS}/current/memories/events/mine.md`, 0.95),
              hit(`${PEERS}/other/memories/events/theirs.md`, 0.6),
              hit(`${U}/memories/events/own2.md`, 0.9),
              hit(`${PEERS}/other/memories/trajectories/t.md`, 0.4),
            ],
            resources: [hit(`${PEERS}/other/resources/r.md`, 0.99)],
          },
        ),
      );
      const r = await gatherCandidates(params({ actorPeerId: 'current' }), s.fn);
      // theirs ranks 0.6 − 0.1 = 0.5, tied with own: origin rank puts self first.
      expect(brief(r.candidates)).toEqual([
        [`${U}/memories/events/own.md`, 'events', 0.5, 'self'],
        [`${PEERS}/other/memories/events/theirs.md`, 'events', 0.6, 'other_peer'],
        [`${PEERS}/other/memories/trajectories/t.md`, 'memories', 0.4, 'other_peer'],
      ]);
      expect(r.origins).toEqual({ actor_peer: 0, self: 1, other_peer: 2 });
      expect(r.candidates.filter((c) => c.origin === 'other_peer').every((c) => c.openContext)).toBe(true);
      expect(r.candidates.find((c) => c.origin === 'self')!.openContext).toBe(false);
    });

    it('without an actor every peer is another peer', async () => {
      const s = fakeSearch(byTarget({}, { memories: [hit(`${PEERS}/current/memories/events/a.md`, 0.5), hit(`${PEERS}/x/memories/entities/b.md`, 0.4)] }));
      const r = await gatherCandidates(params(), s.fn);
      expect(brief(r.candidates)).toEqual([
        [`${PEERS}/current/memories/events/a.md`, 'events', 0.5, 'other_peer'],
        [`${PEERS}/x/memories/entities/b.md`, 'entities', 0.4, 'other_peer'],
      ]);
    });
  });

  describe('candidate building', () => {
    it('drops profile.md anywhere without counting it as excluded', async () => {
      const s = fakeSearch(
        byTarget({
          '': {
            memories: [hit(`${U}/memories/profile.md`, 0.9), hit(`${U}/memories/events/e.md`, 0.5)],
            resources: [hit('viking://resources/team/profile.md', 0.8)],
          },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor', excluded: [`${U}/memories/profile.md`] }), s.fn);
      expect(r.candidates.map((c) => c.uri)).toEqual([`${U}/memories/events/e.md`]);
      expect(r.excluded).toBe(0);
      expect(r.searched).toEqual({ all: 3 });
    });

    it('counts exclusions per occurrence against the raw and the node URI', async () => {
      const d = 'viking://resources/dir';
      const s = fakeSearch(
        byTarget({
          '': {
            memories: [hit(`${U}/memories/events/x.md`, 0.9), hit(`${U}/memories/events/keep.md`, 0.3)],
            resources: [hit(`${d}/.abstract.md`, 0.8), hit(`${d}/.overview.md`, 0.7), hit('viking://resources/raw.md/', 0.6)],
          },
        }),
      );
      const r = await gatherCandidates(
        params({ peerScope: 'actor', excluded: [`${U}/memories/events/x.md`, d, 'viking://resources/raw.md/'] }),
        s.fn,
      );
      expect(r.candidates.map((c) => c.uri)).toEqual([`${U}/memories/events/keep.md`]);
      expect(r.excluded).toBe(4);
      expect(r.searched).toEqual({ all: 5 });
    });

    it('skips hits with an empty URI', async () => {
      const s = fakeSearch(byTarget({ '': { memories: [hit('', 0.9), hit(`${U}/memories/events/a.md`, 0.1)] } }));
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      expect(r.candidates.map((c) => c.uri)).toEqual([`${U}/memories/events/a.md`]);
    });

    it('falls back from abstract to overview to ""', async () => {
      const s = fakeSearch(
        byTarget({
          '': {
            resources: [
              hit('viking://resources/a.md', 0.9, { abstract: 'A' }),
              hit('viking://resources/b.md', 0.8, { abstract: '', overview: 'B overview' }),
              hit('viking://resources/c.md', 0.7, { abstract: null, overview: null }),
            ],
          },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      expect(r.candidates.map((c) => c.abstract)).toEqual(['A', 'B overview', '']);
    });

    it('treats a non-numeric score as 0', async () => {
      const s = fakeSearch(
        byTarget({ '': { resources: [{ uri: 'viking://resources/a.md', score: 'high' as unknown as number }, hit('viking://resources/b.md', 0.1)] } }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor' }), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.score])).toEqual([
        ['viking://resources/b.md', 0.1],
        ['viking://resources/a.md', 0],
      ]);
    });

    it('applies the other-peer penalty to ranking only', async () => {
      const s = fakeSearch(
        byTarget(
          { '': { memories: [hit(`${U}/memories/events/own.md`, 0.8)] } },
          { memories: [hit(`${PEERS}/other/memories/events/o.md`, 0.85), hit(`${PEERS}/other/memories/preferences/p.md`, 0.83)] },
        ),
      );
      const r = await gatherCandidates(params(), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.score, Number(c.rankedScore.toFixed(6))])).toEqual([
        [`${PEERS}/other/memories/preferences/p.md`, 0.83, 0.81],
        [`${U}/memories/events/own.md`, 0.8, 0.8],
        [`${PEERS}/other/memories/events/o.md`, 0.85, 0.75],
      ]);
      const noPenalty = await gatherCandidates(
        params({ penalties: { events: 0, entities: 0, preferences: 0, experiences: 0, resources: 0, skills: 0, memories: 0 } }),
        fakeSearch(
          byTarget(
            { '': { memories: [hit(`${U}/memories/events/own.md`, 0.8)] } },
            { memories: [hit(`${PEERS}/other/memories/events/o.md`, 0.85)] },
          ),
        ).fn,
      );
      expect(noPenalty.candidates.map((c) => c.origin)).toEqual(['other_peer', 'self']);
    });

    it('breaks ranked-score ties by origin, then keeps arrival order', async () => {
      const s = fakeSearch(
        byTarget({
          '': {
            memories: [
              hit(`${U}/memories/events/self1.md`, 0.5),
              hit(`${PEERS}/me/memories/events/actor.md`, 0.5),
              hit(`${U}/memories/events/self2.md`, 0.5),
              hit(`${PEERS}/me/memories/events/actor2.md`, 0.5),
            ],
          },
        }, { memories: [hit(`${PEERS}/x/memories/events/other.md`, 0.6)] }),
      );
      const r = await gatherCandidates(params({ actorPeerId: 'me' }), s.fn);
      expect(r.candidates.map((c) => c.uri)).toEqual([
        `${PEERS}/me/memories/events/actor.md`,
        `${PEERS}/me/memories/events/actor2.md`,
        `${U}/memories/events/self1.md`,
        `${U}/memories/events/self2.md`,
        `${PEERS}/x/memories/events/other.md`,
      ]);
      expect(r.origins).toEqual({ actor_peer: 2, self: 2, other_peer: 1 });
    });
  });

  describe('bucketed mode', () => {
    it('makes the §9.5 calls and ranks actor, self, other', async () => {
      const quotas = { events: 3, entities: 0, preferences: 0, experiences: 0 };
      const s = fakeSearch(
        byTarget(
          {
            [`${U}/memories/events`]: { memories: [hit(`${U}/memories/events/global.md`, 0.8)] },
            [`${PEERS}/current/memories/events`]: { memories: [hit(`${PEERS}/current/memories/events/current.md`, 0.91)] },
          },
          { memories: [hit(`${PEERS}/other/memories/events/other.md`, 0.89), hit(`${PEERS}/current/memories/events/current.md`, 0.91)] },
        ),
      );
      const r = await gatherCandidates(params({ queries: ['peer memory'], quotas, actorPeerId: 'current', scoreThreshold: 0.1 }), s.fn);
      const filter = { op: 'must', field: 'context_type', conds: ['memory'] };
      expect(s.calls).toEqual([
        { query: 'peer memory', targetUri: `${U}/memories/events`, limit: 3, filter, scoreThreshold: 0.1, imageUrl: null, openContext: false },
        { query: 'peer memory', targetUri: `${PEERS}/current/memories/events`, limit: 3, filter, scoreThreshold: 0.1, imageUrl: null, openContext: false },
        { query: 'peer memory', targetUri: PEERS, limit: 12, filter, scoreThreshold: 0.1, imageUrl: null, openContext: true },
      ]);
      expect(brief(r.candidates)).toEqual([
        [`${PEERS}/current/memories/events/current.md`, 'events', 0.91, 'actor_peer'],
        [`${U}/memories/events/global.md`, 'events', 0.8, 'self'],
        [`${PEERS}/other/memories/events/other.md`, 'events', 0.89, 'other_peer'],
      ]);
      expect(r.candidates[2].rankedScore).toBeCloseTo(0.79, 10);
      expect(r.searched).toEqual({ events: 3 });
      expect(r.origins).toEqual({ actor_peer: 1, self: 1, other_peer: 1 });
      expect(r.retrievalErrors).toEqual([]);
    });

    it('ANDs the context_type condition into each bucket’s filter', async () => {
      const filter = { op: 'and', conds: [{ op: 'must', field: 'search_tags', conds: ['env=prod'] }, { op: 'time_range', field: 'updated_at', gte: 'x' }] };
      const s = fakeSearch();
      await gatherCandidates(params({ quotas: { resources: 1, skills: 1 }, filter }), s.fn);
      expect(s.calls.map((c) => [c.targetUri, c.filter])).toEqual([
        [`${U}/resources`, { op: 'and', conds: [...filter.conds, { op: 'must', field: 'context_type', conds: ['resource'] }] }],
        ['viking://resources', { op: 'and', conds: [...filter.conds, { op: 'must', field: 'context_type', conds: ['resource'] }] }],
        [`${U}/skills`, { op: 'and', conds: [...filter.conds, { op: 'must', field: 'context_type', conds: ['skill'] }] }],
        ['viking://agent/skills', { op: 'and', conds: [...filter.conds, { op: 'must', field: 'context_type', conds: ['skill'] }] }],
      ]);
    });

    it('uses non-root resource targets and scans peers only for memory buckets', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ role: 'user', quotas: { resources: 2, preferences: 1 }, excluded: ['viking://resources/z'] }), s.fn);
      expect(s.calls.map((c) => [c.targetUri, c.limit, c.openContext])).toEqual([
        ['viking://resources', 3, false],
        [U, 3, false],
        [`${U}/memories/preferences`, 2, false],
        [PEERS, 5, true],
      ]);
    });

    it('runs query × target calls', async () => {
      const s = fakeSearch();
      await gatherCandidates(params({ queries: ['a', 'b'], quotas: { skills: 1 } }), s.fn);
      expect(s.calls.map((c) => [c.query, c.targetUri])).toEqual([
        ['a', `${U}/skills`],
        ['a', 'viking://agent/skills'],
        ['b', `${U}/skills`],
        ['b', 'viking://agent/skills'],
      ]);
    });

    it('makes no call for quotas {} or all-zero quotas, even with a blank query', async () => {
      for (const quotas of [{}, { events: 0, entities: 0, preferences: 0, experiences: 0 }]) {
        const s = fakeSearch();
        const r = await gatherCandidates(params({ queries: [''], quotas }), s.fn);
        expect(s.calls).toEqual([]);
        expect(r).toEqual({ candidates: [], searched: {}, excluded: 0, origins: { actor_peer: 0, self: 0, other_peer: 0 }, retrievalErrors: [] });
      }
    });

    it('takes the bucket’s own list, keeps q per bucket and sets the bucket as category', async () => {
      const s = fakeSearch(
        byTarget({
          [`${U}/memories/entities`]: {
            memories: [hit(`${U}/memories/entities/a.md`, 0.3), hit(`${U}/memories/events/b.md`, 0.7), hit(`${U}/memories/entities/c.md`, 0.5)],
            resources: [hit('viking://resources/ignored.md', 0.99)],
          },
          [`${U}/resources`]: { resources: [hit('viking://resources/backup/memories/events/log.md', 0.6)], memories: [hit(`${U}/memories/events/no.md`, 0.9)] },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor', quotas: { entities: 2, resources: 1 }, limit: 1 }), s.fn);
      expect(brief(r.candidates)).toEqual([
        [`${U}/memories/events/b.md`, 'entities', 0.7, 'self'],
        ['viking://resources/backup/memories/events/log.md', 'resources', 0.6, 'self'],
        [`${U}/memories/entities/c.md`, 'entities', 0.5, 'self'],
      ]);
      expect(r.searched).toEqual({ entities: 3, resources: 1 });
      expect(Object.keys(r.searched)).toEqual(['entities', 'resources']);
    });

    it('takes from peer scans only other-peer memories of the bucket’s type', async () => {
      const s = fakeSearch(
        byTarget({}, {
          memories: [
            hit(`${PEERS}/o/memories/events/e.md`, 0.9),
            hit(`${PEERS}/o/memories/entities/n.md`, 0.8),
            hit(`${PEERS}/me/memories/events/mine.md`, 0.7),
          ],
        }),
      );
      const r = await gatherCandidates(params({ quotas: { events: 5 }, actorPeerId: 'me' }), s.fn);
      expect(r.candidates.map((c) => c.uri)).toEqual([`${PEERS}/o/memories/events/e.md`]);
      expect(r.searched).toEqual({ events: 1 });
    });

    it('merges a directory’s sidecars into one candidate keeping the higher score', async () => {
      const d = 'viking://resources/docs';
      const s = fakeSearch(
        byTarget({
          [`${U}/resources`]: { resources: [hit(`${d}/.overview.md`, 0.4, { abstract: 'ov' })] },
          'viking://resources': { resources: [hit(`${d}/.abstract.md`, 0.7, { abstract: 'ab' })] },
        }),
      );
      const r = await gatherCandidates(params({ quotas: { resources: 3 } }), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.score, c.abstract, c.isDirectory])).toEqual([[d, 0.7, 'ab', true]]);
      expect(r.searched).toEqual({ resources: 2 });
    });

    it('merges buckets by node URI (strictly higher wins, first position otherwise) and sorts globally without truncating', async () => {
      const shared = `${U}/memories/events/shared.md`;
      const s = fakeSearch(
        byTarget({
          [`${U}/memories/events`]: { memories: [hit(shared, 0.5, { abstract: 'from events' }), hit(`${U}/memories/events/e2.md`, 0.2)] },
          [`${U}/memories/entities`]: { memories: [hit(shared, 0.5, { abstract: 'from entities' }), hit(`${U}/memories/entities/n.md`, 0.9)] },
          [`${U}/memories/preferences`]: { memories: [hit(shared, 0.6, { abstract: 'from prefs' })] },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor', limit: 1, quotas: { events: 2, entities: 2, preferences: 1 } }), s.fn);
      expect(r.candidates.map((c) => [c.uri, c.category, c.abstract])).toEqual([
        [`${U}/memories/entities/n.md`, 'entities', 'abs viking://user/default/memories/entities/n.md'],
        [shared, 'preferences', 'from prefs'],
        [`${U}/memories/events/e2.md`, 'events', 'abs viking://user/default/memories/events/e2.md'],
      ]);
      const tie = await gatherCandidates(
        params({ peerScope: 'actor', quotas: { events: 1, entities: 1 } }),
        fakeSearch(
          byTarget({
            [`${U}/memories/events`]: { memories: [hit(shared, 0.5, { abstract: 'from events' })] },
            [`${U}/memories/entities`]: { memories: [hit(shared, 0.5, { abstract: 'from entities' })] },
          }),
        ).fn,
      );
      expect(tie.candidates.map((c) => [c.category, c.abstract])).toEqual([['events', 'from events']]);
    });

    it('counts exclusions per bucket occurrence', async () => {
      const x = `${U}/memories/events/x.md`;
      const s = fakeSearch(
        byTarget({
          [`${U}/memories/events`]: { memories: [hit(x, 0.9)] },
          [`${U}/memories/entities`]: { memories: [hit(x, 0.9), hit(`${U}/memories/entities/ok.md`, 0.2)] },
        }),
      );
      const r = await gatherCandidates(params({ peerScope: 'actor', quotas: { events: 1, entities: 1 }, excluded: [x] }), s.fn);
      expect(r.excluded).toBe(2);
      expect(r.candidates.map((c) => c.uri)).toEqual([`${U}/memories/entities/ok.md`]);
      expect(s.calls.map((c) => c.limit)).toEqual([2, 2]);
    });
  });

  describe('retrieval failures', () => {
    class EmbedderDownError extends Error {
      override readonly name = 'EmbedderDownError';
    }

    it('isolates a failing call and reports "<Class>: <message>"', async () => {
      const s = fakeSearch((c) => (c.openContext ? new EmbedderDownError('no route') : { memories: [hit(`${U}/memories/events/a.md`, 0.5)] }));
      const r = await gatherCandidates(params(), s.fn);
      expect(r.candidates.map((c) => c.uri)).toEqual([`${U}/memories/events/a.md`]);
      expect(r.retrievalErrors).toEqual(['EmbedderDownError: no route']);
    });

    it('truncates messages to 200 characters and keeps the first 5 in call order', async () => {
      const s = fakeSearch((c) => new Error(`${c.query}:${'x'.repeat(300)}`));
      const r = await gatherCandidates(params({ queries: ['a', 'b', 'c', 'd'] }), s.fn);
      expect(r.retrievalErrors).toHaveLength(5);
      expect(r.retrievalErrors.map((e) => e.slice(0, 9))).toEqual(['Error: a:', 'Error: b:', 'Error: c:', 'Error: d:', 'Error: a:']);
      expect(r.retrievalErrors.every((e) => e.length === 200)).toBe(true);
      expect(r.candidates).toEqual([]);
    });

    it('describes non-Error throws', async () => {
      const s = fakeSearch();
      const r = await gatherCandidates(params({ peerScope: 'actor' }), async (c) => {
        await s.fn(c);
        throw 'plain string';
      });
      expect(r.retrievalErrors).toEqual(['Error: plain string']);
    });

    it.each([
      ['InvalidArgumentError', new InvalidArgumentError('bad filter')],
      ['InvalidUriError', new InvalidUriError('viking://nope', 'unknown scope')],
    ])('re-raises %s', async (_name, err) => {
      const s = fakeSearch((c) => (c.openContext ? err : {}));
      await expect(gatherCandidates(params(), s.fn)).rejects.toBe(err);
    });

    it('re-raises an invalid-argument error from a bucket search', async () => {
      const err = new InvalidArgumentError('bad');
      await expect(gatherCandidates(params({ quotas: { skills: 1 } }), fakeSearch(() => err).fn)).rejects.toBe(err);
    });
  });

  describe('blank queries and image_url', () => {
    it.each([[''], ['   '], ['\n\t']])('rejects a retrieval call with query %j and no image', async (q) => {
      const s = fakeSearch();
      const p = gatherCandidates(params({ queries: [q] }), s.fn);
      await expect(p).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(p).rejects.toThrow(EMPTY_QUERY_MESSAGE);
      expect(s.calls).toEqual([]);
    });

    it('rejects a blank query in a bucket with quota > 0', async () => {
      await expect(gatherCandidates(params({ queries: [''], quotas: { events: 1 } }), fakeSearch().fn)).rejects.toThrow(EMPTY_QUERY_MESSAGE);
    });

    it('accepts a blank query with an image and forwards image_url on every call', async () => {
      const img = 'data:image/png;base64,AAAA';
      const flat = fakeSearch();
      await gatherCandidates(params({ queries: [''], imageUrl: img }), flat.fn);
      const bucket = fakeSearch();
      await gatherCandidates(params({ queries: [''], imageUrl: img, quotas: { events: 1, skills: 1 }, actorPeerId: 'p' }), bucket.fn);
      expect(flat.calls).toHaveLength(2);
      expect(bucket.calls).toHaveLength(5);
      expect([...flat.calls, ...bucket.calls].every((c) => c.imageUrl === img)).toBe(true);
    });
  });

  it('launches every retrieval call before any of them completes', async () => {
    const pending: Array<() => void> = [];
    const calls: Call[] = [];
    const search = (call: Call) =>
      new Promise<SearchLists>((resolve) => {
        calls.push(call);
        pending.push(() => resolve({ memories: [], resources: [], skills: [] }));
      });
    const p = gatherCandidates(params({ quotas: { events: 1, resources: 1, skills: 1 }, actorPeerId: 'p' }), search);
    await Promise.resolve();
    // events: 2 targets + 1 scan; resources (root, actor): 3 targets; skills: 2 targets.
    expect(calls).toHaveLength(8);
    pending.forEach((release) => release());
    await expect(p).resolves.toMatchObject({ searched: { events: 0, resources: 0, skills: 0 } });
  });
});
