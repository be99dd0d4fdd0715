import type { Schemas } from '@qdrant/js-client-rest';
import { hash32, lexicalTerms } from '@ctxmesh/embedder';
import { UnsupportedFilterError } from '../ports/errors';
import { DEFAULT_TUNING } from '../tuning';
import type { FilterNode, SearchQuery } from '../ports/vector-index';
import { aliceVisibility, sampleRecord } from './__tests__/fixtures';
import { MATCH_ALL, MATCH_NONE, asOfCondition, filterCondition, searchFilter, uriReadFilter, visibilityConditions } from './filter';
import { pointId, uuidV5 } from './ids';
import { MINOR_SEED, documentSparseVector, lexicalPayload, sparseQuery } from './lexical';
import { denseOf, fullSelector, lexicalSourceOf, normalizePrefix, summarySelector, toPayload, toRecord, toSummary, uriPrefixes } from './payload';
import { documentBody, existsBody, getBody, statsAccountsBody, statsCountBody, statsFacetBody, vectorsBody } from './reads';
import { createCollectionBody, payloadIndexBodies, P } from './schema';
import { legDepth } from '../ranking/rank';
import { QueryTerms } from '../ranking/query';
import { DocTerms, encodeTermCounts } from '../ranking/terms';
import * as ranking from '../ranking/relevance';
import type { HybridTuning } from '../tuning';
import { batchBody, candidatesOf, fusedOf, hitsBody, hitsOf, planSearch, scorerOf, splitBatch, termsOfPayload } from './search';
import { lengthFacetBody, liveCountBody, termCountBody } from './stats';
import { commitBody, currentVersionBody, deleteBody, deleteCountBody, isCurrent, pointOf, stageBodies, versionOf } from './writes';

// Every body below is also checked by tsc against `Schemas` (the builders' return types and
// these annotations); the snapshots pin their exact JSON. Lexical terms come from the shared
// tokenizer of @ctxmesh/embedder, which evolves on its own: tests assert them against that
// tokenizer, and snapshots show them as placeholders.

/** Deep copy with sparse vectors and lexical term payloads replaced by markers (see above). */
function redactTerms<T>(x: T): unknown {
  return JSON.parse(
    JSON.stringify(x, (key, v: unknown) => {
      if (key === P.lexCounts || key === P.lexTerms || key === P.lexLenBits) return '<terms of the shared tokenizer>';
      if (v && typeof v === 'object' && 'indices' in v && 'values' in v) return '<sparse vector of the shared tokenizer>';
      return v;
    }),
  );
}

/** A fixed tuning for the snapshots (the defaults are the shared ranking's `DEFAULT_TUNING`). */
const TUNING: HybridTuning = { ...DEFAULT_TUNING, lexicalWeight: 2 };

function query(over: Partial<SearchQuery> = {}): SearchQuery {
  return {
    visibility: aliceVisibility(),
    vector: Float32Array.from([1, 0, 0, 0]),
    text: 'install search',
    targets: [],
    filter: null,
    limit: 5,
    ...over,
  };
}

describe('uuidV5', () => {
  it('matches the RFC 9562 test vector', () => {
    expect(uuidV5('www.example.com', '6ba7b810-9dad-11d1-80b4-00c04fd430c8')).toBe('2ed6657d-e927-568b-95e1-2665a8aea6a2');
  });

  it('gives point ids that depend on account, URI and version only', () => {
    const id = pointId('acme', 'viking://resources/a.md', 'h1');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(pointId('acme', 'viking://resources/a.md', 'h1')).toBe(id);
    expect(pointId('other', 'viking://resources/a.md', 'h1')).not.toBe(id);
    expect(pointId('acme', 'viking://resources/a.md', 'h2')).not.toBe(id);
    expect(pointId('acme', 'viking://resources/b.md', 'h1')).not.toBe(id);
  });
});

