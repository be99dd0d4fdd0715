import { toPythonFloat, toPythonInt } from './python';

describe('toPythonInt', () => {
  it.each<[unknown, number | null]>([
    [3, 3],
    [3.9, 3],
    [-3.9, -3],
    [-0.5, 0],
    [true, 1],
    [false, 0],
    ['7', 7],
    [' 7 ', 7],
    ['-12', -12],
    ['1_000', 1000],
    ['7.5', null],
    ['abc', null],
    ['', null],
    [Infinity, null],
    [NaN, null],
    [null, null],
    [undefined, null],
    [[1], null],
    [{ a: 1 }, null],
  ])('converts %p like Python int() → %p', (input, expected) => {
    expect(toPythonInt(input)).toBe(expected);
  });
});

describe('toPythonFloat', () => {
  it.each<[unknown, number | null]>([
    [0.25, 0.25],
    [2, 2],
    [true, 1],
    [false, 0],
    ['0.3', 0.3],
    [' 1e-3 ', 0.001],
    ['.5', 0.5],
    ['-inf', -Infinity],
    ['Infinity', Infinity],
    ['nan', null],
    [NaN, null],
    ['abc', null],
    [null, null],
    [[0.1], null],
    [{}, null],
  ])('converts %p like Python float() → %p', (input, expected) => {
    expect(toPythonFloat(input)).toBe(expected);
  });
});
