import { median, quantile, ratio, recallWithTies, round, rounded, summarize } from './stats';

describe('quantile', () => {
  it('interpolates linearly between closest ranks', () => {
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantile([10, 20, 30, 40, 50], 0.25)).toBe(20);
    expect(quantile([0, 100], 0.95)).toBeCloseTo(95, 10);
  });

  it('does not depend on input order and does not reorder the input', () => {
    const v = [5, 1, 4, 2, 3];
    expect(quantile(v, 0.5)).toBe(3);
    expect(v).toEqual([5, 1, 4, 2, 3]);
  });

  it('returns the extremes at q = 0 and q = 1, NaN for an empty sample', () => {
    expect(quantile([3, 9, 1], 0)).toBe(1);
    expect(quantile([3, 9, 1], 1)).toBe(9);
    expect(quantile([], 0.5)).toBeNaN();
  });

  it('rejects q outside [0, 1]', () => {
    expect(() => quantile([1], 1.5)).toThrow(RangeError);
    expect(() => quantile([1], -0.1)).toThrow(RangeError);
  });
});

describe('summarize', () => {
  it('reports percentiles, mean and range of a sample', () => {
    const v = Array.from({ length: 101 }, (_, i) => i);
    const s = summarize(v);
    expect(s).toEqual({ n: 101, p50: 50, p95: 95, p99: 99, mean: 50, min: 0, max: 100 });
    expect(median(v)).toBe(50);
  });

  it('reports NaN fields for an empty sample', () => {
    const s = summarize([]);
    expect(s.n).toBe(0);
    expect(s.p50).toBeNaN();
    expect(s.max).toBeNaN();
  });
});

describe('ratio and round', () => {
  it('divides finite numbers and refuses division by zero or NaN', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(1, 0)).toBeNaN();
    expect(ratio(Number.NaN, 1)).toBeNaN();
  });

  it('rounds by magnitude and turns non-finite values into null', () => {
    expect(round(1.23456)).toBe(1.235);
    expect(round(12.3456)).toBe(12.35);
    expect(round(123.456)).toBe(123.5);
    expect(round(Number.NaN)).toBeNull();
    expect(rounded(summarize([1, 2])).p50).toBe(1.5);
  });
});

describe('recallWithTies', () => {
  it('counts a missing neighbour once, not as a shift of every later rank', () => {
    // exact 0.9 0.8 0.7 0.6; the ANN answer misses 0.8 and lists 0.5 last
    expect(recallWithTies([0.9, 0.8, 0.7, 0.6], [0.9, 0.7, 0.6, 0.5], 4)).toBe(0.75);
  });

  it('counts a hit that ties the k-th exact score as found', () => {
    expect(recallWithTies([0.9, 0.5], [0.9, 0.5 + 1e-9], 2)).toBe(1);
    expect(recallWithTies([0.9, 0.5], [0.9, 0.49], 2)).toBe(0.5);
  });

  it('is 1 for an empty exact answer and caps at the exact answer size', () => {
    expect(recallWithTies([], [0.3], 10)).toBe(1);
    expect(recallWithTies([0.4], [0.4, 0.4], 10)).toBe(1);
    expect(recallWithTies([0.4, 0.3], [], 10)).toBe(0);
  });
});