describe('uriPrefixes', () => {
  it('lists every path prefix ending with the URI itself', () => {
    expect(uriPrefixes('viking://user/alice/memories/events/e1.md')).toEqual([
      'viking://user',
      'viking://user/alice',
      'viking://user/alice/memories',
      'viking://user/alice/memories/events',
      'viking://user/alice/memories/events/e1.md',
    ]);
    expect(uriPrefixes('viking://resources/doc.md#p3')).toEqual(['viking://resources', 'viking://resources/doc.md#p3']);
    expect(uriPrefixes('viking://resources/dir/')).toEqual(['viking://resources', 'viking://resources/dir']);
  });

  it('normalises targets the same way (trailing slashes, bare scheme)', () => {
    expect(normalizePrefix('viking://resources/')).toBe('viking://resources');
    expect(normalizePrefix('viking://')).toBe('viking://');
    expect(normalizePrefix('viking:///')).toBe('viking://');
  });
});

describe('createCollectionBody', () => {
  it('declares a named cosine dense vector and a sparse lexical vector with the IDF modifier', () => {
    const body: Schemas['CreateCollection'] = createCollectionBody({ dimension: 384 });
    expect(body.sparse_vectors?.lexical?.modifier).toBe('idf');
    expect(body).toMatchSnapshot();
  });

  it('rejects a non-positive dimension', () => {
    expect(() => createCollectionBody({ dimension: 0 })).toThrow(RangeError);
  });
});

describe('payloadIndexBodies', () => {
  it('indexes every filtered payload key, the account as tenant', () => {
    const bodies: Schemas['CreateFieldIndex'][] = payloadIndexBodies();
    const keys = bodies.map((b) => b.field_name);
    for (const k of [P.account, P.owner, P.peer, P.uriPrefixes, P.contextType, P.category, P.tags, P.createdAt, P.updatedAt, P.validFrom, P.validTo, P.level, P.state, P.version, P.uri, P.docUri, P.workspace, P.subject]) {
      expect(keys).toContain(k);
    }
    expect(new Set(keys).size).toBe(keys.length);
    expect(bodies.find((b) => b.field_name === P.account)?.field_schema).toEqual({ type: 'keyword', is_tenant: true });
    expect(bodies).toMatchSnapshot();
  });
});

describe('toPayload / pointOf', () => {
  it('builds a staged point with a deterministic id, dense and sparse vectors and a normalised payload', () => {
    const r = sampleRecord({ workspace: '' });
    const point: Schemas['PointStruct'] = pointOf(r, r.contentHash);
    expect(point.id).toBe(pointId('acme', r.uri, 'sha256:aaaa'));
    const payload = point.payload as Record<string, unknown>;
    expect(payload[P.state]).toBe('staged');
    expect(payload[P.tags]).toEqual(['env=prod', 'team=search']);
    expect(payload[P.workspace]).toBe('default');
    expect(payload[P.vectorNorm]).toBe(1);
    const vec = point.vector as Record<string, unknown>;
    expect(vec.dense).toEqual([0.5, 0.5, 0.5, 0.5]);
    const source = lexicalSourceOf(r);
    expect(source).toBe(`${r.abstract}\n${r.body}`);
    expect(vec.lexical).toEqual(documentSparseVector(source));
    expect((vec.lexical as Schemas['SparseVector']).indices.length).toBeGreaterThan(0);
    const lex = lexicalPayload(source);
    expect([payload[P.lexCounts], payload[P.lexTerms], payload[P.lexLenBits]]).toEqual([lex.counts, lex.terms, lex.lengthBits]);
    expect(redactTerms(point)).toMatchSnapshot();
  });

  it('leaves the sparse vector out when the text has no lexical term', () => {
    const r = sampleRecord({ abstract: 'the and of', body: 'is a', lexicalText: '' });
    expect(Object.keys(pointOf(r, 'v') .vector as object)).toEqual(['dense']);
  });

  it('reads a payload back into the summary and the full record, restoring the written vector scale', () => {
    const r = sampleRecord({ vector: Float32Array.from([3, 0, 4, 0]), validFrom: 10, validTo: 20 });
    const payload = toPayload(r, 'v');
    const summary = toSummary(payload, false);
    expect(summary).toEqual({
      uri: r.uri, docUri: r.docUri, parentUri: r.parentUri, contextType: 'resource', category: 'resources', level: 2,
      account: 'acme', owner: '', peer: '', workspace: 'default', subject: '', tags: ['env=prod', 'team=search'],
      createdAt: r.createdAt, updatedAt: r.updatedAt, validFrom: 10, validTo: 20, title: 'Intro', abstract: r.abstract,
      contentHash: 'sha256:aaaa', passageIndex: 0, links: r.links,
    });
    expect(toSummary(payload, true).overview).toBe(r.overview);
    // Qdrant returns cosine vectors unit-length: [0.6, 0, 0.8, 0] is scaled back by the stored norm 5.
    const full = toRecord(payload, { dense: [0.6, 0, 0.8, 0] }, 4);
    expect(Array.from(full.vector)).toEqual([3, 0, 4, 0].map((x) => Math.fround(x)));
    expect(full.body).toBe(r.body);
    expect(denseOf(null)).toBeNull();
  });
});

