import fc from 'fast-check';
import { compactFragment } from '../budget/compact';
import { EVIDENCE_FLOOR, EVIDENCE_MAX_CANDIDATES, EVIDENCE_RELEVANCE_RATIO, NOISE_FLOOR, evidenceSearchThreshold } from '../budget/evidence';

/**
 * The floor the pool is cut at for a best ranked score: nothing passes under a best below the
 * noise floor; above it, the evidence floor or a quarter of the best.
 */
const floorAt = (best: number) => (!Number.isFinite(best) ? -Infinity : best < NOISE_FLOOR ? NOISE_FLOOR : Math.max(EVIDENCE_FLOOR, best * EVIDENCE_RELEVANCE_RATIO));
import { countTokens } from '../budget/tokens';
import { PURPOSE_PRESETS } from '../request/quotas';
import { DEFAULT_OTHER_PEER_PENALTIES } from '../request/penalties';
import type { Quotas } from '../request/types';
import { categoryFromUri, type Category } from '../uri';
import { gatherEvidence, initialEvidenceWidth, type EvidenceGatherParams } from './evidence';
import { gatherCandidates, overfetch, type GatherHit, type SearchCall, type SearchLists } from './gather';
import type { FilterLike, GatherFilter } from './targets';

// ---------------------------------------------------------------------------------------------
// A fake store: a corpus of hits, searched the way the node searcher does (target prefix,
// context-type condition, open-context peer scans, threshold, best first, `limit` rows).
// ---------------------------------------------------------------------------------------------

type Call = SearchCall<GatherFilter<FilterLike>>;
type Kind = 'memory' | 'resource' | 'skill';
interface Doc extends GatherHit {
  kind: Kind;
}

const U = 'viking://user/u';
const PEERS = `${U}/peers`;

function contextTypeOf(filter: unknown): Kind | null {
  const f = filter as { op?: string; field?: string; conds?: unknown[] } | null;
  if (!f) return null;
  if (f.op === 'must' && f.field === 'context_type') return f.conds?.[0] as Kind;
  if (f.op === 'and') for (const c of f.conds ?? []) if (contextTypeOf(c)) return contextTypeOf(c);
  return null;
}

function store(docs: readonly Doc[]) {
  const calls: Array<{ call: Call; returned: Doc[] }> = [];
  const search = async (call: Call): Promise<SearchLists> => {
    const type = contextTypeOf(call.filter);
    const visible = docs.filter((d) => {
      const inPeers = d.uri.startsWith(`${PEERS}/`);
      if (call.targetUri === '') return !inPeers;
      return d.uri.startsWith(call.targetUri.endsWith('/') ? call.targetUri : `${call.targetUri}/`) && (call.openContext || !inPeers || call.targetUri !== PEERS);
    });
    const returned = visible
      .filter((d) => (type ? d.kind === type : true))
      .filter((d) => call.scoreThreshold === null || d.score >= call.scoreThreshold)
      .sort((a, b) => b.score - a.score)
      .slice(0, Math.max(0, call.limit));
    calls.push({ call, returned });
    const lists: SearchLists = { memories: [], resources: [], skills: [] };
    for (const d of returned) lists[d.kind === 'memory' ? 'memories' : d.kind === 'resource' ? 'resources' : 'skills'].push({ uri: d.uri, score: d.score, abstract: d.abstract, overview: d.overview });
    return lists;
  };
  return { search, calls };
}

