import { activeBuckets, normalizeQuotas, PURPOSE_PRESETS, RECALL_DEFAULT_QUOTAS } from './quotas';

describe('normalizeQuotas', () => {
  it.each<[string, unknown, 'chat' | 'coding' | null, Record<string, number> | null]>([
    ['null quotas and no purpose → flat mode', null, null, null],
    ['absent quotas and no purpose → flat mode', undefined, null, null],
    ['coding preset', null, 'coding', { events: 1, entities: 2, preferences: 1, experiences: 1, resources: 3, skills: 2 }],
    ['chat preset', null, 'chat', { events: 3, entities: 3, preferences: 1, experiences: 1, resources: 1, skills: 1 }],
    ['{} is bucketed with no bucket', {}, null, {}],
    ['explicit quotas ignore the purpose', { events: 2 }, 'chat', { events: 2 }],
    ['unknown keys are dropped', { events: 1, memories: 4, bogus: 2 }, null, { events: 1 }],
    ['negative values clamp to 0', { events: -3 }, null, { events: 0 }],
    ['floats truncate like int()', { skills: 2.9 }, null, { skills: 2 }],
    ['integer strings parse', { resources: '4' }, null, { resources: 4 }],
    ['unparsable values become 0', { events: 'many', entities: null, skills: [1] }, null, { events: 0, entities: 0, skills: 0 }],
    ['a non-object counts as {}', [1, 2], null, {}],
  ])('%s', (_title, quotas, purpose, expected) => {
    const got = normalizeQuotas(quotas, purpose);
    expect(got).toEqual(expected);
    if (expected) expect(Object.keys(got!)).toEqual(Object.keys(expected));
  });

  it('keeps the input key order rather than the canonical order', () => {
    const got = normalizeQuotas({ skills: 1, events: 2, resources: 3 }, null);
    expect(Object.keys(got!)).toEqual(['skills', 'events', 'resources']);
  });

  it('returns a copy of the preset that callers may mutate', () => {
    const got = normalizeQuotas(null, 'coding')!;
    got.events = 99;
    expect(PURPOSE_PRESETS.coding.events).toBe(1);
    expect(normalizeQuotas(null, 'coding')!.events).toBe(1);
  });

  it('has the v1 recall defaults in contract order', () => {
    expect(Object.entries(RECALL_DEFAULT_QUOTAS)).toEqual([
      ['events', 10],
      ['entities', 10],
      ['preferences', 3],
      ['experiences', 0],
    ]);
  });
});

describe('activeBuckets', () => {
  it('keeps buckets with a quota above 0 in map order', () => {
    expect(activeBuckets({ skills: 2, events: 0, entities: 1 })).toEqual([
      ['skills', 2],
      ['entities', 1],
    ]);
  });

  it('is empty for {}', () => {
    expect(activeBuckets({})).toEqual([]);
  });
});