describe('stageBodies / commitBody (replace protocol)', () => {
  it('stages a long document in chunks, every point staged under one version', () => {
    const records = Array.from({ length: 5 }, (_, i) =>
      sampleRecord({ uri: `viking://resources/guide/intro.md#p${i}`, passageIndex: i, contentHash: 'h2' }),
    );
    const bodies: Schemas['PointInsertOperations'][] = stageBodies(records, versionOf(records), 2);
    expect(bodies.map((b) => (b as Schemas['PointsList']).points.length)).toEqual([2, 2, 1]);
    const states = bodies.flatMap((b) => (b as Schemas['PointsList']).points.map((p) => (p.payload as Record<string, unknown>)[P.state]));
    expect(new Set(states)).toEqual(new Set(['staged']));
  });

  it('commits by flipping the staged version live, then deleting other versions and moved URIs', () => {
    const body: Schemas['UpdateOperations'] = commitBody('acme', 'viking://resources/guide/intro.md', 'h2', [
      'viking://resources/guide/intro.md#p0',
      'viking://resources/guide/intro.md#p1',
    ]);
    expect(body.operations.map((o) => Object.keys(o)[0])).toEqual(['set_payload', 'delete', 'delete']);
    expect(body).toMatchSnapshot();
  });

  it('uses the shared content hash as version, and a digest when the records disagree', () => {
    expect(versionOf([sampleRecord({ contentHash: 'h' }), sampleRecord({ uri: 'viking://resources/guide/intro.md#p1', contentHash: 'h' })])).toBe('h');
    const mixed = versionOf([sampleRecord({ contentHash: 'b' }), sampleRecord({ contentHash: 'a' })]);
    expect(mixed).toMatch(/^mixed:[0-9a-f]{40}$/);
    expect(versionOf([sampleRecord({ contentHash: 'a' }), sampleRecord({ contentHash: 'b' })])).toBe(mixed);
  });

  it('finds a write unnecessary only when every stored point is live with the same version', () => {
    const live = (version: string) => ({ payload: { [P.version]: version, [P.state]: 'live' } });
    expect(isCurrent([live('h'), live('h')], 'h')).toBe(true);
    expect(isCurrent([live('h'), live('old')], 'h')).toBe(false);
    expect(isCurrent([live('h'), { payload: { [P.version]: 'h', [P.state]: 'staged' } }], 'h')).toBe(false);
    expect(isCurrent([], 'h')).toBe(false);
    const scroll: Schemas['ScrollRequest'] = currentVersionBody('acme', 'viking://resources/guide/intro.md');
    expect(scroll).toMatchSnapshot();
  });
});

describe('deleteBody', () => {
  it('deletes a document by doc_uri or uri, in the given account only', () => {
    const body: Schemas['PointsSelector'] = deleteBody('acme', 'viking://resources/guide/intro.md', false);
    expect((body as Schemas['FilterSelector']).filter.must).toEqual([{ key: 'account', match: { value: 'acme' } }]);
    expect(body).toMatchSnapshot();
  });

  it('deletes a subtree through uri_prefixes in the given account, and counts with the same filter', () => {
    const body: Schemas['PointsSelector'] = deleteBody('acme', 'viking://resources/guide/', true);
    const count: Schemas['CountRequest'] = deleteCountBody('acme', 'viking://resources/guide/', true);
    expect(count.filter).toEqual((body as Schemas['FilterSelector']).filter);
    expect(count.exact).toBe(true);
    expect(body).toMatchSnapshot();
    // The bare scheme is everything of the account, never everything.
    expect(deleteBody('acme', 'viking://', true)).toEqual({ filter: { must: [{ key: 'account', match: { value: 'acme' } }] } });
  });
});

