import { codePointLength, normalizeDigest } from '@ctxmesh/kernel';
import { bagCosine, bulletLine, EXTRACTIVE_SCORE_FLOOR, extractiveDigest, featureBag, splitSentences } from './extractive';

describe('splitSentences', () => {
  it('splits English at . ! ? before a space, keeping closing quotes', () => {
    expect(splitSentences('It shipped. Did it work? Yes! He said "done." Then left')).toEqual([
      'It shipped.',
      'Did it work?',
      'Yes!',
      'He said "done."',
      'Then left',
    ]);
  });

  it('does not split inside numbers, file names or after e.g.', () => {
    expect(splitSentences('Version 1.5 is in api.md, e.g. the new routes. Done now.')).toEqual([
      'Version 1.5 is in api.md, e.g. the new routes.',
      'Done now.',
    ]);
  });

  it('splits Chinese at 。！？； without spaces', () => {
    expect(splitSentences('周五发布。部署失败了！怎么修复？先回滚；再补监控')).toEqual(['周五发布。', '部署失败了！', '怎么修复？', '先回滚；', '再补监控']);
  });

  it('drops front matter, comments, code, headings and table rules, and joins wrapped lines', () => {
    const text = [
      '---',
      'title: x',
      '---',
      '# Summary',
      'The proxy was rewritten',
      'in TypeScript last week.',
      '',
      '```ts',
      'const a = 1. Not a sentence.',
      '```',
      '- First item here.',
      '| col a | col b |',
      '|---|---|',
      '部署在周五',
      '完成了。',
      '<!-- MEMORY_FIELDS {"a":1} -->',
    ].join('\n');
    expect(splitSentences(text)).toEqual([
      'The proxy was rewritten in TypeScript last week.',
      'First item here.',
      'col a col b',
      '部署在周五完成了。',
    ]);
  });

  it('leaves out very short sentences and sentences that quote viking:// URIs', () => {
    expect(splitSentences('OK. See viking://resources/x.md for more. The rest stays.')).toEqual(['The rest stays.']);
  });
});

describe('bagCosine', () => {
  it('is 1 for the same text, 0 for texts sharing no feature, and symmetric', () => {
    const a = featureBag('kubectl rollout undo');
    const b = featureBag('lunch menu');
    expect(bagCosine(a, a)).toBeCloseTo(1, 12);
    expect(bagCosine(a, b)).toBe(0);
    const c = featureBag('undo the kubectl rollout now');
    expect(bagCosine(a, c)).toBeCloseTo(bagCosine(c, a), 12);
    expect(bagCosine(a, c)).toBeGreaterThan(EXTRACTIVE_SCORE_FLOOR);
  });

  it('is 0 when a bag is empty', () => {
    expect(bagCosine(featureBag(''), featureBag('x y z'))).toBe(0);
  });
});

describe('bulletLine', () => {
  it('cites with "source:" for other text and 来源： for Chinese', () => {
    expect(bulletLine('It shipped.', 'viking://a.md')).toBe('- It shipped. source: viking://a.md');
    expect(bulletLine('已发布。', 'viking://a.md')).toBe('- 已发布。 来源：viking://a.md');
  });

  it('cuts a long sentence so that the whole line fits 500 code points and keeps the citation', () => {
    const uri = 'viking://resources/docs/a.md';
    const line = bulletLine('word '.repeat(200).trim(), uri)!;
    expect(codePointLength(line)).toBe(500);
    expect(line.endsWith(`… source: ${uri}`)).toBe(true);
  });

  it('gives up when the URI leaves no room for a sentence', () => {
    expect(bulletLine('It shipped.', `viking://${'x'.repeat(490)}`)).toBeNull();
  });
});

describe('extractiveDigest', () => {
  const uris = ['viking://u/a.md', 'viking://u/b.md', 'viking://u/c.md'];
  const sources = [
    { uri: uris[0], text: 'Redis persistence uses appendonly. Redis runs on port 6379. Backups run nightly. Redis persistence was tuned in May.' },
    { uri: uris[1], text: 'The persistence layer of the proxy is Redis.' },
    { uri: uris[2], text: 'Lunch was nice.' },
  ];
  const run = (maxBullets: number, allowed = uris) =>
    extractiveDigest({ query: 'redis persistence', sources, allowedUris: new Set(allowed), maxBullets });

  it('takes the best sentences in score order, each citing its entry, at most max_bullets', () => {
    const out = run(3);
    expect(out.length).toBeLessThanOrEqual(3);
    // Both Redis+persistence sentences of a.md outscore b.md's longer one (cosine length normalisation).
    expect(out.map((b) => b.uri)).toEqual([uris[0], uris[0], uris[1]]);
    for (let i = 1; i < out.length; i++) expect(out[i - 1].score).toBeGreaterThanOrEqual(out[i].score);
    for (const b of out) expect(b.line).toBe(`- ${b.sentence} source: ${b.uri}`);
    expect(out.map((b) => b.sentence)).not.toContain('Lunch was nice.');
  });

  it('takes at most two sentences from one entry, and one when enough entries can fill the digest', () => {
    expect(run(6).filter((b) => b.uri === uris[0])).toHaveLength(2);
    expect(run(2).map((b) => b.uri)).toEqual([uris[0], uris[1]]);
  });

  it('skips entries outside the allowlist', () => {
    expect(run(3, [uris[1]]).map((b) => b.uri)).toEqual([uris[1]]);
  });

  it('is deterministic', () => {
    expect(run(3)).toEqual(run(3));
  });

  it('returns nothing when no sentence scores above the floor, or the query has no features', () => {
    expect(extractiveDigest({ query: 'kubernetes', sources, allowedUris: new Set(uris), maxBullets: 3 })).toEqual([]);
    expect(extractiveDigest({ query: 'the of and', sources, allowedUris: new Set(uris), maxBullets: 3 })).toEqual([]);
  });

  it('produces lines that survive the contract normalisation unchanged', () => {
    const out = run(3);
    const n = normalizeDigest(out.map((b) => b.line).join('\n'), uris, 3);
    expect(n.status).toBe('ok');
    expect(n.digest).toBe(`OpenViking memory digest:\n${out.map((b) => b.line).join('\n')}`);
  });

  it('does not repeat a sentence served by two entries', () => {
    const dup = [
      { uri: uris[0], text: 'Redis persistence uses appendonly.' },
      { uri: uris[1], text: 'Redis persistence uses appendonly.' },
    ];
    const out = extractiveDigest({ query: 'redis persistence', sources: dup, allowedUris: new Set(uris), maxBullets: 3 });
    expect(out.map((b) => b.uri)).toEqual([uris[0]]);
  });
});
