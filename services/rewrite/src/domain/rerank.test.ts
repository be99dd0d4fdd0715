import { toRelevances } from './rerank';

describe('toRelevances', () => {
  it('keeps relevances in 0..1 and sorts them best first, ties in request order', () => {
    expect(
      toRelevances([
        { index: 0, score: 0.2 },
        { index: 1, score: 0.9 },
        { index: 2, score: 0.2 },
        { index: 3, score: 1 },
      ]),
    ).toEqual([
      { index: 3, score: 1 },
      { index: 1, score: 0.9 },
      { index: 0, score: 0.2 },
      { index: 2, score: 0.2 },
    ]);
  });

  it('squashes logits through the logistic function when any score is outside 0..1', () => {
    const out = toRelevances([
      { index: 0, score: 0.5 },
      { index: 1, score: 3 },
      { index: 2, score: -2 },
    ]);
    expect(out.map((r) => r.index)).toEqual([1, 0, 2]);
    expect(out[0].score).toBeCloseTo(1 / (1 + Math.exp(-3)), 12);
    expect(out[1].score).toBeCloseTo(1 / (1 + Math.exp(-0.5)), 12);
    expect(out[2].score).toBeCloseTo(1 / (1 + Math.exp(2)), 12);
  });

  it('returns nothing for nothing', () => {
    expect(toRelevances([])).toEqual([]);
  });
});
