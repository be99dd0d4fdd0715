import { normalizeDetailParam, rewriteModeOf } from './params';

describe('normalizeDetailParam', () => {
  it.each<[unknown, unknown]>([
    [null, null],
    [undefined, null],
    ['auto', null],
    ['abstract', 'abstract'],
    ['overview', 'overview'],
    ['full', 'full'],
    [{ events: 'full', memories: 'abstract' }, { events: 'full', memories: 'abstract' }],
    [{}, {}],
  ])('%p → %p', (input, expected) => {
    expect(normalizeDetailParam(input)).toEqual(expected);
  });

  it('copies object pins', () => {
    const src = { events: 'full' as const };
    const got = normalizeDetailParam(src);
    expect(got).not.toBe(src);
  });
});

describe('rewriteModeOf', () => {
  it.each<[unknown, string]>([
    [true, 'on'],
    [false, 'off'],
    ['auto', 'auto'],
    [undefined, 'off'],
  ])('%p → %p', (input, expected) => {
    expect(rewriteModeOf(input)).toBe(expected);
  });
});