describe('visibilityConditions', () => {
  const cases: Array<[string, Parameters<typeof aliceVisibility>[0], boolean]> = [
    ['own space and account-wide scopes, no peer', {}, false],
    ['actor peer visible beside the own space', { actorPeer: 'bob' }, false],
    ['open context: every peer of the user', { openPeers: true, actorPeer: 'bob' }, false],
    ['one workspace only', { workspace: 'ws1' }, false],
    ['root, untargeted: still own space only', { allUsers: true }, false],
    ['root, targeted: every user of the account', { allUsers: true }, true],
  ];
  it.each(cases)('maps %s', (_name, over, targeted) => {
    const conds: Schemas['Condition'][] = visibilityConditions(aliceVisibility(over), targeted);
    expect(conds[0]).toEqual({ key: P.account, match: { value: 'acme' } });
    expect(conds).toMatchSnapshot();
  });
});

describe('filterCondition', () => {
  const cases: Array<[string, FilterNode]> = [
    ['and', { op: 'and', conds: [{ op: 'must', field: 'context_type', conds: ['memory'] }, { op: 'must', field: 'category', conds: ['events', 'entities'] }] }],
    ['empty and (everything)', { op: 'and', conds: [] }],
    ['or', { op: 'or', conds: [{ op: 'must', field: 'level', conds: [0, 1] }, { op: 'prefix', field: 'uri', prefix: 'viking://resources/guide/' }] }],
    ['must on tags (normalised)', { op: 'must', field: 'search_tags', conds: [' Env=Prod ', 'team=search'] }],
    ['must_not on context type', { op: 'must_not', field: 'context_type', conds: ['skill'] }],
    ['must on integer level, dropping values no integer equals', { op: 'must', field: 'level', conds: [2, '1', 1.5] }],
    ['must on a time field with ISO values', { op: 'must', field: 'created_at', conds: ['2026-01-01T00:00:00.000Z'] }],
    ['range on level', { op: 'range', field: 'level', gte: 1, lt: 3 }],
    ['range on a time field in ms', { op: 'range', field: 'valid_to', gt: 1000 }],
    ['time_range on updated_at', { op: 'time_range', field: 'updated_at', gte: '2026-01-01T00:00:00.000Z', lte: '2026-01-31T23:59:59.999Z' }],
    ['prefix on uri', { op: 'prefix', field: 'uri', prefix: 'viking://user/alice/memories' }],
    ['must on doc_uri', { op: 'must', field: 'doc_uri', conds: ['viking://resources/guide/intro.md'] }],
    ['must on subject and workspace', { op: 'and', conds: [{ op: 'must', field: 'subject', conds: ['carol'] }, { op: 'must', field: 'workspace', conds: ['ws1'] }] }],
  ];
  it.each(cases)('maps %s', (_name, node) => {
    const cond: Schemas['Condition'] = filterCondition(node);
    expect(cond).toMatchSnapshot();
  });

  it('maps the degenerate cases to match-nothing / match-everything', () => {
    expect(filterCondition({ op: 'or', conds: [] })).toBe(MATCH_NONE);
    expect(filterCondition({ op: 'must', field: 'category', conds: [] })).toBe(MATCH_NONE);
    expect(filterCondition({ op: 'must_not', field: 'category', conds: [] })).toBe(MATCH_ALL);
    expect(filterCondition({ op: 'must', field: 'level', conds: [0.5] })).toBe(MATCH_NONE);
    expect(filterCondition({ op: 'prefix', field: 'uri', prefix: 'viking://' })).toBe(MATCH_ALL);
  });

  it.each<[string, unknown]>([
    ['an unknown field', { op: 'must', field: 'colour', conds: ['red'] }],
    ['an unknown op', { op: 'near', field: 'uri', conds: [] }],
    ['a non-numeric range bound', { op: 'range', field: 'level', gte: 'high' }],
    ['a time_range on a non-time field', { op: 'time_range', field: 'level', gte: '2026-01-01' }],
    ['an unparsable time', { op: 'time_range', field: 'updated_at', gte: 'yesterday-ish' }],
    ['a prefix on a field without a prefix index', { op: 'prefix', field: 'category', prefix: 'ev' }],
    ['conds that are not an array', { op: 'and', conds: 'x' }],
  ])('rejects %s with UnsupportedFilterError', (_name, node) => {
    expect(() => filterCondition(node as FilterNode)).toThrow(UnsupportedFilterError);
  });
});

