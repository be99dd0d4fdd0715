import { DomainError } from './errors';
import {
  andAll,
  checkFilter,
  compileFilter,
  CONTEXT_TYPE_MESSAGE,
  MAX_FILTER_DEPTH,
  MAX_FILTER_NODES,
  normalizeTags,
  parseContextTypes,
  parseLevels,
  parseTimeBound,
  SINCE_UNTIL_MESSAGE,
  timeCondition,
} from './filter';

const NOW = Date.UTC(2026, 6, 14, 12, 0, 0, 0); // 2026-07-14T12:00:00.000Z
const iso = (ms: number) => new Date(ms).toISOString();

function domainError(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

describe('parseContextTypes', () => {
  it.each<[string | string[] | null | undefined, string[] | null]>([
    [null, null],
    [undefined, null],
    ['', null],
    [[], null],
    ['memory', ['memory']],
    ['Memory', ['memory']],
    [' RESOURCE ', ['resource']],
    ['memory,skill', ['memory', 'skill']],
    ['memory, ,skill,', ['memory', 'skill']],
    [['skill', 'memory,resource'], ['skill', 'memory', 'resource']],
    [['memory', 'MEMORY'], ['memory']],
  ])('%j → %j', (input, expected) => {
    expect(parseContextTypes(input)).toEqual(expected);
  });

  it.each([['memories'], ['memory,file'], [['skill', 'doc']]])('rejects %j with the exact message', (input) => {
    const e = domainError(() => parseContextTypes(input));
    expect([e.code, e.status, e.message]).toEqual(['INVALID_ARGUMENT', 400, CONTEXT_TYPE_MESSAGE]);
    expect(CONTEXT_TYPE_MESSAGE).toBe('context_type must be one or more of: memory, resource, skill');
  });
});

describe('normalizeTags', () => {
  it.each<[string[] | null | undefined, string[]]>([
    [null, []],
    [[], []],
    [['Env=Prod', ' env=prod ', 'team=Search'], ['env=prod', 'team=search']],
    [['a=1', 'b=2', 'A=3'], ['a=3', 'b=2']],
    [[' k = v '], ['k=v']],
  ])('%j → %j', (input, expected) => {
    expect(normalizeTags(input)).toEqual(expected);
  });

  it.each(['env', 'env=', '=prod', 'a=b=c', '  ', ' = '])('rejects %p as not strict k=v', (tag) => {
    const e = domainError(() => normalizeTags(['ok=1', tag]));
    expect([e.code, e.status]).toEqual(['INVALID_ARGUMENT', 400]);
    expect(e.message).toContain(`'${tag}'`);
  });
});

describe('parseTimeBound', () => {
  it.each<[string, 'since' | 'until', string]>([
    ['30s', 'since', iso(NOW - 30_000)],
    ['15m', 'since', iso(NOW - 15 * 60_000)],
    ['2h', 'since', '2026-07-14T10:00:00.000Z'],
    ['7d', 'since', '2026-07-07T12:00:00.000Z'],
    ['2w', 'until', '2026-06-30T12:00:00.000Z'],
    ['0d', 'since', '2026-07-14T12:00:00.000Z'],
    ['2026-07-01', 'since', '2026-07-01T00:00:00.000Z'],
    ['2026-07-01', 'until', '2026-07-01T23:59:59.999Z'],
    ['2026-07-01T08:30:00Z', 'since', '2026-07-01T08:30:00.000Z'],
    ['2026-07-01T08:30Z', 'since', '2026-07-01T08:30:00.000Z'],
    ['2026-07-01 08:30:15.123456', 'until', '2026-07-01T08:30:15.123Z'],
    ['2026-07-01T08:30:00.5+02:00', 'since', '2026-07-01T06:30:00.500Z'],
    ['2026-07-01T01:00:00-0130', 'since', '2026-07-01T02:30:00.000Z'],
    [' 2026-02-28 ', 'until', '2026-02-28T23:59:59.999Z'],
  ])('%p as %s → %s', (value, bound, expected) => {
    expect(iso(parseTimeBound(value, bound, NOW)!)).toBe(expected);
  });

  it.each([[null], [undefined], [''], ['   ']])('treats %p as absent', (value) => {
    expect(parseTimeBound(value, 'since', NOW)).toBeNull();
  });

  it.each(['yesterday', '7 d', '7D', '-3d', '2026-13-01', '2026-02-30', '2026-07-01T25:00', '2026-07-01T10:00+25:00', '2026/07/01', '1e3s'])(
    'rejects %p',
    (value) => {
      const e = domainError(() => parseTimeBound(value, 'until', NOW));
      expect([e.code, e.status]).toEqual(['INVALID_ARGUMENT', 400]);
      expect(e.message).toContain('until');
    },
  );
});

describe('timeCondition', () => {
  it('is null without bounds', () => {
    expect(timeCondition(null, undefined, 'created_at', NOW)).toBeNull();
  });

  it.each<[string | null, string | null, 'updated_at' | 'created_at' | null, object]>([
    ['1d', null, null, { op: 'time_range', field: 'updated_at', gte: '2026-07-13T12:00:00.000Z' }],
    [null, '2026-07-01', 'created_at', { op: 'time_range', field: 'created_at', lte: '2026-07-01T23:59:59.999Z' }],
    ['2026-07-01', '2026-07-01', null, { op: 'time_range', field: 'updated_at', gte: '2026-07-01T00:00:00.000Z', lte: '2026-07-01T23:59:59.999Z' }],
  ])('since %p until %p on %p', (since, until, field, expected) => {
    expect(timeCondition(since, until, field, NOW)).toEqual(expected);
  });

  it('rejects since later than until with the exact message', () => {
    const e = domainError(() => timeCondition('2026-07-02', '2026-07-01', null, NOW));
    expect([e.code, e.status, e.message]).toEqual(['INVALID_ARGUMENT', 400, SINCE_UNTIL_MESSAGE]);
    expect(SINCE_UNTIL_MESSAGE).toBe('since must be earlier than or equal to until');
  });
});

describe('compileFilter', () => {
  it('returns null when nothing applies', () => {
    expect(compileFilter({}, NOW)).toBeNull();
    expect(compileFilter({ filter: {}, contextType: '', tags: [] }, NOW)).toBeNull();
  });

  it('returns a single condition bare', () => {
    expect(compileFilter({ contextType: 'memory' }, NOW)).toEqual({ op: 'must', field: 'context_type', conds: ['memory'] });
    expect(compileFilter({ tags: ['Env=Prod'] }, NOW)).toEqual({ op: 'must', field: 'search_tags', conds: ['env=prod'] });
  });

  it('ANDs filter, context_type, time and one condition per tag, in that order', () => {
    const user = { op: 'must', field: 'category', conds: ['events'] };
    expect(
      compileFilter({ filter: user, contextType: 'skill,memory', since: '1h', timeField: 'created_at', tags: ['Env=Prod', ' env=prod ', 'team=Search'] }, NOW),
    ).toEqual({
      op: 'and',
      conds: [
        user,
        { op: 'must', field: 'context_type', conds: ['skill', 'memory'] },
        { op: 'time_range', field: 'created_at', gte: '2026-07-14T11:00:00.000Z' },
        { op: 'must', field: 'search_tags', conds: ['env=prod'] },
        { op: 'must', field: 'search_tags', conds: ['team=search'] },
      ],
    });
  });

  it('flattens an AND request filter', () => {
    const a = { op: 'must', field: 'x', conds: [1] };
    const b = { op: 'prefix', field: 'uri', prefix: 'viking://resources' };
    expect(compileFilter({ filter: { op: 'and', conds: [a, { op: 'and', conds: [b] }] }, contextType: 'resource' }, NOW)).toEqual({
      op: 'and',
      conds: [a, b, { op: 'must', field: 'context_type', conds: ['resource'] }],
    });
  });

  it('propagates validation errors', () => {
    expect(domainError(() => compileFilter({ tags: ['bad'] }, NOW)).code).toBe('INVALID_ARGUMENT');
    expect(domainError(() => compileFilter({ since: '2026-07-02', until: '2026-07-01' }, NOW)).message).toBe(SINCE_UNTIL_MESSAGE);
  });
});

describe('andAll', () => {
  it('keeps a malformed AND node as a leaf', () => {
    const odd = { op: 'and' } as unknown as Parameters<typeof andAll>[0][number];
    expect(andAll([odd])).toBe(odd);
  });
});

describe('parseLevels', () => {
  it.each<[number | string | number[] | null | undefined, number[] | null]>([
    [null, null],
    [undefined, null],
    [2, [2]],
    [0, [0]],
    ['0,2', [0, 2]],
    [' 1 , 2 ', [1, 2]],
    ['2', [2]],
    ['', null],
    [',', null],
    [[0, 2], [0, 2]],
    [[], null],
  ])('%j → %j', (input, expected) => {
    expect(parseLevels(input)).toEqual(expected);
  });

  it.each(['a', '1,b', '1.5'])('rejects %p', (input) => {
    expect(domainError(() => parseLevels(input)).code).toBe('INVALID_ARGUMENT');
  });
});

// The check gathering used to run on `filter_json` (same messages, same order): the gateway
// now runs it once, on the effective filter, and hands the stores a checked tree.
describe('checkFilter', () => {
  const check = (json: string) => checkFilter(JSON.parse(json) as unknown);

  it('accepts what compileFilter builds (§1.8): and of must, time_range and tags, times in ms', () => {
    const f = {
      op: 'and',
      conds: [
        { op: 'must', field: 'category', conds: ['events'] },
        { op: 'must', field: 'context_type', conds: ['skill', 'memory'] },
        { op: 'time_range', field: 'created_at', gte: '2026-07-14T11:00:00.000Z' },
        { op: 'must', field: 'search_tags', conds: ['env=prod'] },
      ],
    };
    expect(checkFilter(f)).toEqual({
      op: 'and',
      conds: [
        { op: 'must', field: 'category', conds: ['events'] },
        { op: 'must', field: 'context_type', conds: ['skill', 'memory'] },
        { op: 'time_range', field: 'created_at', gte: Date.parse('2026-07-14T11:00:00.000Z') },
        { op: 'must', field: 'search_tags', conds: ['env=prod'] },
      ],
    });
  });

  it('accepts range, must_not and prefix nodes, drops unknown keys, and reads times and numeric strings', () => {
    expect(check('{"op":"range","field":"level","gte":0,"lt":"2","note":"x"}')).toEqual({ op: 'range', field: 'level', gte: 0, lt: 2 });
    expect(check('{"op":"range","field":"updated_at","gt":"2026-01-01","lte":1767225600000}')).toEqual({ op: 'range', field: 'updated_at', gt: Date.parse('2026-01-01'), lte: 1767225600000 });
    expect(check('{"op":"must","field":"valid_from","conds":["2026-01-01",5]}')).toEqual({ op: 'must', field: 'valid_from', conds: [Date.parse('2026-01-01'), 5] });
    expect(check('{"op":"must_not","field":"uri","conds":["viking://a"]}')).toEqual({ op: 'must_not', field: 'uri', conds: ['viking://a'] });
    expect(check('{"op":"prefix","field":"uri","prefix":"viking://resources/"}')).toEqual({ op: 'prefix', field: 'uri', prefix: 'viking://resources/' });
  });

  it.each([
    ['an array', '[1]', 'filter: a filter node must be an object'],
    ['an unknown op', '{"op":"near","field":"uri"}', 'filter: unsupported filter op "near"; supported: and, or, must, must_not, range, time_range, prefix'],
    ['an unknown field', '{"op":"must","field":"x","conds":[1]}', /^filter: unsupported filter field "x"; supported: context_type, category,/],
    ['conds not an array', '{"op":"must","field":"uri","conds":"a"}', 'filter: must needs a conds array of values'],
    ['an object value', '{"op":"must","field":"uri","conds":[{}]}', 'filter.conds[0]: values must be strings, numbers or booleans'],
    ['a non-numeric level', '{"op":"must","field":"level","conds":["two"]}', 'filter.conds[0]: level values must be numbers'],
    ['a time_range on a keyword', '{"op":"time_range","field":"uri","gte":"2026-01-01"}', 'filter: time_range needs a numeric or time field, got uri'],
    ['a time_range on level', '{"op":"time_range","field":"level","gte":"2026-01-01"}', 'filter: time_range needs a time field, got level'],
    ['an unparsable time', '{"op":"time_range","field":"updated_at","gte":"yesterday"}', 'filter.gte: not a time: "yesterday"'],
    ['a prefix on a number', '{"op":"prefix","field":"level","prefix":"1"}', 'filter: prefix needs a string field, got level'],
    ['a nested problem, with its path', '{"op":"and","conds":[{"op":"or","conds":[{"op":"must","field":"nope","conds":[]}]}]}', /^filter\.conds\[0\]\.conds\[0\]: unsupported filter field "nope"/],
  ])('refuses %s with a 400 naming it', (_what, json, message) => {
    const e = domainError(() => check(json));
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.message).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
  });

  it('bounds nesting depth and size', () => {
    let node: unknown = { op: 'must', field: 'uri', conds: ['u'] };
    for (let i = 0; i <= MAX_FILTER_DEPTH; i++) node = { op: 'and', conds: [node] };
    expect(domainError(() => checkFilter(node)).message).toMatch(/nested deeper than 16 levels/);
    const wide = { op: 'or', conds: Array.from({ length: MAX_FILTER_NODES }, () => ({ op: 'must', field: 'uri', conds: ['u'] })) };
    expect(domainError(() => checkFilter(wide)).message).toBe('filter has more than 512 nodes');
  });

  it('checks the request filter where it sits in the effective filter (the path names its place)', () => {
    const effective = compileFilter({ filter: { op: 'must', field: 'colour', conds: ['red'] }, contextType: 'memory' }, NOW);
    expect(domainError(() => checkFilter(effective)).message).toMatch(/^filter\.conds\[0\]: unsupported filter field "colour"/);
  });
});
