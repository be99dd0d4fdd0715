import { BatchShapeError, MicroBatcher } from './batcher';

describe('MicroBatcher', () => {
  it('runs every item added in one tick as one batch, answering each caller with its own output', async () => {
    const runs: number[][] = [];
    const b = new MicroBatcher<number, number>(async (xs) => {
      runs.push(xs);
      return xs.map((x) => x * 10);
    });
    const out = await Promise.all([b.add(1), b.add(2), b.add(3)]);
    expect(out).toEqual([10, 20, 30]);
    expect(runs).toEqual([[1, 2, 3]]);
    expect(b.batchSizes).toEqual([3]);
  });

  it('includes items added from microtask continuations of the same tick', async () => {
    const b = new MicroBatcher<string, string>(async (xs) => xs.map((x) => x.toUpperCase()));
    const later = (async () => {
      await Promise.resolve();
      await Promise.resolve();
      return b.add('c');
    })();
    const out = await Promise.all([b.add('a'), b.add('b'), later]);
    expect(out).toEqual(['A', 'B', 'C']);
    expect(b.batchSizes).toEqual([3]);
  });

  it('starts a new batch for items added after a flush', async () => {
    const b = new MicroBatcher<number, number>(async (xs) => xs);
    await Promise.all([b.add(1), b.add(2)]);
    await b.add(3);
    expect(b.batchSizes).toEqual([2, 1]);
  });

  it('flushes at once when a batch reaches maxBatch', async () => {
    const b = new MicroBatcher<number, number>(async (xs) => xs, { maxBatch: 2 });
    await Promise.all([b.add(1), b.add(2), b.add(3)]);
    expect(b.batchSizes).toEqual([2, 1]);
  });

  it('rejects every caller of a failed batch with the runner’s error', async () => {
    const boom = new Error('store down');
    const b = new MicroBatcher<number, number>(async () => {
      throw boom;
    });
    const results = await Promise.allSettled([b.add(1), b.add(2)]);
    expect(results).toEqual([
      { status: 'rejected', reason: boom },
      { status: 'rejected', reason: boom },
    ]);
  });

  it('rejects when the runner throws synchronously or returns the wrong number of outputs', async () => {
    const sync = new MicroBatcher<number, number>(() => {
      throw new Error('sync');
    });
    await expect(sync.add(1)).rejects.toThrow('sync');
    const short = new MicroBatcher<number, number>(async () => [1]);
    const r = await Promise.allSettled([short.add(1), short.add(2)]);
    expect(r.map((x) => x.status)).toEqual(['rejected', 'rejected']);
    expect((r[0] as PromiseRejectedResult).reason).toBeInstanceOf(BatchShapeError);
  });

  it('uses the injected scheduler', async () => {
    const queued: Array<() => void> = [];
    const b = new MicroBatcher<number, number>(async (xs) => xs, { schedule: (f) => queued.push(f) });
    const p = Promise.all([b.add(1), b.add(2)]);
    expect(queued).toHaveLength(1);
    expect(b.batchSizes).toEqual([]);
    queued[0]();
    await expect(p).resolves.toEqual([1, 2]);
  });
});
