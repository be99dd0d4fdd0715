import { estimateTokens, stripSidecar } from '@ctxmesh/kernel';
import { buildQueries, docAt, docs, KIND_WEIGHTS } from './corpus';
import { Rng, hashSeed } from './rng';

describe('Rng', () => {
  it('repeats the same sequence for the same seed and differs for another', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const c = new Rng(43);
    const sa = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(sa);
  });

  it('keeps int() within its inclusive bounds and reaches both ends', () => {
    const r = new Rng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const v = r.int(3, 6);
      expect(v).toBeGreaterThanOrEqual(3);
      expect(v).toBeLessThanOrEqual(6);
      seen.add(v);
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6]);
  });

  it('skews zipfIndex toward low ranks', () => {
    const r = new Rng(1);
    const n = 1000;
    let low = 0;
    for (let i = 0; i < 5000; i++) if (r.zipfIndex(n) < 10) low++;
    // Uniform would put 1% below rank 10; the log-uniform skew puts about a third there.
    expect(low / 5000).toBeGreaterThan(0.2);
  });

  it('rejects picks from empty lists', () => {
    expect(() => new Rng(1).pick([])).toThrow(RangeError);
    expect(() => new Rng(1).zipfIndex(0)).toThrow(RangeError);
  });

  it('hashes parts order-sensitively', () => {
    expect(hashSeed(1, 'a')).toBe(hashSeed(1, 'a'));
    expect(hashSeed(1, 'a')).not.toBe(hashSeed('a', 1));
  });
});

describe('docAt', () => {
  it('is a pure function of (seed, index): the corpus is prefix-stable', () => {
    expect(docAt(123)).toEqual(docAt(123));
    const small = [...docs(0, 50)];
    expect(small.map((d) => d.uri)).toEqual([...docs(0, 50)].map((d) => d.uri));
    expect(docAt(5, { seed: 1 }).content).not.toBe(docAt(5, { seed: 2 }).content);
  });

  it('gives every written URI exactly once across a large prefix', () => {
    const uris = [...docs(0, 3000)].map((d) => d.uri);
    expect(new Set(uris).size).toBe(uris.length);
  });

  it('writes both sidecars of each directory, with front matter naming the directory', () => {
    const abs = docAt(64);
    const ov = docAt(65);
    expect(abs.kind).toBe('dir-abstract');
    expect(ov.kind).toBe('dir-overview');
    expect(abs.uri.endsWith('/.abstract.md')).toBe(true);
    expect(stripSidecar(ov.uri)).toEqual({ nodeUri: abs.nodeUri, isDirectory: true });
    const dirName = abs.nodeUri.slice(abs.nodeUri.lastIndexOf('/') + 1);
    expect(ov.content.startsWith(`---\ndirectory: ${dirName}\n---\n# `)).toBe(true);
  });

  it('covers the real mix: every kind, every memory category, English and Chinese, long documents, code', () => {
    const sample = [...docs(0, 4000)];
    const kinds = new Set(sample.map((d) => d.kind));
    for (const k of [...Object.keys(KIND_WEIGHTS), 'dir-abstract', 'dir-overview']) expect(kinds).toContain(k);
    const memories = sample.filter((d) => d.kind === 'memory');
    for (const cat of ['events', 'entities', 'preferences', 'experiences']) expect(memories.some((d) => d.uri.includes(`/memories/${cat}/`))).toBe(true);
    expect(memories.filter((d) => d.content.startsWith('# Summary\n')).length / memories.length).toBeGreaterThan(0.6);
    expect(memories.some((d) => d.lang === 'zh' && /[\u4e00-\u9fff]/.test(d.content))).toBe(true);
    expect(sample.some((d) => d.content.includes('<!-- MEMORY_FIELDS'))).toBe(true);
    // Long resources must exceed the ~512-token passage limit so they are chunked.
    const long = sample.filter((d) => d.kind === 'long-resource');
    expect(long.length).toBeGreaterThan(0);
    expect(Math.min(...long.map((d) => estimateTokens(d.content)))).toBeGreaterThan(600);
    const code = sample.filter((d) => d.kind === 'code');
    expect(new Set(code.map((d) => d.uri.slice(d.uri.lastIndexOf('.'))))).toEqual(new Set(['.ts', '.py', '.go']));
  });

  it('puts memories under the configured user, peers under its peers root, others elsewhere', () => {
    const sample = [...docs(0, 2000, { user: 'alice' })];
    for (const d of sample.filter((x) => x.kind === 'memory')) expect(d.uri.startsWith('viking://user/alice/memories/')).toBe(true);
    for (const d of sample.filter((x) => x.kind === 'peer-memory')) expect(d.uri).toMatch(/^viking:\/\/user\/alice\/peers\/[^/]+\/memories\//);
    for (const d of sample.filter((x) => x.kind === 'other-memory')) expect(d.uri.startsWith('viking://user/alice/')).toBe(false);
  });

  it('rejects a negative or fractional index', () => {
    expect(() => docAt(-1)).toThrow(RangeError);
    expect(() => docAt(1.5)).toThrow(RangeError);
  });
});

describe('buildQueries', () => {
  it('is deterministic and targets visible documents of the pool', () => {
    const a = buildQueries(40);
    expect(buildQueries(40)).toEqual(a);
    for (const q of a) {
      expect(q.targetIndex).toBeLessThan(1000);
      const d = docAt(q.targetIndex);
      expect(d.nodeUri).toBe(q.target);
      expect(d!.kind).not.toBe('other-memory');
      expect(q.lang).toBe(d!.lang);
      expect(q.text.trim()).toBe(q.text);
      expect(q.text.length).toBeGreaterThan(3);
    }
  });

  it('shares at least one keyword with its target document', () => {
    for (const q of buildQueries(60)) {
      const d = docAt(q.targetIndex);
      expect(d.keywords.some((k) => q.text.includes(k))).toBe(true);
    }
  });

  it('includes Chinese queries', () => {
    expect(buildQueries(100).some((q) => q.lang === 'zh')).toBe(true);
  });
});