describe('asOfCondition', () => {
  it('keeps valid_from ≤ asOf < valid_to with open (null or missing) bounds passing', () => {
    const cond: Schemas['Condition'] = asOfCondition(1_700_000_000_000);
    expect(cond).toMatchSnapshot();
  });
});

describe('searchFilter', () => {
  it('combines live state, tenant, default scope, levels, asOf and the metadata filter', () => {
    const f: Schemas['Filter'] = searchFilter(
      query({ levels: [2, 2, 0], asOf: 1_700_000_000_000, filter: { op: 'must', field: 'context_type', conds: ['resource'] } }),
    );
    expect(f).toMatchSnapshot();
  });

  it('replaces the default scope by the targets, which also lets root see other users', () => {
    const f = searchFilter(query({ targets: ['viking://user/bob/memories/'], visibility: aliceVisibility({ allUsers: true }) }));
    expect(f.must).toEqual([
      { key: P.state, match: { value: 'live' } },
      { key: P.account, match: { value: 'acme' } },
      { key: P.uriPrefixes, match: { any: ['viking://user/bob/memories'] } },
    ]);
  });

  it('drops the scope condition for the bare scheme target', () => {
    const f = searchFilter(query({ targets: ['viking://'] }));
    expect(JSON.stringify(f)).not.toContain(P.uriPrefixes);
  });
});

describe('planSearch', () => {
  it('asks for the two legs’ candidates: the dense leg, and the lexical prefetch re-scored by the dense query', () => {
    const plan = planSearch(query({ withOverview: true }), TUNING);
    expect(plan.mode).toBe('hybrid');
    expect(plan.requests).toHaveLength(2);
    const [dense, lexical] = plan.requests as [Schemas['QueryRequest'], Schemas['QueryRequest']];
    expect(dense).toMatchObject({ using: 'dense', limit: 50, with_payload: { include: [P.uri] }, with_vector: false });
    expect(dense.prefetch).toBeUndefined();
    expect(lexical).toMatchObject({ using: 'dense', query: [1, 0, 0, 0], limit: 50, with_payload: { include: [P.uri, P.lexCounts] } });
    const prefetch = lexical.prefetch as Schemas['Prefetch'][];
    expect(prefetch.map((p) => [p.using, p.limit])).toEqual([['lexical', 50]]);
    expect(prefetch[0]!.query).toEqual(sparseQuery('install search', TUNING.minorWeight));
    // No server-side fusion: the order is the shared ranking's.
    expect(JSON.stringify(plan.requests)).not.toMatch(/rrf|fusion/);
    expect(plan.terms?.text).toBe('install search');
    expect([plan.account, plan.withOverview, plan.limit]).toEqual(['acme', true, 5]);
    const batch: Schemas['QueryRequestBatch'] = batchBody([plan]);
    expect(redactTerms(batch)).toMatchSnapshot();
  });

  it('sends the dense leg alone when the text has no lexical term', () => {
    const plan = planSearch(query({ text: 'the of and' }), TUNING);
    expect(plan.mode).toBe('dense');
    expect(plan.terms).toBeNull();
    expect(plan.requests).toMatchSnapshot();
  });

  it('sends the lexical leg alone, with the term counts, when there is no usable vector', () => {
    for (const vector of [null, new Float32Array(4)]) {
      const plan = planSearch(query({ vector }), TUNING);
      expect(plan.mode).toBe('lexical');
      expect(plan.requests[0]!.with_payload).toEqual({ include: [P.uri, P.lexCounts] });
    }
    const lexical = planSearch(query({ vector: null }), TUNING);
    expect(lexical.requests[0]!.query).toEqual(sparseQuery('install search', TUNING.minorWeight));
    expect(redactTerms(lexical.requests)).toMatchSnapshot();
  });

  it('sends nothing for a query with no leg or no rows wanted', () => {
    expect(planSearch(query({ vector: null, text: '' }), TUNING).requests).toEqual([]);
    expect(planSearch(query({ limit: 0 }), TUNING).requests).toEqual([]);
    expect(planSearch(query({ limit: 0.5 }), TUNING).mode).toBe('none');
  });

  it('still rejects an unsupported filter on a query with no leg', () => {
    expect(() => planSearch(query({ vector: null, text: '', filter: { op: 'must', field: 'nope', conds: [] } }), TUNING)).toThrow(UnsupportedFilterError);
  });

  it('sizes the legs like the embedded index: max(50, 3 × limit)', () => {
    expect(legDepth(5, TUNING)).toBe(50);
    expect(legDepth(40, TUNING)).toBe(120);
    expect(planSearch(query({ limit: 40 }), TUNING).requests.map((r) => r.limit)).toEqual([120, 120]);
  });

  it('ranks the document pool when the limit counts documents', () => {
    const plan = planSearch(query({ limit: 40, documents: true }), TUNING);
    expect([plan.limit, plan.documents]).toEqual([120, 40]);
    expect(plan.requests.map((r) => r.limit)).toEqual([360, 360]);
    expect(planSearch(query({ limit: 40 }), TUNING).documents).toBeNull();
  });

  it('batches several searches in order and splits the answers back', () => {
    const plans = [planSearch(query(), TUNING), planSearch(query({ vector: null }), TUNING), planSearch(query({ limit: 0 }), TUNING), planSearch(query({ text: '' }), TUNING)];
    const body = batchBody(plans);
    expect(body.searches).toHaveLength(4);
    const answers = ['a', 'b', 'c', 'd'];
    expect(splitBatch(plans, answers)).toEqual([['a', 'b'], ['c'], [], ['d']]);
    expect(() => splitBatch(plans, ['a'])).toThrow(/expected 4/);
  });
});

