import { InvalidArgumentError, InvalidUriError } from './errors';
import { assertValidInterval, assertWritableUri, normalizeTags, PASSAGE_URI_REASON, SCOPE_ROOT_REASON, VALIDITY_INTERVAL_MESSAGE } from './write-rules';
import { thrownBy } from '@ctxmesh/testing';

describe('assertWritableUri', () => {
  it.each(['viking://resources/a.md', 'viking://resources/d/.abstract.md', 'viking://agent/skills/x', 'viking://user/alice/memories', 'viking://session/s1'])(
    'accepts %s',
    (uri) => {
      expect(() => assertWritableUri(uri)).not.toThrow();
    },
  );

  it.each(['viking://', 'viking://resources', 'viking://agent', 'viking://user', 'viking://user/alice'])('refuses the namespace %s', (uri) => {
    const e = thrownBy(() => assertWritableUri(uri)) as InvalidUriError;
    expect(e).toBeInstanceOf(InvalidUriError);
    expect([e.uri, e.reason, e.message]).toEqual([uri, SCOPE_ROOT_REASON, `Invalid URI: ${uri} (a write must address a node below a scope root)`]);
  });

  it('refuses a passage URI', () => {
    const e = thrownBy(() => assertWritableUri('viking://resources/a.md#p1')) as InvalidUriError;
    expect([e.reason, e.message]).toEqual([PASSAGE_URI_REASON, "Invalid URI: viking://resources/a.md#p1 ('#' is reserved for passage URIs)"]);
  });

  it('names the URI the caller wrote when given', () => {
    const e = thrownBy(() => assertWritableUri('viking://user/alice', 'viking://~')) as InvalidUriError;
    expect([e.uri, e.message]).toEqual(['viking://~', 'Invalid URI: viking://~ (a write must address a node below a scope root)']);
  });
});

describe('normalizeTags', () => {
  it.each<[string[] | null | undefined, string[]]>([
    [null, []],
    [undefined, []],
    [[], []],
    [['Env=Prod', ' env=prod ', 'team=Search'], ['env=prod', 'team=search']],
    [['a=1', 'b=2', 'A=3'], ['a=3', 'b=2']],
    [[' k = v '], ['k=v']],
  ])('%j → %j', (input, expected) => {
    expect(normalizeTags(input)).toEqual(expected);
  });

  it.each(['env', 'env=', '=prod', 'a=b=c', '  ', ' = '])('refuses %p, naming it', (tag) => {
    const e = thrownBy(() => normalizeTags(['ok=1', tag]));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as Error).message).toBe(`Invalid tag '${tag}': tags must be key=value with exactly one '=' and a non-empty key and value`);
  });
});

describe('assertValidInterval', () => {
  const day = 86_400_000;

  it.each<[number | null, number | null]>([
    [null, null],
    [0, null],
    [null, 0],
    [0, 1],
    [day, 2 * day],
  ])('accepts [%p, %p)', (from, to) => {
    expect(() => assertValidInterval(from, to)).not.toThrow();
  });

  it.each<[string, number, number]>([
    ['an empty interval (equal bounds: no instant lies in it)', day, day],
    ['a reversed interval', 2 * day, day],
  ])('refuses %s', (_name, from, to) => {
    const e = thrownBy(() => assertValidInterval(from, to));
    expect(e).toBeInstanceOf(InvalidArgumentError);
    expect((e as Error).message).toBe(VALIDITY_INTERVAL_MESSAGE);
  });
});
