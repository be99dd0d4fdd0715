import { chunk, mapConcurrent } from './pool';

describe('mapConcurrent', () => {
  it('keeps input order and never exceeds the concurrency', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapConcurrent([5, 1, 4, 2, 3, 0, 6, 7, 8, 9], 3, async (x) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, x));
      inFlight--;
      return x * 2;
    });
    expect(out).toEqual([10, 2, 8, 4, 6, 0, 12, 14, 16, 18]);
    expect(peak).toBe(3);
  });

  it('handles no items and rejects with a task’s error', async () => {
    await expect(mapConcurrent([], 8, async () => 1)).resolves.toEqual([]);
    await expect(
      mapConcurrent([1, 2], 2, async (x) => {
        if (x === 2) throw new Error('two');
        return x;
      }),
    ).rejects.toThrow('two');
  });
});

describe('chunk', () => {
  it('splits into pieces of at most size', () => {
    expect(chunk([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(chunk([], 3)).toEqual([]);
    expect(chunk([1], 0)).toEqual([[1]]);
  });
});