describe('statistics bodies', () => {
  it('count the account’s live points and a term’s, and facet the bits of their lengths', () => {
    const bodies: { live: Schemas['CountRequest']; term: Schemas['CountRequest']; either: Schemas['CountRequest']; lengths: Schemas['FacetRequest'] } = {
      live: liveCountBody('acme'),
      term: termCountBody('acme', ['0:install']),
      either: termCountBody('acme', ['0:猫', '1:猫']),
      lengths: lengthFacetBody('acme'),
    };
    expect(bodies).toMatchSnapshot();
  });
});

describe('search answers', () => {
  const counts = (main: Record<string, number>) => encodeTermCounts({ main: new Map(Object.entries(main)), minor: new Map() });
  const point = (id: string, score: number, payload: Record<string, unknown>): Schemas['ScoredPoint'] => ({ id, version: 1, score, payload });
  const stats = { docs: 10, tokens: 30, df: (k: string) => ({ '*:install': 1, '0:install': 1, '*:search': 4, '0:search': 4 })[k] ?? 0 };

  it('give the ranking each leg’s candidates: cosines from both requests, term counts from the lexical one', () => {
    const plan = planSearch(query(), TUNING);
    const answer = [
      { points: [point('a', 0.9, { [P.uri]: 'viking://r/a' }), point('b', 0.4, { [P.uri]: 'viking://r/b' })] },
      { points: [point('c', 0.7, { [P.uri]: 'viking://r/c', [P.lexCounts]: counts({ install: 2 }) }), point('d', 0.1, { [P.uri]: 'viking://r/d', [P.lexCounts]: 'garbage' })] },
    ];
    const cands = candidatesOf(plan, answer, TUNING.minorWeight);
    expect(cands.dense).toEqual([
      { key: 'a', uri: 'viking://r/a', cosine: 0.9 },
      { key: 'b', uri: 'viking://r/b', cosine: 0.4 },
    ]);
    expect(cands.lexical).toEqual([
      { key: 'c', uri: 'viking://r/c' },
      { key: 'd', uri: 'viking://r/d' },
    ]);
    expect(Object.fromEntries(cands.cosines)).toEqual({ a: 0.9, b: 0.4, c: 0.7, d: 0.1 });
    expect([...cands.terms.keys()]).toEqual(['c']);
    expect(cands.terms.get('c')!.count(0, 'install')).toBe(2);
  });

  it('rank by the shared ranking, read hits by id with their term counts, drop hits gone meanwhile, and threshold the calibrated score', () => {
    const plan = planSearch(query({ scoreThreshold: 0.5 }), TUNING);
    const answer = [
      { points: [point('a', 0.9, { [P.uri]: 'viking://r/a' }), point('g', 0.85, { [P.uri]: 'viking://r/g' }), point('b', 0.2, { [P.uri]: 'viking://r/b' })] },
      { points: [point('b', 0.2, { [P.uri]: 'viking://r/b', [P.lexCounts]: counts({ install: 1, search: 1 }) })] },
    ];
    const cands = candidatesOf(plan, answer, TUNING.minorWeight);
    const scorer = scorerOf(plan, stats, TUNING)!;
    const fused = fusedOf(plan, cands, scorer, TUNING);
    // The lexical leg weighs twice the dense one here: b leads.
    expect(fused.map((h) => h.key)).toEqual(['b', 'a', 'g']);
    expect(hitsBody(['b', 'a', 'g'], false)).toEqual({ ids: ['b', 'a', 'g'], with_payload: { include: [...(summarySelector(false) as Schemas['PayloadSelectorInclude']).include, P.lexCounts] }, with_vector: false });
    const read = new Map<string, Record<string, unknown>>([
      ['a', { [P.uri]: 'viking://r/a', [P.contextType]: 'resource', [P.lexCounts]: counts({ unrelated: 1 }) }],
      ['b', { [P.uri]: 'viking://r/b', [P.contextType]: 'resource', [P.lexCounts]: counts({ install: 1, search: 1 }) }],
    ]);
    const hits = hitsOf({ ...plan, threshold: null }, fused, cands, scorer, read, TUNING);
    // Scored by the shared model from the features read with the hits; g is gone.
    expect(hits.map((h) => h.node.uri).sort()).toEqual(['viking://r/a', 'viking://r/b']);
    const b = hits.find((h) => h.node.uri === 'viking://r/b')!;
    expect(b.features).toMatchObject({ cosine: 0.2, coverage: expect.closeTo(1, 9) });
    for (const h of hits) expect(h.score).toBe(ranking.relevanceScore(h.features!, TUNING.relevance));
    expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
    const between = (hits[0]!.score + hits[1]!.score) / 2;
    expect(hitsOf({ ...plan, threshold: between }, fused, cands, scorer, read, TUNING).map((h) => h.node.uri)).toEqual([hits[0]!.node.uri]);
    expect(hitsOf({ ...plan, threshold: 0.99 }, fused, cands, scorer, read, TUNING)).toEqual([]);
  });

  it('score a lexical-only search by the set cosine of the stored term counts', () => {
    const plan = planSearch(query({ vector: null, text: 'install search' }), TUNING);
    const c = counts({ install: 1, search: 1 });
    const cands = candidatesOf(plan, [{ points: [point('a', 7.5, { [P.uri]: 'viking://r/a', [P.lexCounts]: c })] }], TUNING.minorWeight);
    const scorer = scorerOf(plan, stats, TUNING);
    const hits = hitsOf(plan, fusedOf(plan, cands, scorer, TUNING), cands, scorer, new Map([['a', { [P.uri]: 'viking://r/a', [P.lexCounts]: c }]]), TUNING);
    expect(hits.map((h) => h.features!.cosine)).toEqual([expect.closeTo(1, 10)]);
    expect(hits[0]!.score).toBeGreaterThan(0.9);
  });

  it('read a point’s term counts once per id, and none from a missing or unreadable field', () => {
    const memo = new Map<string, DocTerms | null>();
    const d = termsOfPayload('a', { [P.lexCounts]: counts({ x: 2 }) }, 0.6, memo);
    expect(d?.count(0, 'x')).toBe(2);
    expect(termsOfPayload('a', {}, 0.6, memo)).toBe(d);
    expect(termsOfPayload('b', {}, 0.6, memo)).toBeNull();
    expect(termsOfPayload('c', { [P.lexCounts]: 'x 0\t' }, 0.6, memo)).toBeNull();
  });
});

