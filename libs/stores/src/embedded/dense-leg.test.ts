import fc from 'fast-check';
import { denseTopK } from './dense-leg';
import { type CacheRow, ScanCache, unit } from './scan-cache';

function row(id: number, vector: Float32Array): CacheRow {
  return {
    id, uri: `viking://resources/d/${String(id).padStart(5, '0')}.md`, docUri: `viking://resources/d/${id}.md`, contextType: 'resource', category: 'resources', level: 2,
    account: 'a', owner: '', peer: '', workspace: 'default', subject: '', tags: [], createdAt: 0, updatedAt: 0, validFrom: null, validTo: null, vector,
  };
}

describe('denseTopK over the int8 scan', () => {
  it('returns exactly the exact scan\'s top k (re-scored candidates), near-ties and duplicates included', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 30 }), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 0, max: 40 }), (seed, k, dupes) => {
        let s = seed;
        const rnd = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) - 0.5;
        const dim = 64;
        const cache = new ScanCache(dim, true);
        const base = Array.from({ length: 600 }, () => unit(Float32Array.from({ length: dim }, () => (rnd() > 0.25 ? 0 : rnd()))));
        // Near-duplicates of a few rows: cosines that differ in the last digits, where int8 rounding reorders.
        for (let d = 0; d < dupes; d++) base.push(unit(base[d % 7]!.map((x) => x + rnd() * 1e-4)));
        base.forEach((v, i) => cache.upsert(row(i + 1, v)));
        cache.reorganize(true);
        const shard = cache.shards.get('a')!;
        expect(shard.vectors.quantized).toBe(true);
        const uq = unit(base[seed % base.length]!.map((x) => x + rnd() * 0.2));
        const approx = new Float32Array(shard.size);
        const exact = new Float32Array(shard.size);
        shard.vectors.approxDots(uq, 0, shard.size, approx);
        shard.vectors.dots(uq, 0, shard.size, exact);
        const all = (): boolean => true;
        const want = denseTopK(exact, shard, [[0, shard.size]], [], all, k);
        const got = denseTopK(approx, shard, [[0, shard.size]], [], all, k, uq);
        expect(got).toEqual(want);
      }),
      { numRuns: 60 },
    );
  });
});
