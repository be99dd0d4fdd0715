import { CATEGORY_TIER_DEFAULTS, detailFromWire, detailToWire, isMemoryCategory, normalizeDetail, pinFor, tierPolicy, tierRank } from './tiers';

describe('tier ladder', () => {
  it('orders uri < abstract < overview < full', () => {
    expect(['full', 'uri', 'overview', 'abstract'].sort((a, b) => tierRank(a as never) - tierRank(b as never))).toEqual([
      'uri',
      'abstract',
      'overview',
      'full',
    ]);
  });
});

describe('CATEGORY_TIER_DEFAULTS', () => {
  it('holds the §4.2 table', () => {
    expect(CATEGORY_TIER_DEFAULTS.events).toEqual({ start: 'overview', ceiling: 'full', substitute: 'overview' });
    for (const c of ['entities', 'preferences', 'experiences', 'memories'] as const) {
      expect(CATEGORY_TIER_DEFAULTS[c]).toEqual({ start: 'abstract', ceiling: 'abstract', substitute: 'overview' });
    }
    for (const c of ['resources', 'skills'] as const) {
      expect(CATEGORY_TIER_DEFAULTS[c]).toEqual({ start: 'abstract', ceiling: 'abstract', substitute: 'uri' });
    }
  });

  it('marks the memory categories', () => {
    expect(['events', 'entities', 'preferences', 'experiences', 'memories'].every(isMemoryCategory)).toBe(true);
    expect(isMemoryCategory('resources')).toBe(false);
    expect(isMemoryCategory('skills')).toBe(false);
  });
});

describe('normalizeDetail', () => {
  it.each([[undefined], [null], ['auto'], ['uri'], ['FULL'], ['summary'], [3], [[]], [{}], [true]])(
    'treats %j as no pin',
    (detail) => {
      const spec = normalizeDetail(detail);
      expect(spec.stats).toBeNull();
      expect(pinFor(spec, 'events')).toBeNull();
      expect(pinFor(spec, 'resources')).toBeNull();
    },
  );

  it.each([['abstract'], ['overview'], ['full']])('pins every category with the scalar %s', (tier) => {
    const spec = normalizeDetail(tier);
    expect(spec.stats).toBe(tier);
    for (const c of Object.keys(CATEGORY_TIER_DEFAULTS)) expect(pinFor(spec, c)).toBe(tier);
  });

  it('keeps valid per-category pins in request order and drops the rest', () => {
    const spec = normalizeDetail({
      entities: 'overview',
      experiences: 'full',
      memories: 'overview',
      resource: 'full',
      events: 2,
      Events: 'full',
      skills: 'auto',
      preferences: 'uri',
      resources: 'Full',
    });
    expect(spec.stats).toEqual({ entities: 'overview', experiences: 'full', memories: 'overview' });
    expect(Object.keys(spec.stats as object)).toEqual(['entities', 'experiences', 'memories']);
    expect(pinFor(spec, 'entities')).toBe('overview');
    expect(pinFor(spec, 'events')).toBeNull();
    expect(pinFor(spec, 'skills')).toBeNull();
  });

  it('reports null when an object keeps nothing', () => {
    expect(normalizeDetail({ foo: 'full', events: 'auto' }).stats).toBeNull();
  });
});

describe('tierPolicy', () => {
  it('starts events at overview and lets them deepen to full', () => {
    expect(tierPolicy('events', false, true, null)).toEqual({ start: 'overview', ceiling: 'full', fallback: ['overview', 'abstract', 'uri'] });
  });

  it('tries the overview substitute second for memory categories at abstract', () => {
    expect(tierPolicy('entities', false, true, null)).toEqual({
      start: 'abstract',
      ceiling: 'abstract',
      fallback: ['abstract', 'overview', 'uri'],
    });
  });

  it('substitutes overview for a memory entry without abstract, and uri for resources/skills', () => {
    expect(tierPolicy('preferences', false, false, null)).toEqual({ start: 'overview', ceiling: 'overview', fallback: ['overview', 'abstract', 'uri'] });
    expect(tierPolicy('resources', false, false, null)).toEqual({ start: 'uri', ceiling: 'abstract', fallback: ['uri'] });
    expect(tierPolicy('skills', false, true, null)).toEqual({ start: 'abstract', ceiling: 'abstract', fallback: ['abstract', 'uri'] });
  });

  it('serves directories at overview whatever the pin', () => {
    for (const pin of [null, 'abstract', 'full'] as const) {
      expect(tierPolicy('resources', true, true, pin)).toEqual({ start: 'overview', ceiling: 'overview', fallback: ['overview', 'abstract', 'uri'] });
    }
  });

  it('makes a pin both start and ceiling', () => {
    expect(tierPolicy('resources', false, true, 'full')).toEqual({ start: 'full', ceiling: 'full', fallback: ['full', 'overview', 'abstract', 'uri'] });
    expect(tierPolicy('events', false, true, 'abstract')).toEqual({ start: 'abstract', ceiling: 'abstract', fallback: ['abstract', 'overview', 'uri'] });
    expect(tierPolicy('skills', false, true, 'overview')).toEqual({ start: 'overview', ceiling: 'overview', fallback: ['overview', 'abstract', 'uri'] });
  });

  it('lets a memory pinned at abstract without abstract be served at overview', () => {
    expect(tierPolicy('memories', false, false, 'abstract')).toEqual({ start: 'overview', ceiling: 'overview', fallback: ['overview', 'abstract', 'uri'] });
  });

  it('treats an unknown category as the memories catch-all', () => {
    expect(tierPolicy('bogus', false, true, null)).toEqual(tierPolicy('memories', false, true, null));
  });
});

describe('detailToWire / detailFromWire', () => {
  it('carries no pin, a scalar and per-category pins (in their order) through the wire shape', () => {
    expect(detailToWire(null)).toBeUndefined();
    expect(detailFromWire(undefined)).toBeNull();
    expect(detailFromWire({ pin: undefined })).toBeNull();
    expect(detailToWire('full')).toEqual({ pin: { $case: 'all', value: 'full' } });
    expect(detailFromWire(detailToWire('full'))).toBe('full');
    const byCategory = detailToWire({ skills: 'full', events: 'abstract' });
    expect(byCategory).toEqual({ pin: { $case: 'byCategory', value: { pins: [{ category: 'skills', tier: 'full' }, { category: 'events', tier: 'abstract' }] } } });
    const back = detailFromWire(byCategory);
    expect(back).toEqual({ skills: 'full', events: 'abstract' });
    expect(Object.keys(back as object)).toEqual(['skills', 'events']);
  });

  it('leaves judging the values to normalizeDetail (an unknown category or tier is carried, then dropped)', () => {
    const back = detailFromWire(detailToWire({ bogus: 'full', events: 'uri', skills: 'overview' }));
    expect(back).toEqual({ bogus: 'full', events: 'uri', skills: 'overview' });
    expect(normalizeDetail(back).stats).toEqual({ skills: 'overview' });
  });
});