describe('lexical sparse vectors and payload', () => {
  it('builds the sparse query from distinct terms with class weights, minor terms in their own id space', () => {
    const s = sparseQuery('search searching 跳舞')!;
    expect(s.indices).toEqual([...s.indices].sort((a, b) => a - b));
    expect(s.indices).toHaveLength(4); // search (stemmed once), 跳舞, 跳, 舞
    expect(s.values[s.indices.indexOf(hash32(lexicalTerms('search').main[0]!))]).toBe(1);
    expect(s.values[s.indices.indexOf(hash32('跳舞'))]).toBe(1);
    expect(s.values[s.indices.indexOf(hash32('跳', MINOR_SEED))]).toBe(DEFAULT_TUNING.minorWeight);
    expect(s.indices).not.toContain(hash32('跳'));
    expect(sparseQuery('the and of')).toBeNull();
  });

  it('builds document sparse vectors with sublinear tf, main and minor terms apart', () => {
    const d = documentSparseVector('跳舞 跳舞 跳');
    const at = (id: number) => d.values[d.indices.indexOf(id)];
    expect(at(hash32('跳舞'))).toBeCloseTo(1 + Math.log(2), 12); // bigram twice
    expect(at(hash32('跳'))).toBe(1); // the one-character run is a main term
    expect(at(hash32('跳', MINOR_SEED))).toBeCloseTo(1 + Math.log(2), 12); // unigram of both runs
    expect(at(hash32('舞', MINOR_SEED))).toBeCloseTo(1 + Math.log(2), 12);
    expect(d.indices).toHaveLength(4);
  });

  it('stores the term counts, the class keys of the distinct terms and the bits of the BM25 length', () => {
    const lex = lexicalPayload('跳舞 跳舞 跳 dancing');
    const doc = DocTerms.decode(lex.counts, 0.6);
    const text = DocTerms.ofText('跳舞 跳舞 跳 dancing', 0.6);
    expect([doc.counts, doc.length, doc.norm, doc.setNorm2]).toEqual([text.counts, text.length, text.norm, text.setNorm2]);
    expect(lex.terms.sort()).toEqual(['0:danc', '0:跳', '0:跳舞', '1:舞', '1:跳'].sort());
    // 1 + main 跳舞 ×2, 跳, danc + minor 跳 ×2, 舞 ×2 = 9 = 0b1001.
    expect(doc.length).toBe(9);
    expect(lex.lengthBits).toEqual(['0', '3']);
    expect(new QueryTerms('跳舞 dancing', TUNING).lookups()).toEqual(['*:跳舞', '0:跳舞', '*:danc', '0:danc', '*:跳', '1:跳', '*:舞', '1:舞']);
  });
});

