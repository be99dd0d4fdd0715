import type { Schemas } from '@qdrant/js-client-rest';
import fc from 'fast-check';
import { CorpusStatsCache, type StatsSource, lengthBits, liveCountBody, termCountBody, termValues, tokensOf } from './stats';
import { P } from './schema';

/** A source answering from a table, recording each request, optionally held until released. */
function source(df: Record<string, number>, docs = 10, bits: Record<string, number> = { '0': 10, '2': 5 }) {
  const calls: string[] = [];
  let hold: Promise<void> | null = null;
  let fail = false;
  const src: StatsSource = {
    async count(body: Schemas['CountRequest']) {
      const cond = (body.filter!.must as Schemas['FieldCondition'][]).find((c) => c.key === P.lexTerms);
      const m = cond?.match as { value?: string; any?: string[] } | undefined;
      calls.push(m ? `count ${(m.any ?? [m.value]).join('|')}` : 'count live');
      if (hold) await hold;
      if (fail) throw new Error('qdrant down');
      return m ? (m.any ?? [m.value!]).reduce((n, v) => n + (df[v] ?? 0), 0) : docs;
    },
    async facet() {
      calls.push('facet');
      if (hold) await hold;
      if (fail) throw new Error('qdrant down');
      return Object.entries(bits).map(([value, count]) => ({ value, count }));
    },
  };
  return {
    src,
    calls,
    hold: () => {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = null;
        release();
      };
    },
    failing: (f: boolean) => (fail = f),
  };
}

describe('row lengths as bits', () => {
  it('sum back exactly from the count of rows per bit', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 2 ** 31 - 1 }), { maxLength: 60 }), (lengths) => {
        const perBit = new Map<string, number>();
        for (const l of lengths) for (const b of lengthBits(l)) perBit.set(b, (perBit.get(b) ?? 0) + 1);
        expect(tokensOf([...perBit].map(([value, count]) => ({ value, count })))).toBe(lengths.reduce((s, l) => s + l, 0));
      }),
    );
    expect(lengthBits(13)).toEqual(['0', '2', '3']);
    expect(tokensOf([{ value: 'x', count: 3 }, { value: '40', count: 1 }])).toBe(0);
  });
});

describe('termValues', () => {
  it('counts a term of either class once when it cannot be a minor term', () => {
    expect(termValues('*:lighthous')).toEqual(['0:lighthous']);
    expect(termValues('*:魔术')).toEqual(['0:魔术']);
    expect(termValues('*:猫')).toEqual(['0:猫', '1:猫']);
    expect(termValues('1:猫')).toEqual(['1:猫']);
    expect(termCountBody('acme', ['0:猫', '1:猫']).filter!.must).toContainEqual({ key: P.lexTerms, match: { any: ['0:猫', '1:猫'] } });
    expect(liveCountBody('acme')).toEqual({ filter: { must: [{ key: P.account, match: { value: 'acme' } }, { key: P.state, match: { value: 'live' } }] }, exact: true });
  });
});

describe('CorpusStatsCache', () => {
  const df = { '0:lighthous': 3, '0:猫': 2, '1:猫': 4 };

  it('answers live rows, summed lengths and the document frequencies asked for, one request per distinct figure', async () => {
    const s = source(df);
    const cache = new CorpusStatsCache(s.src);
    const stats = await cache.stats('acme', ['*:lighthous', '0:lighthous', '*:猫', '1:猫', '0:猫']);
    expect([stats.docs, stats.tokens]).toEqual([10, 10 + 4 * 5]);
    expect(['*:lighthous', '0:lighthous', '*:猫', '1:猫', '0:猫', '0:unasked'].map((k) => stats.df(k))).toEqual([3, 3, 6, 4, 2, 0]);
    // `*:lighthous` and `0:lighthous` are one request.
    expect(s.calls.sort()).toEqual(['count 0:lighthous', 'count 0:猫', 'count 0:猫|1:猫', 'count 1:猫', 'count live', 'facet'].sort());
  });

  it('reuses figures within the lifetime, refetches after it, and forgets an account on invalidate', async () => {
    let now = 0;
    const s = source(df);
    const cache = new CorpusStatsCache(s.src, { ttlMs: 1000, now: () => now });
    await cache.stats('acme', ['0:lighthous']);
    s.calls.length = 0;
    now = 999;
    await cache.stats('acme', ['0:lighthous']);
    expect(s.calls).toEqual([]);
    now = 1000;
    await cache.stats('acme', ['0:lighthous']);
    expect(s.calls.sort()).toEqual(['count 0:lighthous', 'count live', 'facet']);
    s.calls.length = 0;
    cache.invalidate('acme');
    await cache.stats('acme', ['0:lighthous']);
    await cache.stats('other', []);
    expect(s.calls.sort()).toEqual(['count 0:lighthous', 'count live', 'count live', 'facet', 'facet']);
  });

  it('shares a request in flight between searches, and keeps at most `concurrency` in flight', async () => {
    const s = source(df);
    const cache = new CorpusStatsCache(s.src, { concurrency: 2 });
    const release = s.hold();
    const a = cache.stats('acme', ['0:lighthous', '0:猫', '1:猫']);
    const b = cache.stats('acme', ['0:lighthous']);
    await new Promise((r) => setImmediate(r));
    expect(s.calls).toHaveLength(2);
    release();
    const [sa, sb] = await Promise.all([a, b]);
    expect([sa.df('1:猫'), sb.df('0:lighthous')]).toEqual([4, 3]);
    expect(s.calls).toHaveLength(5);
  });

  it('does not remember a failed request', async () => {
    const s = source(df);
    const cache = new CorpusStatsCache(s.src);
    s.failing(true);
    await expect(cache.stats('acme', ['0:lighthous'])).rejects.toThrow('qdrant down');
    s.failing(false);
    await expect(cache.stats('acme', ['0:lighthous'])).resolves.toMatchObject({ docs: 10 });
  });

  it('drops the least recently used account beyond its bound', async () => {
    const s = source(df);
    const cache = new CorpusStatsCache(s.src, { maxEntries: 4 });
    await cache.stats('a', []);
    await cache.stats('b', []);
    await cache.stats('a', []);
    await cache.stats('c', []);
    s.calls.length = 0;
    await cache.stats('a', []);
    expect(s.calls).toEqual([]);
    await cache.stats('b', []);
    expect(s.calls).toHaveLength(2);
  });
});
