import { any, bool, dict, float, int, intRange, list, literal, nullable, str, union, validateModel, type Validator } from './schema';

const run = <T>(v: Validator<T>, input: unknown) => v.check(input, ['body', 'f'], false);
const value = <T>(v: Validator<T>, input: unknown) => {
  const r = run(v, input);
  if (!r.ok) throw new Error(`unexpected failure: ${JSON.stringify(r.issues)}`);
  return r.value;
};
const issues = <T>(v: Validator<T>, input: unknown) => {
  const r = run(v, input);
  if (r.ok) throw new Error(`unexpected success: ${JSON.stringify(r.value)}`);
  return r.issues.map((i) => [i.loc.join('.'), i.msg, i.type]);
};

describe('scalar validators', () => {
  it.each<[string, Validator<unknown>, unknown, unknown]>([
    ['str', str, 'x', 'x'],
    ['int', int, 5, 5],
    ['int from integral float', int, 5.0, 5],
    ['int from bool', int, true, 1],
    ['int from string', int, ' 42 ', 42],
    ['int from "5.00"', int, '5.00', 5],
    ['float from int', float, 2, 2],
    ['float from string', float, '0.35', 0.35],
    ['float from bool', float, false, 0],
    ['bool', bool, false, false],
    ['bool from 1', bool, 1, true],
    ['bool from "yes"', bool, 'yes', true],
    ['bool from "Off"', bool, 'Off', false],
    ['literal', literal('list', 'context'), 'context', 'context'],
    ['any', any, { a: [1] }, { a: [1] }],
    ['nullable null', nullable(int), null, null],
  ])('%s accepts', (_t, v, input, expected) => {
    expect(value(v, input)).toEqual(expected);
  });

  it.each<[string, Validator<unknown>, unknown, string, string]>([
    ['str rejects numbers', str, 5, 'Input should be a valid string', 'string_type'],
    ['str rejects null', str, null, 'Input should be a valid string', 'string_type'],
    ['int rejects fractions', int, 2.5, 'Input should be a valid integer, got a number with a fractional part', 'int_from_float'],
    ['int rejects words', int, 'ten', 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing'],
    ['int rejects null', int, null, 'Input should be a valid integer', 'int_type'],
    ['int rejects lists', int, [1], 'Input should be a valid integer', 'int_type'],
    ['float rejects words', float, 'abc', 'Input should be a valid number, unable to parse string as a number', 'float_parsing'],
    ['float rejects objects', float, {}, 'Input should be a valid number', 'float_type'],
    ['bool rejects 2', bool, 2, 'Input should be a valid boolean, unable to interpret input', 'bool_parsing'],
    ['bool rejects "maybe"', bool, 'maybe', 'Input should be a valid boolean, unable to interpret input', 'bool_parsing'],
    ['bool rejects null', bool, null, 'Input should be a valid boolean', 'bool_type'],
    ['literal of two', literal('list', 'context'), 'ctx', "Input should be 'list' or 'context'", 'literal_error'],
    ['literal of four', literal('auto', 'abstract', 'overview', 'full'), 'x', "Input should be 'auto', 'abstract', 'overview' or 'full'", 'literal_error'],
    ['literal of one', literal('auto'), 'x', "Input should be 'auto'", 'literal_error'],
    ['range low', intRange({ ge: 64, le: 32000 }), 63, 'Input should be greater than or equal to 64', 'greater_than_equal'],
    ['range high', intRange({ ge: 64, le: 32000 }), 32001, 'Input should be less than or equal to 32000', 'less_than_equal'],
  ])('%s', (_t, v, input, msg, type) => {
    expect(issues(v, input)).toEqual([['body.f', msg, type]]);
  });
});

describe('list and dict', () => {
  it('locates item errors by index', () => {
    expect(issues(list(str), ['a', 1, 'b', null])).toEqual([
      ['body.f.1', 'Input should be a valid string', 'string_type'],
      ['body.f.3', 'Input should be a valid string', 'string_type'],
    ]);
  });

  it('rejects a non-list', () => {
    expect(issues(list(str), 'a')).toEqual([['body.f', 'Input should be a valid list', 'list_type']]);
  });

  it('enforces max_length with pydantic’s message', () => {
    expect(issues(list(str, { maxLength: 200 }), Array(201).fill('x'))).toEqual([
      ['body.f', 'List should have at most 200 items after validation, not 201', 'too_long'],
    ]);
    expect(value(list(str, { maxLength: 200 }), Array(200).fill('x'))).toHaveLength(200);
  });

  it('locates dict value errors by key and keeps key order', () => {
    expect(issues(dict(int), { events: 'x', skills: 2, entities: 1.5 })).toEqual([
      ['body.f.events', 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing'],
      ['body.f.entities', 'Input should be a valid integer, got a number with a fractional part', 'int_from_float'],
    ]);
    expect(Object.keys(value(dict(int), { skills: 1, events: '2' }))).toEqual(['skills', 'events']);
    expect(issues(dict(int), [1])).toEqual([['body.f', 'Input should be a valid dictionary', 'dict_type']]);
  });

  it('keeps a "__proto__" key as data', () => {
    const got = value(dict(int), JSON.parse('{"__proto__": 1}')) as Record<string, number>;
    expect(Object.keys(got)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
  });
});

describe('union', () => {
  const target = union(str, list(str));

  it('takes the first strict match', () => {
    expect(value(target, 'viking://x')).toBe('viking://x');
    expect(value(target, ['a'])).toEqual(['a']);
    expect(value(union(bool, literal('auto')), 'auto')).toBe('auto');
    expect(value(union(int, str, list(int)), '0,2')).toBe('0,2');
  });

  it('falls back to lax matches in member order', () => {
    expect(value(union(bool, literal('auto')), 'true')).toBe(true);
    expect(value(union(float, dict(float)), '0.3')).toBe(0.3);
    expect(value(union(float, dict(float)), { events: '0.5' })).toEqual({ events: 0.5 });
  });

  it('reports every member’s errors under its label', () => {
    expect(issues(target, 5)).toEqual([
      ['body.f.str', 'Input should be a valid string', 'string_type'],
      ['body.f.list[str]', 'Input should be a valid list', 'list_type'],
    ]);
    expect(issues(union(literal('auto', 'abstract', 'overview', 'full'), dict(literal('abstract', 'overview', 'full'))), { events: 'huge' })).toEqual([
      ["body.f.literal['auto','abstract','overview','full']", "Input should be 'auto', 'abstract', 'overview' or 'full'", 'literal_error'],
      ["body.f.dict[str,literal['abstract','overview','full']].events", "Input should be 'abstract', 'overview' or 'full'", 'literal_error'],
    ]);
  });
});

describe('validateModel', () => {
  const fields = [
    { name: 'query', type: str, required: true },
    { name: 'limit', type: int },
    { name: 'mode', type: literal('list', 'context') },
  ];

  it('returns present values and which keys were sent', () => {
    const r = validateModel({ query: 'q', mode: 'context' }, fields);
    expect(r).toEqual({ ok: true, model: { values: { query: 'q', mode: 'context' }, provided: new Set(['query', 'mode']) } });
  });

  it('reports field errors in declaration order, then extras in body order', () => {
    const r = validateModel({ zeta: 1, mode: 'x', limit: 'y', alpha: 2 }, fields);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.issues.map((i) => [i.loc.join('.'), i.type])).toEqual([
        ['body.query', 'missing'],
        ['body.limit', 'int_parsing'],
        ['body.mode', 'literal_error'],
        ['body.zeta', 'extra_forbidden'],
        ['body.alpha', 'extra_forbidden'],
      ]);
      expect(r.issues[0].msg).toBe('Field required');
      expect(r.issues[3].msg).toBe('Extra inputs are not permitted');
    }
  });

  it.each<[unknown, string, string]>([
    [[1, 2], 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type'],
    ['text', 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type'],
    [null, 'Input should be a valid dictionary or object to extract fields from', 'model_attributes_type'],
    [undefined, 'Field required', 'missing'],
  ])('rejects the body %p at ["body"]', (body, msg, type) => {
    expect(validateModel(body, fields)).toEqual({ ok: false, issues: [{ loc: ['body'], msg, type }] });
  });
});