describe('read bodies', () => {
  const vis = aliceVisibility({ actorPeer: 'bob' });
  it('fetch summaries for gather and bodies plus vectors for the tier-reader', () => {
    const summaryBody: Schemas['ScrollRequest'] = getBody(['viking://r/a', 'viking://r/a'], vis, 'summary');
    const fullBody: Schemas['ScrollRequest'] = getBody(['viking://r/a'], vis, 'full', 'next-id');
    expect(summaryBody.with_payload).toEqual(summarySelector(false));
    expect(summaryBody.with_vector).toBe(false);
    expect(fullBody.with_payload).toEqual(fullSelector());
    expect(fullBody.with_vector).toEqual(['dense']);
    expect(fullBody.offset).toBe('next-id');
    expect(summaryBody.filter).toEqual(uriReadFilter(['viking://r/a'], vis));
    expect({ summaryBody, fullBody }).toMatchSnapshot();
  });

  it('cover vectors, documents, exists and stats', () => {
    const bodies: {
      vectors: Schemas['ScrollRequest'];
      document: Schemas['ScrollRequest'];
      exists: Schemas['ScrollRequest'];
      count: Schemas['CountRequest'];
      facet: Schemas['FacetRequest'];
    } = {
      vectors: vectorsBody(['viking://r/a'], vis),
      document: documentBody('viking://resources/guide/intro.md', vis),
      exists: existsBody('viking://user/alice/memories/', vis),
      count: statsCountBody('acme'),
      facet: statsFacetBody(42, 'acme'),
    };
    expect(bodies).toMatchSnapshot();
    expect(statsCountBody().filter).toEqual({ must: [{ key: P.state, match: { value: 'live' } }] });
    // A whole-collection stats lists the accounts first: a document is (account, doc_uri).
    const accounts: Schemas['FacetRequest'] = statsAccountsBody(42);
    expect(accounts).toEqual({ key: P.account, limit: 42, filter: statsCountBody().filter, exact: true });
  });
});
