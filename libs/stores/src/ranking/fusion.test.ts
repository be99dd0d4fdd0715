import { reciprocalRankFusion } from './fusion';

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
