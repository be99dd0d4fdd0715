import { buildDocsQueries, docsDocAt, docsDocs } from './docs-corpus';

describe('docs corpus profile', () => {
  it('is deterministic and independent of the corpus size', () => {
    expect(docsDocAt(123)).toEqual(docsDocAt(123));
    expect([...docsDocs(0, 5)].map((d) => d.uri)).toEqual([0, 1, 2, 3, 4].map((i) => docsDocAt(i).uri));
    expect(docsDocAt(7, { seed: 1 }).content).not.toEqual(docsDocAt(7, { seed: 2 }).content);
  });

  it('has the make-up of a real tree: 60 % memories with a Summary, 30 % long markdown, 10 % code, a third Chinese', () => {
    const all = [...docsDocs(0, 2000)];
    const share = (p: (d: (typeof all)[number]) => boolean) => all.filter(p).length / all.length;
    expect(share((d) => d.kind === 'memory')).toBeGreaterThan(0.55);
    expect(share((d) => d.kind === 'memory')).toBeLessThan(0.65);
    expect(share((d) => d.kind === 'resource')).toBeGreaterThan(0.26);
    expect(share((d) => d.kind === 'code')).toBeGreaterThan(0.07);
    expect(share((d) => d.lang === 'zh')).toBeGreaterThan(0.28);
    expect(share((d) => d.lang === 'zh')).toBeLessThan(0.38);
    expect(all.filter((d) => d.kind === 'memory').every((d) => d.content.startsWith('# Summary\n'))).toBe(true);
    const resources = all.filter((d) => d.kind === 'resource' && d.lang === 'en');
    const words = resources.map((d) => d.content.split(/\s+/).length);
    expect(Math.min(...words)).toBeGreaterThanOrEqual(150);
    expect(Math.max(...words)).toBeGreaterThan(2000);
    expect(resources.some((d) => d.content.includes('\n## ') && d.content.includes('\n- ') && d.content.includes('```'))).toBe(true);
    expect(all.some((d) => d.uri.endsWith('.ts')) && all.some((d) => d.uri.endsWith('.py'))).toBe(true);
  });

  it('draws words head-heavy: a few terms are in most documents, most terms in few', () => {
    const df = new Map<string, number>();
    const all = [...docsDocs(0, 500)].filter((d) => d.lang === 'en');
    for (const d of all) for (const w of new Set(d.sentences.flat())) df.set(w, (df.get(w) ?? 0) + 1);
    const counts = [...df.values()].sort((a, b) => b - a);
    expect(counts[0]! / all.length).toBeGreaterThan(0.5);
    expect(counts.filter((c) => c === 1).length / counts.length).toBeGreaterThan(0.2);
  });

  it('queries are 2–4 consecutive words of their target document, each text once', () => {
    const qs = buildDocsQueries(300, { pool: 1000 });
    expect(qs).toHaveLength(300);
    expect(new Set(qs.map((q) => q.text)).size).toBe(300);
    for (const q of qs) {
      const d = docsDocAt(q.targetIndex);
      expect(q.target).toBe(d.uri);
      expect(q.lang).toBe(d.lang);
      const found = d.sentences.some((s) => {
        for (let n = 2; n <= 4; n++) for (let i = 0; i + n <= s.length; i++) if ((d.lang === 'zh' ? s.slice(i, i + n).join('') : s.slice(i, i + n).join(' ')) === q.text) return true;
        return false;
      });
      expect(found).toBe(true);
      expect(q.targetIndex).toBeLessThan(1000);
    }
  });
});
