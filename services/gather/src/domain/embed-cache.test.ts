import { EmbeddingCache } from './embed-cache';

const vec = (t: string) => Float32Array.from([t.length, t.charCodeAt(0)]);

function recorder() {
  const calls: string[][] = [];
  const embed = async (texts: string[]) => {
    calls.push(texts);
    return texts.map(vec);
  };
  return { calls, embed };
}

describe('EmbeddingCache', () => {
  it('embeds each distinct text once, in one call, and answers duplicates in order', async () => {
    const c = new EmbeddingCache(8);
    const r = recorder();
    const out = await c.getMany(['a', 'bb', 'a'], r.embed);
    expect(r.calls).toEqual([['a', 'bb']]);
    expect(out.map((v) => Array.from(v))).toEqual([[1, 97], [2, 98], [1, 97]]);
  });

  it('answers cached texts without calling the embedder', async () => {
    const c = new EmbeddingCache(8);
    const r = recorder();
    await c.getMany(['a'], r.embed);
    await c.getMany(['a', 'b'], r.embed);
    expect(r.calls).toEqual([['a'], ['b']]);
    expect([c.calls, c.embedded, c.size]).toEqual([2, 2, 2]);
  });

  it('shares one in-flight embedding between concurrent callers', async () => {
    const c = new EmbeddingCache(8);
    const r = recorder();
    const [x, y] = await Promise.all([c.getMany(['q'], r.embed), c.getMany(['q'], r.embed)]);
    expect(r.calls).toEqual([['q']]);
    expect(x[0]).toBe(y[0]);
  });

  it('re-embeds under its own call when the shared in-flight call it waited on fails', async () => {
    const c = new EmbeddingCache(8);
    const aborted = async (): Promise<Float32Array[]> => {
      throw new Error('aborted by its deadline');
    };
    const r = recorder();
    const [first, second] = await Promise.allSettled([c.getMany(['q'], aborted), c.getMany(['q'], r.embed)]);
    expect(first.status).toBe('rejected');
    expect(second).toEqual({ status: 'fulfilled', value: [vec('q')] });
    expect(r.calls).toEqual([['q']]);
    expect(c.size).toBe(1);
  });

  it('evicts the least recently used text beyond capacity', async () => {
    const c = new EmbeddingCache(2);
    const r = recorder();
    await c.getMany(['a'], r.embed);
    await c.getMany(['b'], r.embed);
    await c.getMany(['a'], r.embed); // a is now the most recent
    await c.getMany(['c'], r.embed); // evicts b
    await c.getMany(['a', 'b'], r.embed);
    expect(r.calls).toEqual([['a'], ['b'], ['c'], ['b']]);
    expect(c.size).toBe(2);
  });

  it('does not cache a failed call, so the next call retries', async () => {
    const c = new EmbeddingCache(8);
    let fail = true;
    const embed = async (texts: string[]) => {
      if (fail) throw new Error('endpoint down');
      return texts.map(vec);
    };
    await expect(c.getMany(['a'], embed)).rejects.toThrow('endpoint down');
    fail = false;
    await expect(c.getMany(['a'], embed)).resolves.toHaveLength(1);
    expect(c.calls).toBe(2);
  });

  it('rejects when the embedder returns fewer vectors than texts', async () => {
    const c = new EmbeddingCache(8);
    await expect(c.getMany(['a', 'b'], async () => [vec('a')])).rejects.toThrow(/returned 1 vectors for 2 texts/);
  });
});
