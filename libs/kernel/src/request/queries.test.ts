import { mergeExpandedQueries, planQueries } from './queries';

describe('planQueries', () => {
  it.each<[string[], string[]]>([
    [['what shipped'], ['what shipped']],
    [['a', '', 'b'], ['a', 'b']],
    [[''], ['']],
    [[], ['']],
    [['', ''], ['']],
    [['  '], ['  ']],
  ])('%j → %j', (input, expected) => {
    expect(planQueries(input)).toEqual(expected);
  });
});

describe('mergeExpandedQueries', () => {
  it.each<[string, string[], string[]]>([
    ['q', [], ['q']],
    ['q', [' a ', 'b', 'c'], ['q', 'a', 'b']],
    ['q', ['q', '  ', 'a', 'a'], ['q', 'a']],
    ['q', ['', 'x'], ['q', 'x']],
  ])('original %p with planned %j → %j', (original, planned, expected) => {
    expect(mergeExpandedQueries(original, planned)).toEqual(expected);
  });

  it('honours a custom cap', () => {
    expect(mergeExpandedQueries('q', ['a', 'b', 'c', 'd'], 4)).toEqual(['q', 'a', 'b', 'c']);
  });
});
