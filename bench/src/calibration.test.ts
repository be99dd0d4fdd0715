import { fitEvidenceFloor, gatedFigures, type CalibrationSearch } from './calibration';

// Hits whose score is their cosine (a model of one input, weight 1, no intercept: score = sigmoid(cosine)).
const hit = (score: number, relevant = false) => ({ features: { cosine: score, coverage: 0, tfidf: 0, tfidfRel: 0, rank: 0 }, relevant });
const search = (offTopic: boolean, split: 'train' | 'heldout', scores: Array<[number, boolean?]>): CalibrationSearch => ({
  lang: 'en',
  split,
  form: 'dialogue',
  offTopic,
  gold: scores.filter(([, r]) => r).length,
  hits: scores.map(([s, r]) => hit(s, r)),
});
const identity = (f: { cosine: number }) => f.cosine;

describe('gatedFigures (the evidence packing: the gate, then the floor)', () => {
  it('keeps nothing of a search whose best hit is under the gate, and every hit at or above the floor of one that passes', () => {
    const s = [search(false, 'train', [[0.6, true], [0.2, true], [0.1, true]]), search(true, 'train', [[0.3], [0.25]]), search(true, 'train', [[0.5], [0.2], [0.05]])];
    const f = gatedFigures(s, identity, 0.35, 0.15);
    // On-topic: 2 of 3 gold kept; off-topic: one search gated shut, the other keeps 2 of its 3.
    expect(f.recall).toBeCloseTo(2 / 3);
    expect(f.offVolume).toBeCloseTo(2 / 2);
    expect(f.offEmpty).toBeCloseTo(1 / 2);
  });
});

describe('fitEvidenceFloor', () => {
  it('picks the lowest floor on the grid at which off-topic hits are at most 8 % of on-topic ones, on the training split only', () => {
    // score = sigmoid(10 × cosine − 5): on-topic 0.98 / 0.182 / 0.119 / 0.076, off-topic 0.73 / 0.168 / 0.154 / 0.142.
    const model = { intercept: -5, weights: [10, 0, 0] };
    const on = Array.from({ length: 10 }, () => search(false, 'train', [[0.9, true], [0.35, true], [0.3], [0.25]]));
    const off = [search(true, 'train', [[0.6], [0.34], [0.33], [0.32]])];
    // Held-out searches would raise the floor if they were used: they are not.
    const held = Array.from({ length: 5 }, () => search(true, 'heldout', [[0.9], [0.5], [0.45], [0.4]]));
    const { floor, train } = fitEvidenceFloor([...on, ...off, ...held], model);
    // Under 0.17 the off-topic search keeps at least two hits against 20 on-topic ones (10 %).
    expect(floor).toBe(0.17);
    expect(train.offVolume).toBeCloseTo(1 / 20);
    expect(train.recall).toBeCloseTo(1);
  });
});
