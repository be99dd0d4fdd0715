import { estimatorError, scriptOf } from './budget';

describe('scriptOf', () => {
  it('classifies text by its share of CJK characters', () => {
    expect(scriptOf('Deploy the canary first.')).toBe('en');
    expect(scriptOf('部署之前先检查灰度流量。')).toBe('zh');
    // Mostly Chinese with a Latin code name is still Chinese.
    expect(scriptOf('关于nilinmar的会话和轮换，我们之前是怎么处理的？')).toBe('zh');
    // A single Chinese word in English prose is not.
    expect(scriptOf('The word 部署 means deployment in this guide about rollouts.')).toBe('en');
    expect(scriptOf('')).toBe('en');
  });
});

describe('estimatorError', () => {
  it('aggregates relative errors (estimate − exact) / exact', () => {
    const e = estimatorError([
      { estimate: 12, exact: 10 },
      { estimate: 8, exact: 10 },
      { estimate: 10, exact: 10 },
      { estimate: 30, exact: 20 },
    ]);
    expect(e.samples).toBe(4);
    expect(e.meanSigned).toBeCloseTo((0.2 - 0.2 + 0 + 0.5) / 4, 10);
    expect(e.medianAbs).toBeCloseTo(0.2, 10);
    expect(e.maxAbs).toBeCloseTo(0.5, 10);
    expect(e.underestimateShare).toBe(0.25);
  });

  it('skips texts with no exact tokens and reports NaN for no samples', () => {
    const e = estimatorError([{ estimate: 1, exact: 0 }]);
    expect(e.samples).toBe(0);
    expect(e.meanSigned).toBeNaN();
    expect(e.maxAbs).toBeNaN();
  });
});
