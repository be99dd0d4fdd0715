import fc from 'fast-check';
import { monotoneScores, reciprocalRankFusion } from './fusion';

describe('reciprocalRankFusion', () => {
  it('sums w / (k + rank) over the lists an id appears in', () => {
    const fused = reciprocalRankFusion([[1, 2, 3], [3, 1]], { k: 10 });
    expect(fused.map((f) => f.id)).toEqual([1, 3, 2]);
    expect(fused[0].rrf).toBeCloseTo(1 / 11 + 1 / 12);
    expect(fused[1].rrf).toBeCloseTo(1 / 13 + 1 / 11);
  });

  it('weights lists', () => {
    expect(reciprocalRankFusion([[1], [2]], { k: 1, weights: [1, 3] }).map((f) => f.id)).toEqual([2, 1]);
  });

  it('breaks ties by first appearance', () => {
    expect(reciprocalRankFusion([[5, 6], [6, 5]]).map((f) => f.id)).toEqual([5, 6]);
  });
});

describe('monotoneScores', () => {
  it('pools adjacent violators into their mean', () => {
    expect(monotoneScores([0.9, 0.2, 0.4, 0.1])).toEqual([0.9, 0.30000000000000004, 0.30000000000000004, 0.1]);
  });

  it('clamps to [0, 1]', () => {
    expect(monotoneScores([1.4, -0.2])).toEqual([1, 0]);
  });

  it('always returns a non-increasing sequence in [0, 1] with the same mean when nothing is clamped', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }), (raw) => {
        const out = monotoneScores(raw);
        expect(out).toHaveLength(raw.length);
        for (let i = 1; i < out.length; i++) expect(out[i]).toBeLessThanOrEqual(out[i - 1] + 1e-12);
        const sum = (a: number[]) => a.reduce((s, x) => s + x, 0);
        expect(sum(out)).toBeCloseTo(sum(raw), 9);
      }),
    );
  });
});
