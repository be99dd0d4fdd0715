import { CATEGORIES } from '../uri';
import { DEFAULT_OTHER_PEER_PENALTIES, resolvePenalties } from './penalties';

const D = { events: 0.1, entities: 0.1, preferences: 0.02, experiences: 0.02, resources: 0.02, skills: 0.02, memories: 0.1 };
const all = (v: number) => Object.fromEntries(CATEGORIES.map((c) => [c, v]));

describe('resolvePenalties', () => {
  it.each<[string, unknown, Record<string, number>]>([
    ['null → defaults', null, D],
    ['undefined → defaults', undefined, D],
    ['a number applies to all seven', 0.3, all(0.3)],
    ['a number above 1 clamps to 1', 7, all(1)],
    ['a negative number clamps to 0', -0.5, all(0)],
    ['a numeric string converts like float()', '0.25', all(0.25)],
    ['a non-numeric scalar → 0.0 for all', 'high', all(0)],
    ['a list is a non-numeric scalar', [0.5], all(0)],
    ['true is 1.0 as in Python', true, all(1)],
    ['an object overrides known keys only', { events: 0.5, bogus: 0.9 }, { ...D, events: 0.5 }],
    ['object values are clamped', { skills: 3, memories: -1 }, { ...D, skills: 1, memories: 0 }],
    ['a non-numeric object value keeps the default', { entities: 'x', resources: null }, D],
    ['an empty object → defaults', {}, D],
  ])('%s', (_title, input, expected) => {
    expect(resolvePenalties(input)).toEqual(expected);
  });

  it('always reports the seven categories in stats order', () => {
    expect(Object.keys(resolvePenalties({ memories: 0.2, events: 0.3 }))).toEqual([
      'events',
      'entities',
      'preferences',
      'experiences',
      'resources',
      'skills',
      'memories',
    ]);
  });

  it('does not mutate the defaults', () => {
    resolvePenalties({ events: 0.9 });
    expect(DEFAULT_OTHER_PEER_PENALTIES.events).toBe(0.1);
  });
});