const words = fc.constantFrom('deploy', 'rollback', 'gateway', '中文', '记忆', 'the', 'a');
const abstractText = fc.oneof(
  { weight: 4, arbitrary: fc.array(words, { minLength: 1, maxLength: 10 }).map((a) => a.join(' ')) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 2000 }).map((n) => 'long '.repeat(n)) },
  { weight: 1, arbitrary: fc.constant('') },
);
const docGen = fc.record({
  where: fc.constantFrom('events', 'entities', 'preferences', 'experiences', 'resource', 'skill', 'peer'),
  score: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0.5, 0.3, 0.1)),
  abstract: abstractText,
  overview: fc.oneof(fc.constant(''), abstractText),
});
/** Most of a corpus sits in one place (a memory store of events, a docs folder…), so searches come back full. */
const corpus = fc
  .tuple(fc.array(docGen, { maxLength: 120 }), fc.constantFrom('events', 'entities', 'resource', 'skill', 'peer'), fc.integer({ min: 0, max: 400 }), abstractText)
  .map(([ds, dominant, extra, text]) => [...ds, ...Array.from({ length: extra }, (_, j) => ({ where: dominant, score: 1 - (j % 97) / 97, abstract: j % 3 === 0 ? text : `${text} ${j}`, overview: '' }))])
  .map((ds) =>
  ds.map((d, i): Doc => {
    const uri =
      d.where === 'resource'
        ? `viking://resources/r${i}.md`
        : d.where === 'skill'
          ? `viking://agent/skills/s${i}`
          : d.where === 'peer'
            ? `${PEERS}/p1/memories/events/x${i}.md`
            : `${U}/memories/${d.where}/m${i}.md`;
    return { uri, score: d.score, abstract: d.abstract, overview: d.overview, kind: d.where === 'resource' ? 'resource' : d.where === 'skill' ? 'skill' : 'memory' };
  }),
);

const quotasGen = fc.option(
  fc.oneof(
    fc.constant<Quotas>({ ...PURPOSE_PRESETS.coding }),
    fc.constant<Quotas>({ ...PURPOSE_PRESETS.chat }),
    fc.dictionary(fc.constantFrom('events', 'entities', 'resources', 'skills'), fc.integer({ min: 0, max: 5 })) as fc.Arbitrary<Quotas>,
  ),
  { freq: 2 },
);

interface GCase {
  docs: Doc[];
  max: number;
  quotas: Quotas | null;
  excluded: string[];
  cooled: string[];
  threshold: number | null;
  peerScope: 'all' | 'actor';
}

const gcase = corpus.chain((docs) =>
  fc.record({
    docs: fc.constant(docs),
    max: fc.oneof(fc.integer({ min: 64, max: 8000 }), fc.integer({ min: 64, max: 1200 }), fc.constantFrom(400, 1600, 4000)),
    quotas: quotasGen,
    excluded: fc.subarray(docs.map((d) => d.uri), { maxLength: Math.min(20, docs.length) }),
    cooled: fc.constant<string[]>([]),
    threshold: fc.option(fc.constantFrom(0.1, 0.35), { freq: 3 }),
    peerScope: fc.constantFrom<'all' | 'actor'>('all', 'all', 'actor'),
  }).map((k) => ({ ...k, cooled: k.excluded.filter((_, i) => i % 2 === 0) })),
);

function params(k: GCase, explain = false): EvidenceGatherParams {
  return {
    queries: ['q'],
    userId: 'u',
    role: 'root',
    actorPeerId: null,
    quotas: k.quotas,
    limit: 10,
    peerScope: k.peerScope,
    filter: null,
    scoreThreshold: k.threshold,
    imageUrl: null,
    excluded: k.excluded,
    cooled: k.cooled,
    penalties: { ...DEFAULT_OTHER_PEER_PENALTIES },
    maxTokens: k.max,
    explain,
  };
}

