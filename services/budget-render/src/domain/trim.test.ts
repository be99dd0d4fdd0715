import fc from 'fast-check';
import { trimToBudget } from './trim';

describe('trimToBudget', () => {
  it('keeps everything without a budget or when it fits', () => {
    const ps = [
      { id: 'a', score: 0.9, tokens: 10 },
      { id: 'b', score: 0.5, tokens: 10 },
    ];
    expect(trimToBudget(ps, 5, 0)).toEqual({ keptIds: ['a', 'b'], tokensTotal: 25, droppedCount: 0 });
    expect(trimToBudget(ps, 5, 25)).toEqual({ keptIds: ['a', 'b'], tokensTotal: 25, droppedCount: 0 });
  });

  it('drops the lowest-scored passages first and keeps the survivors in order', () => {
    const ps = [
      { id: 'a', score: 0.4, tokens: 10 },
      { id: 'b', score: 0.9, tokens: 10 },
      { id: 'c', score: 0.2, tokens: 10 },
      { id: 'd', score: 0.7, tokens: 10 },
    ];
    expect(trimToBudget(ps, 0, 20)).toEqual({ keptIds: ['b', 'd'], tokensTotal: 20, droppedCount: 2 });
  });

  it('drops the later-ranked passage first on a score tie', () => {
    const ps = [
      { id: 'a', score: 0.5, tokens: 10 },
      { id: 'b', score: 0.5, tokens: 10 },
    ];
    expect(trimToBudget(ps, 0, 10).keptIds).toEqual(['a']);
  });

  it('drops every passage but still counts memories above a tiny budget', () => {
    const ps = [{ id: 'a', score: 0.9, tokens: 10 }];
    expect(trimToBudget(ps, 50, 30)).toEqual({ keptIds: [], tokensTotal: 50, droppedCount: 1 });
  });

  it('property: total fits or only fixed tokens remain; survivors are an ordered subsequence; no better-scored passage dropped before a worse kept one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ score: fc.double({ min: 0, max: 1, noNaN: true }), tokens: fc.integer({ min: 0, max: 500 }) }), { maxLength: 40 }),
        fc.integer({ min: 0, max: 300 }),
        fc.integer({ min: 1, max: 5000 }),
        (raw, fixed, budget) => {
          const ps = raw.map((p, i) => ({ id: `p${i}`, ...p }));
          const r = trimToBudget(ps, fixed, budget);
          const kept = ps.filter((p) => r.keptIds.includes(p.id));
          expect(kept.map((p) => p.id)).toEqual(r.keptIds);
          expect(r.tokensTotal).toBe(fixed + kept.reduce((a, p) => a + p.tokens, 0));
          expect(r.droppedCount).toBe(ps.length - kept.length);
          if (r.droppedCount > 0) expect(r.tokensTotal <= budget || kept.length === 0).toBe(true);
          const minKept = Math.min(...kept.map((p) => p.score));
          for (const p of ps) if (!r.keptIds.includes(p.id)) expect(p.score).toBeLessThanOrEqual(minKept);
          expect(trimToBudget(ps, fixed, budget)).toEqual(r);
        },
      ),
    );
  });
});
