import { finiteJson, isJsonContentType, jsonErrorPosition, JsonBodyError, parseBody, UnsupportedMediaTypeError } from './json';

describe('jsonErrorPosition', () => {
  // Offsets as Python's json.loads reports them in JSONDecodeError.pos.
  it.each<[string, number | null]>([
    ['{"a": 1}', null],
    ['  [1, 2.5e3, -0, "x\\u00e9\\n", true, false, null, {}] ', null],
    ['', 0],
    ['   ', 3],
    ['{', 1],
    ['{"a":}', 5],
    ['{"a" 1}', 5],
    ['{"a": 1,}', 8],
    ['{"a": 1 "b": 2}', 8],
    ['[1,]', 3],
    ['[1 2]', 3],
    ['{"a": 1} x', 9],
    ['01', 1],
    ['-', 0],
    ['{"a": "abc', 6],
    ['{"a": "a\\qb"}', 8],
    ['{"a": "a\\u12"}', 9],
    ['"tab\there"', 4],
    ['{a: 1}', 1],
    ['nul', 0],
    ['NaN', 0],
  ])('%j fails at %p', (text, pos) => {
    expect(jsonErrorPosition(text)).toBe(pos);
  });
});

describe('isJsonContentType', () => {
  it.each<[string | undefined, boolean]>([
    [undefined, true],
    ['', true],
    ['application/json', true],
    ['Application/JSON; charset=utf-8', true],
    ['application/vnd.api+json', true],
    ['text/plain', false],
    ['application/x-www-form-urlencoded', false],
  ])('%p → %p', (ct, want) => {
    expect(isJsonContentType(ct)).toBe(want);
  });
});

describe('parseBody', () => {
  it('treats an empty body as absent', () => {
    expect(parseBody('', 'application/json')).toBeUndefined();
  });

  it('parses JSON bodies and refuses other media types naming application/json', () => {
    expect(parseBody('{"q":1}', undefined)).toEqual({ q: 1 });
    expect(() => parseBody('{"q":1}', 'text/plain')).toThrow(UnsupportedMediaTypeError);
    expect(() => parseBody('{"q":1}', 'text/plain')).toThrow(/application\/json/);
    expect(parseBody('', 'text/plain')).toBeUndefined();
  });

  it('reports where malformed JSON fails', () => {
    let err: unknown;
    try {
      parseBody('{"query": }', 'application/json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonBodyError);
    expect((err as JsonBodyError).position).toBe(10);
  });
});

describe('finiteJson', () => {
  it('replaces non-finite numbers at any depth by 0 and keeps key order', () => {
    const out = finiteJson({ b: Infinity, a: [1, NaN, { z: -Infinity, y: 'x' }], c: null, d: 0.5 });
    expect(out).toEqual({ b: 0, a: [1, 0, { z: 0, y: 'x' }], c: null, d: 0.5 });
    expect(Object.keys(out)).toEqual(['b', 'a', 'c', 'd']);
    expect(JSON.stringify(out)).toBe('{"b":0,"a":[1,0,{"z":0,"y":"x"}],"c":null,"d":0.5}');
  });

  it('keeps a "__proto__" key as data', () => {
    const input = JSON.parse('{"__proto__": {"x": 1}, "k": 2}') as Record<string, unknown>;
    const out = finiteJson(input);
    expect(Object.keys(out)).toEqual(['__proto__', 'k']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
});
