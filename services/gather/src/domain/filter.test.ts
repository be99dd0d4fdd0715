import { InvalidFilterError, MAX_FILTER_DEPTH, parseFilterJson, validateFilter } from './filter';

describe('parseFilterJson', () => {
  it('reads "" and "null" as no filter', () => {
    expect(parseFilterJson('')).toBeNull();
    expect(parseFilterJson('  ')).toBeNull();
    expect(parseFilterJson('null')).toBeNull();
  });

  it('accepts what the gateway compiles (§1.8): and of must, time_range and tags', () => {
    const f = {
      op: 'and',
      conds: [
        { op: 'must', field: 'category', conds: ['events'] },
        { op: 'must', field: 'context_type', conds: ['skill', 'memory'] },
        { op: 'time_range', field: 'created_at', gte: '2026-07-14T11:00:00.000Z' },
        { op: 'must', field: 'search_tags', conds: ['env=prod'] },
      ],
    };
    expect(parseFilterJson(JSON.stringify(f))).toEqual(f);
  });

  it('accepts range, must_not and prefix nodes and drops unknown keys', () => {
    expect(parseFilterJson('{"op":"range","field":"level","gte":0,"lt":"2","note":"x"}')).toEqual({ op: 'range', field: 'level', gte: 0, lt: 2 });
    expect(parseFilterJson('{"op":"must_not","field":"uri","conds":["viking://a"]}')).toEqual({ op: 'must_not', field: 'uri', conds: ['viking://a'] });
    expect(parseFilterJson('{"op":"prefix","field":"uri","prefix":"viking://resources/"}')).toEqual({ op: 'prefix', field: 'uri', prefix: 'viking://resources/' });
  });

  it.each([
    ['not JSON', '{op:', /not valid JSON/],
    ['an array', '[1]', /must be an object/],
    ['an unknown op', '{"op":"near","field":"uri"}', /unsupported filter op "near"/],
    ['an unknown field', '{"op":"must","field":"x","conds":[1]}', /unsupported filter field "x"/],
    ['conds not an array', '{"op":"must","field":"uri","conds":"a"}', /conds array/],
    ['an object value', '{"op":"must","field":"uri","conds":[{}]}', /strings, numbers or booleans/],
    ['a non-numeric level', '{"op":"must","field":"level","conds":["two"]}', /level values must be numbers/],
    ['a time_range on a keyword', '{"op":"time_range","field":"uri","gte":"2026-01-01"}', /numeric or time field/],
    ['a time_range on level', '{"op":"time_range","field":"level","gte":"2026-01-01"}', /time_range needs a time field/],
    ['an unparsable time', '{"op":"time_range","field":"updated_at","gte":"yesterday"}', /gte: not a time/],
    ['a prefix on a number', '{"op":"prefix","field":"level","prefix":"1"}', /string field/],
    ['a nested problem, with its path', '{"op":"and","conds":[{"op":"or","conds":[{"op":"must","field":"nope","conds":[]}]}]}', /filter\.conds\[0\]\.conds\[0\]/],
  ])('rejects %s', (_what, json, message) => {
    expect(() => parseFilterJson(json)).toThrow(InvalidFilterError);
    expect(() => parseFilterJson(json)).toThrow(message);
  });

  it('bounds nesting depth', () => {
    let node: unknown = { op: 'must', field: 'uri', conds: ['u'] };
    for (let i = 0; i <= MAX_FILTER_DEPTH; i++) node = { op: 'and', conds: [node] };
    expect(() => validateFilter(node)).toThrow(/nested deeper/);
  });
});
