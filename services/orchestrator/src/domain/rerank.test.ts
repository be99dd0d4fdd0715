import { rerankOrder } from './rerank';

describe('rerankOrder', () => {
  const items = ['a', 'b', 'c', 'd'];

  it('puts scored items first, best first with ties in their previous order, and the rest after in theirs', () => {
    const out = rerankOrder(items, [{ id: 'c', score: 0.9 }, { id: 'a', score: 0.2 }, { id: 'd', score: 0.9 }], (x) => x);
    expect(out).toEqual([
      { item: 'c', score: 0.9 },
      { item: 'd', score: 0.9 },
      { item: 'a', score: 0.2 },
      { item: 'b', score: null },
    ]);
  });

  it('takes the first finite score of an id and ignores the others, and ids by position work too', () => {
    const out = rerankOrder(items, [{ id: '1', score: Number.NaN }, { id: '2', score: 0.5 }, { id: '2', score: 0.99 }, { id: '0', score: Infinity }], (_x, i) => String(i));
    expect(out.map((r) => [r.item, r.score])).toEqual([
      ['c', 0.5],
      ['a', null],
      ['b', null],
      ['d', null],
    ]);
  });

  it('keeps the order without scores', () => {
    expect(rerankOrder(items, [], (x) => x).map((r) => r.item)).toEqual(items);
  });
});