/** An independent reading of "the pool" from some calls' results (no sidecars in this corpus). */
function poolOf(k: GCase, results: ReadonlyArray<{ call: Call; returned: Doc[] }>) {
  const excluded = new Set(k.excluded);
  const nodes = new Map<string, { uri: string; category: Category; score: number; ranked: number; abstract: string; overview: string }>();
  let best = -Infinity;
  for (const { call, returned } of results) {
    for (const d of returned) {
      if (!takenFrom(k, call, d)) continue;
      const bucket = k.quotas ? (call.openContext ? peerBucketOf(d) : bucketOfCall(call)) : null;
      const category = (bucket ?? (d.kind === 'resource' ? 'resources' : d.kind === 'skill' ? 'skills' : categoryFromUri(d.uri, null))) as Category;
      const ranked = d.score - (d.uri.startsWith(`${PEERS}/`) ? DEFAULT_OTHER_PEER_PENALTIES[category] : 0);
      best = Math.max(best, ranked);
      if (excluded.has(d.uri)) continue;
      const known = nodes.get(d.uri);
      if (!known || d.score > known.score) nodes.set(d.uri, { uri: d.uri, category, score: d.score, ranked, abstract: d.abstract ?? '', overview: d.overview ?? '' });
    }
  }
  const floor = floorAt(best);
  const pool = [...nodes.values()].filter((c) => c.ranked >= floor);
  const max = Math.max(1, Math.trunc(k.max));
  const cost = pool.reduce((a, c) => {
    const known = (
      [
        ['abstract', c.abstract.trim()],
        ['overview', c.overview],
      ] as const
    )
      .filter(([, t]) => t !== '')
      .map(([tier, text]) => countTokens(compactFragment({ uri: c.uri, category: c.category, detail: tier, text }, c.uri)));
    const least = known.length > 0 ? Math.min(...known) : Infinity;
    return a + 1 + (least <= max ? least : countTokens(compactFragment({ uri: c.uri, category: c.category, detail: 'uri', text: '' }, c.uri)));
  }, 0);
  return { pool, floor, best, cost };
}

/** The memory bucket of a peer hit (its `/memories/<bucket>/` segment). */
function peerBucketOf(d: Doc): string | null {
  return /\/memories\/([a-z]+)\//.exec(d.uri)?.[1] ?? null;
}

/** Whether gathering takes `d` from the results of `call` (peer scans keep other peers' memories of an active bucket). */
function takenFrom(k: GCase, call: Call, d: Doc): boolean {
  if (!call.openContext) return true;
  if (!d.uri.startsWith(`${PEERS}/`)) return false;
  if (!k.quotas) return true;
  const b = peerBucketOf(d);
  return b !== null && (k.quotas as Record<string, number>)[b]! > 0;
}

function bucketOfCall(call: Call): string | null {
  const t = call.targetUri;
  const m = /\/memories\/([a-z]+)$/.exec(t);
  if (m) return m[1];
  if (t.endsWith('/resources') || t === 'viking://resources' || t === U) return 'resources';
  if (t.endsWith('/skills')) return 'skills';
  return null;
}

