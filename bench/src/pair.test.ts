import { PairUsageError, pairedLatency, parsePairArgs } from './pair';

describe('parsePairArgs', () => {
  it('takes the two directories and the defaults', () => {
    const o = parsePairArgs(['--against', '/tmp/base', '--data', '/tmp/data']);
    expect(o).toEqual({ against: '/tmp/base', data: '/tmp/data', requests: 300, windows: 4, seconds: 8, out: null });
    expect(parsePairArgs(['--against', 'b', '--data', 'd', '--requests', '50', '--windows', '2', '--seconds', '3', '--out', 'r.json'])).toMatchObject({ requests: 50, windows: 2, seconds: 3 });
  });

  it('lists every problem at once', () => {
    expect(() => parsePairArgs(['--requests', '0', '--seconds', 'x'])).toThrow(PairUsageError);
    try {
      parsePairArgs(['--requests', '0', '--seconds', 'x']);
    } catch (err) {
      const m = (err as Error).message;
      for (const part of ['--against', '--data', '--requests must be a positive integer, got "0"', '--seconds must be a positive integer, got "x"']) expect(m).toContain(part);
    }
  });

  it('refuses an unknown flag', () => {
    expect(() => parsePairArgs(['--against', 'b', '--data', 'd', '--fast'])).toThrow(PairUsageError);
  });
});

describe('pairedLatency', () => {
  it('gives each side’s p50, the median of the per-request ratios and the share of faster pairs', () => {
    const r = pairedLatency([10, 20, 40, 10], [5, 20, 20, 12]);
    expect(r).toEqual({ n: 4, beforeP50: 15, afterP50: 16, medianRatio: 0.75, afterFasterShare: 0.5 });
  });

  it('refuses lists that are not pairs', () => {
    expect(() => pairedLatency([1, 2], [1])).toThrow(RangeError);
    expect(pairedLatency([], []).n).toBe(0);
  });
});
