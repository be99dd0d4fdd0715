import { bucketContextType, categoryTargets, isMemoryBucket, withContextType } from './targets';

const U = 'viking://user/alice';

describe('categoryTargets', () => {
  it.each<[string, Parameters<typeof categoryTargets>, string[]]>([
    ['memory bucket without actor', ['events', 'alice', null, 'user'], [`${U}/memories/events`]],
    ['memory bucket with actor', ['preferences', 'alice', 'p1', 'user'], [`${U}/memories/preferences`, `${U}/peers/p1/memories/preferences`]],
    ['memory bucket for root is the same', ['entities', 'alice', 'p1', 'root'], [`${U}/memories/entities`, `${U}/peers/p1/memories/entities`]],
    ['resources, user role, no actor', ['resources', 'alice', null, 'user'], ['viking://resources', U]],
    ['resources, admin role, no actor', ['resources', 'alice', null, 'admin'], ['viking://resources', U]],
    ['resources, user role, actor', ['resources', 'alice', 'p1', 'user'], ['viking://resources', `${U}/resources`, `${U}/peers/p1/resources`]],
    ['resources, root role, no actor', ['resources', 'alice', null, 'root'], [`${U}/resources`, 'viking://resources']],
    ['resources, root role, actor', ['resources', 'alice', 'p1', 'root'], [`${U}/resources`, 'viking://resources', `${U}/peers/p1/resources`]],
    ['skills, any role', ['skills', 'alice', 'p1', 'user'], [`${U}/skills`, 'viking://agent/skills']],
    ['skills, root', ['skills', 'alice', null, 'root'], [`${U}/skills`, 'viking://agent/skills']],
  ])('%s', (_t, args, expected) => {
    expect(categoryTargets(...args)).toEqual(expected);
  });
});

describe('bucketContextType', () => {
  it.each([
    ['events', 'memory'],
    ['entities', 'memory'],
    ['preferences', 'memory'],
    ['experiences', 'memory'],
    ['resources', 'resource'],
    ['skills', 'skill'],
  ] as const)('%s → %s', (bucket, type) => {
    expect(bucketContextType(bucket)).toBe(type);
  });
});

describe('isMemoryBucket', () => {
  it('is true only for the four memory buckets', () => {
    expect(['events', 'entities', 'preferences', 'experiences', 'resources', 'skills', 'memories'].filter(isMemoryBucket)).toEqual([
      'events',
      'entities',
      'preferences',
      'experiences',
    ]);
  });
});

describe('withContextType', () => {
  const cond = { op: 'must', field: 'context_type', conds: ['memory'] };

  it('returns the bare condition without a filter', () => {
    expect(withContextType(null, 'memory')).toEqual(cond);
  });

  it('ANDs a single filter with the condition', () => {
    const f = { op: 'must', field: 'search_tags', conds: ['env=prod'] };
    expect(withContextType(f, 'memory')).toEqual({ op: 'and', conds: [f, cond] });
  });

  it('flattens an AND filter and appends the condition last', () => {
    const a = { op: 'must', field: 'search_tags', conds: ['a=b'] };
    const t = { op: 'time_range', field: 'updated_at', gte: '2026-01-01T00:00:00.000Z' };
    const f = { op: 'and', conds: [a, t] };
    expect(withContextType(f, 'skill')).toEqual({ op: 'and', conds: [a, t, { ...cond, conds: ['skill'] }] });
    expect(f.conds).toHaveLength(2);
  });
});