describe('gatherEvidence properties', () => {
  it('bounds the pool to 200 candidates and the widening to one extra round', async () => {
    await fc.assert(
      fc.asyncProperty(gcase, async (k) => {
        const s = store(k.docs);
        const r = await gatherEvidence(params(k), s.search);
        expect(r.candidates.length).toBeLessThanOrEqual(EVIDENCE_MAX_CANDIDATES);
        expect([1, 2]).toContain(r.rounds);
        expect(r.widths).toHaveLength(r.rounds);
        expect(r.widths[0]).toBe(initialEvidenceWidth(k.max));
        const limits = new Set(s.calls.map((c) => c.call.limit));
        for (const l of limits) expect(l).toBeLessThanOrEqual(overfetch(2 * EVIDENCE_MAX_CANDIDATES, k.excluded.length));
        // Every search asks for its width plus the compensating rows of §3.1.
        const n = k.excluded.length;
        for (const { call } of s.calls) {
          const widths = r.widths.flatMap((w) => [w, Math.min(4 * w, 2 * EVIDENCE_MAX_CANDIDATES)]);
          expect(widths.map((w) => overfetch(w, n))).toContain(call.limit);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('widens until the cheapest known texts of the pool more than fill the budget (or the pool is bounded, the searches exhausted, or the extra round spent)', async () => {
    await fc.assert(
      fc.asyncProperty(gcase, async (k) => {
        const s = store(k.docs);
        const r = await gatherEvidence(params(k), s.search);
        expect(r.calls.reduce((a, b) => a + b, 0)).toBe(s.calls.length);
        const round1 = s.calls.slice(0, r.calls[0]);
        const first = poolOf(k, round1);
        const max = Math.max(1, Math.trunc(k.max));
        const exhausted = (calls: typeof s.calls, floor: number) => calls.every(({ call, returned }) => returned.length < call.limit || Math.min(...returned.map((d) => d.score)) < floor);
        if (r.rounds === 1) {
          // Stopped after one round: it filled, hit the bound, or nothing more was worth asking for.
          expect(first.cost > max + 1 || first.pool.length >= EVIDENCE_MAX_CANDIDATES || exhausted(round1, first.floor)).toBe(true);
        } else {
          // Widened only because the first round did not fill and could give more.
          expect(first.cost <= max + 1 && first.pool.length < EVIDENCE_MAX_CANDIDATES).toBe(true);
          expect(r.widths[1]).toBeGreaterThan(r.widths[0]);
          // Only searches that came back full (with their last hit above the floor) ran again.
          const again = s.calls.slice(r.calls[0]);
          for (const { call } of again) {
            const before = round1.find((x) => x.call.targetUri === call.targetUri && x.call.openContext === call.openContext && x.call.query === call.query && JSON.stringify(x.call.filter) === JSON.stringify(call.filter));
            expect(before).toBeDefined();
            expect(before!.returned.length).toBe(before!.call.limit);
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps exclusions and cooled URIs out, cuts at the relevance floor of the best hit (excluded hits included), and keeps compat\'s candidates above it', async () => {
    await fc.assert(
      fc.asyncProperty(gcase, async (k) => {
        const s = store(k.docs);
        const r = await gatherEvidence(params(k), s.search);
        const excluded = new Set(k.excluded);
        for (const c of r.candidates) expect(excluded.has(c.uri)).toBe(false);
        // Best of every hit the searches returned, exclusions included.
        const all = poolOf({ ...k, excluded: [] }, s.calls);
        const floor = floorAt(all.best);
        if (r.candidates.length > 0) expect(r.relevanceFloor).toBeCloseTo(floor, 12);
        for (const c of r.candidates) expect(c.rankedScore).toBeGreaterThanOrEqual(floor);
        // Quotas are priors: what compat gathers (and is relevant enough) is in the pool too.
        const compat = await gatherCandidates(params(k), store(k.docs).search);
        const pool = new Set(r.candidates.map((c) => c.uri));
        // (Evidence searches down to its own threshold, not the client's: below it the store keeps hits back.)
        const searched = evidenceSearchThreshold(k.threshold);
        for (const c of compat.candidates) if (c.score >= searched && c.rankedScore >= floor) expect(pool.has(c.uri)).toBe(true);
        // One candidate per node.
        expect(pool.size).toBe(r.candidates.length);
      }),
      { numRuns: 200 },
    );
  });

  it('accounts for every node it saw: in the pool, or one fate (cooled, excluded, relevance_floor, quota)', async () => {
    await fc.assert(
      fc.asyncProperty(gcase, async (k) => {
        const s = store(k.docs);
        const r = await gatherEvidence(params(k, true), s.search);
        const seen = new Set(
          s.calls.flatMap(({ call, returned }) => returned.filter((d) => takenFrom(k, call, d)).map((d) => d.uri)),
        );
        const pool = new Set(r.candidates.map((c) => c.uri));
        const fated = r.fates!.map((f) => f.uri);
        expect(new Set(fated).size).toBe(fated.length);
        for (const u of fated) expect(pool.has(u)).toBe(false);
        expect(new Set([...pool, ...fated])).toEqual(seen);
        const cooled = new Set(k.cooled);
        for (const f of r.fates!) {
          expect(['cooled', 'excluded', 'noise_floor', 'relevance_floor', 'quota']).toContain(f.fate);
          if (f.fate === 'cooled') expect(cooled.has(f.uri)).toBe(true);
          if (cooled.has(f.uri)) expect(f.fate).toBe('cooled');
          expect(f.costs).toBeNull();
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('gatherEvidence examples', () => {
  const events = (n: number, score = (i: number) => 0.9 - i * 0.001): Doc[] =>
    Array.from({ length: n }, (_, i) => ({ uri: `${U}/memories/events/e${i}.md`, score: score(i), abstract: `event ${i} happened`, overview: '', kind: 'memory' }));
  const k = (over: Partial<GCase>): GCase => ({ docs: [], max: 1600, quotas: null, excluded: [], cooled: [], threshold: null, peerScope: 'actor', ...over });

  it('fills a coding-preset request from a store of events, whose quota is 1', async () => {
    const s = store(events(80));
    const r = await gatherEvidence(params(k({ docs: events(80), quotas: { ...PURPOSE_PRESETS.coding } })), s.search);
    expect(r.candidates.length).toBeGreaterThan(30);
    expect(new Set(r.candidates.map((c) => c.category))).toEqual(new Set(['events']));
    // Every bucket was first asked for the budget's width, not its quota.
    expect(s.calls.slice(0, r.calls[0]).every((c) => c.call.limit === initialEvidenceWidth(1600))).toBe(true);
  });

  it('runs one wider round when tiny memories do not fill the budget, and no more', async () => {
    const tiny = Array.from({ length: 400 }, (_, i): Doc => ({ uri: `${U}/memories/events/${i}`, score: 0.8, abstract: 'x', overview: '', kind: 'memory' }));
    const s = store(tiny);
    const r = await gatherEvidence(params(k({ docs: tiny, max: 4000 })), s.search);
    expect(r.rounds).toBe(2);
    expect(r.candidates).toHaveLength(EVIDENCE_MAX_CANDIDATES);
    expect(s.calls).toHaveLength(2);
  });

  it('bounds the pool at 200, keeping first what compat would keep (each bucket\'s quota), then the best of the rest', async () => {
    const docs: Doc[] = [
      ...Array.from({ length: 150 }, (_, i): Doc => ({ uri: `viking://resources/r${i}.md`, score: 0.9 - i * 0.001, abstract: `r${i}`, overview: '', kind: 'resource' })),
      ...Array.from({ length: 150 }, (_, i): Doc => ({ uri: `viking://agent/skills/s${i}`, score: 0.89 - i * 0.001, abstract: `s${i}`, overview: '', kind: 'skill' })),
      ...Array.from({ length: 5 }, (_, i): Doc => ({ uri: `${U}/memories/events/e${i}.md`, score: 0.5 - i * 0.001, abstract: `e${i}`, overview: '', kind: 'memory' })),
    ];
    const quotas = { ...PURPOSE_PRESETS.coding };
    const c = k({ docs, max: 32000, quotas });
    const r = await gatherEvidence(params(c, true), store(docs).search);
    expect(r.candidates).toHaveLength(EVIDENCE_MAX_CANDIDATES);
    const compat = await gatherCandidates(params(c), store(docs).search);
    const pool = new Set(r.candidates.map((x) => x.uri));
    for (const x of compat.candidates) expect(pool.has(x.uri)).toBe(true);
    expect(pool.has(`${U}/memories/events/e0.md`)).toBe(true);
    expect(r.fates!.filter((f) => f.fate === 'quota').length).toBe(150 + 150 + 5 - EVIDENCE_MAX_CANDIDATES);
  });

  it('leaves nothing in the pool when the relevant hits are cooled and the rest are unrelated', async () => {
    const docs: Doc[] = [
      { uri: `${U}/memories/events/relevant.md`, score: 0.62, abstract: 'the answer', overview: '', kind: 'memory' },
      ...events(3, () => 0.03),
    ];
    const r = await gatherEvidence(params(k({ docs, excluded: [docs[0].uri], cooled: [docs[0].uri] }), true), store(docs).search);
    expect(r.candidates).toEqual([]);
    expect(r.bestScore).toBeCloseTo(0.62);
    // The unrelated hits are under the evidence floor, which the searches ask with: the store keeps them.
    expect(r.fates!.map((f) => f.fate)).toEqual(['cooled']);
  });

  it('searches down to the evidence floor under a threshold at or below the noise floor, and with a stricter one as sent', async () => {
    const docs: Doc[] = [{ uri: `${U}/memories/events/a.md`, score: 0.5, abstract: 'a', overview: '', kind: 'memory' }];
    for (const [threshold, sent] of [
      [null, EVIDENCE_FLOOR],
      [0.35, EVIDENCE_FLOOR],
      [0.2, EVIDENCE_FLOOR],
      [0.6, 0.6],
    ] as const) {
      const s = store(docs);
      await gatherEvidence({ ...params(k({ docs })), scoreThreshold: threshold }, s.search);
      expect(new Set(s.calls.map((c) => c.call.scoreThreshold))).toEqual(new Set([sent]));
    }
  });
});
