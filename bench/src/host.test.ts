import { probeHost, probeWork } from './host';

describe('probeHost', () => {
  it('does the same work every time: the checksum depends on the iterations only', () => {
    expect(probeWork(1_000)).toBe(probeWork(1_000));
    expect(probeWork(1_000)).not.toBe(probeWork(1_001));
    const p = probeHost(10_000, 3);
    expect(p.checksum).toBe(probeWork(10_000));
    expect(Number.isFinite(p.ms)).toBe(true);
    expect(p.ms).toBeGreaterThanOrEqual(0);
  });

  it.each([[0], [-1], [1.5], [Number.NaN]])('refuses %p iterations', (n) => {
    expect(() => probeHost(n)).toThrow(RangeError);
  });

  it('refuses a run count below one', () => {
    expect(() => probeHost(10, 0)).toThrow(RangeError);
  });
});
