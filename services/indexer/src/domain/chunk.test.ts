import { estimateTokens } from '@ctxmesh/kernel';
import { MAX_PASSAGE_TOKENS, chunkPassages } from './chunk';

/** Words of a text, to check that chunking loses and invents nothing. */
const words = (s: string) => s.split(/\s+/).filter(Boolean);

function section(title: string, paragraphs: number, wordsPer: number, tag: string): string {
  const paras = Array.from({ length: paragraphs }, (_, p) => Array.from({ length: wordsPer }, (_, w) => `${tag}${p}w${w}`).join(' '));
  return `## ${title}\n\n${paras.join('\n\n')}`;
}

describe('chunkPassages', () => {
  it('returns a text that fits as its single passage, trimmed', () => {
    expect(chunkPassages('  # T\n\nshort body\n')).toEqual(['# T\n\nshort body']);
    expect(chunkPassages('   ')).toEqual([]);
  });

  it('keeps every passage within the limit and loses no word', () => {
    const doc = ['# Guide', section('Install', 6, 60, 'i'), section('Configure', 9, 55, 'c'), section('Run', 3, 40, 'r')].join('\n\n');
    expect(estimateTokens(doc)).toBeGreaterThan(MAX_PASSAGE_TOKENS);
    const passages = chunkPassages(doc);
    expect(passages.length).toBeGreaterThan(1);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(MAX_PASSAGE_TOKENS);
    expect(passages.flatMap(words)).toEqual(words(doc));
  });

  it('gives a section above the limit passages of its own, starting at its heading', () => {
    const doc = [section('Alpha', 4, 60, 'a'), section('Beta', 4, 60, 'b'), section('Gamma', 4, 60, 'g')].join('\n\n');
    const passages = chunkPassages(doc, 300);
    expect(passages.filter((p) => p.startsWith('## ')).map((p) => p.split('\n')[0])).toEqual(['## Alpha', '## Beta', '## Gamma']);
    // No passage mixes two sections: every word of a passage carries one section's tag.
    for (const p of passages) expect(new Set(words(p).filter((w) => !w.startsWith('#') && !/^[A-Z]/.test(w)).map((w) => w[0])).size).toBe(1);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(300);
  });

  it('starts a new passage at a heading once the current one is half full', () => {
    const [a, b, c] = [section('A', 1, 48, 'a'), section('B', 1, 8, 'b'), section('C', 1, 48, 'c')];
    expect(estimateTokens(`${a}\n\n${b}`)).toBeLessThanOrEqual(120);
    expect(estimateTokens(a) * 2).toBeGreaterThanOrEqual(120);
    // A and B would fit together, but A is over half the limit, so B starts afresh and C joins it.
    expect(chunkPassages([a, b, c].join('\n\n'), 120)).toEqual([a, `${b}\n\n${c}`]);
  });

  it('packs small sections together up to the limit', () => {
    const doc = Array.from({ length: 40 }, (_, i) => `## S${i}\n\nbody of section ${i} with a few words`).join('\n\n');
    const passages = chunkPassages(doc, 100);
    expect(passages.length).toBeLessThan(40);
    expect(passages.every((p) => p.startsWith('## S'))).toBe(true);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(100);
  });

  it('splits a section above the limit at paragraphs, then lines', () => {
    const longPara = Array.from({ length: 30 }, (_, i) => `line ${i} ` + 'x'.repeat(30)).join('\n');
    const doc = `## Big\n\n${longPara}\n\nlast paragraph`;
    const passages = chunkPassages(doc, 64);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(64);
    expect(passages[0]!.startsWith('## Big')).toBe(true);
    expect(passages.at(-1)).toContain('last paragraph');
    expect(passages.flatMap(words)).toEqual(words(doc));
  });

  it('cuts CJK prose without spaces at code points within the limit', () => {
    const doc = '上下文'.repeat(800);
    const passages = chunkPassages(doc, 100);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(100);
    expect(passages.join('')).toBe(doc);
    // 1.5 tokens per character: at most 66 characters fit in 100 tokens.
    expect(Array.from(passages[0]!).length).toBe(66);
  });

  it('does not take a # line inside a code fence for a heading', () => {
    const fence = '```sh\n# not a heading\necho hi\n```';
    const doc = `## Real\n\n${'word '.repeat(200)}\n\n${fence}\n\n${'more '.repeat(200)}`;
    const passages = chunkPassages(doc, 200);
    expect(passages.some((p) => p.startsWith('# not a heading'))).toBe(false);
    expect(passages.flatMap(words)).toEqual(words(doc));
  });
});

// Regression (issue 12, item 1): one very long line (≈ 1 MB of words) or a CSV of 130,000
// lines crashed the chunker with "Maximum call stack size exceeded" (a spread of a huge
// array), and the accepted write was dead-lettered.
describe('chunkPassages on huge inputs', () => {
  it('chunks one line of 150,000 words', () => {
    const line = Array.from({ length: 150_000 }, (_, i) => `w${i}`).join(' ');
    const passages = chunkPassages(line);
    expect(passages.length).toBeGreaterThan(100);
    for (const p of passages) expect(estimateTokens(p)).toBeLessThanOrEqual(MAX_PASSAGE_TOKENS);
    expect(passages[0]!.startsWith('w0 w1 ')).toBe(true);
    expect(passages.at(-1)!.endsWith('w149999')).toBe(true);
  });

  // The fault suite's "chunker at 2× the accepted size": the gateway takes documents up to
  // 4 MiB (CTXMESH_MAX_DOCUMENT_BYTES), so 8 MiB of one line of words and of CJK without a space.
  it('chunks twice the largest accepted document, words or CJK', () => {
    const words: string[] = [];
    for (let n = 0, i = 0; n < 8 * 1024 * 1024; i++) {
      const w = `w${i}`;
      words.push(w);
      n += w.length + 1;
    }
    const passages = chunkPassages(words.join(' '));
    expect(passages.length).toBeGreaterThan(1000);
    expect(passages.join(' ').split(' ')).toHaveLength(words.length);
    const cjk = '中文字符测试'.repeat((8 * 1024 * 1024) / 18);
    const zh = chunkPassages(cjk);
    expect(zh.join('')).toBe(cjk);
    for (const p of zh) expect(estimateTokens(p)).toBeLessThanOrEqual(MAX_PASSAGE_TOKENS);
  }, 60_000);

  it('chunks a 130,000-line CSV and a 1 MB word without spaces', () => {
    const csv = ['id,name,value', ...Array.from({ length: 130_000 }, (_, i) => `${i},item${i},${i * 3}`)].join('\n');
    const passages = chunkPassages(csv);
    expect(passages.join('\n').split('\n')).toHaveLength(130_001);
    const blob = chunkPassages('x'.repeat(1_000_000));
    expect(blob.join('')).toHaveLength(1_000_000);
  });
});
