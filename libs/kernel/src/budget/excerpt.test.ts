import fc from 'fast-check';
import { parseCompactBlock } from './compact';
import { planEvidence } from './evidence';
import { ELISION, excerptOf, holdsAnyTerm, queryTerms, termsIn, textUnits } from './excerpt';
import type { PlanItem } from './plan';
import { countTokens, isCjkCodePoint } from './tokens';

describe('queryTerms', () => {
  it('keeps words of two letters or more outside the stop list, lower-cased, and CJK pairs', () => {
    expect(queryTerms('Where does my sister Lena work now?')).toEqual(['sister', 'lena', 'work', 'now']);
    expect(queryTerms('我妹妹在哪里工作')).toEqual(['我妹', '妹妹', '妹在', '在哪', '哪里', '里工', '工作']);
    expect(queryTerms('部署 k8s')).toEqual(['部署', 'k8s']);
    expect(queryTerms('the of a')).toEqual([]);
  });
});

describe('textUnits', () => {
  it('cuts lines into sentences and keeps a fenced code block whole', () => {
    const text = 'First one. Second one!\n\n```ts\nconst a = 1.\nconst b = 2.\n```\n第一句。第二句？';
    expect(textUnits(text).map((u) => u.text)).toEqual(['First one.', 'Second one!', '```ts\nconst a = 1.\nconst b = 2.\n```', '第一句。', '第二句？']);
  });
});

describe('excerptOf', () => {
  const session = [
    '## 2026-03-14',
    'User: The weather was grey all week.',
    'Assistant: Sounds dreary.',
    'User: I booked a trip for the spring.',
    'User: It is Kyoto, in April.',
    'Assistant: Lovely season for it.',
    'User: Work was busy with the quarterly report.',
    'Assistant: Hope it eases off.',
  ].join('\n');

  it('keeps the sentences that hold the query terms and the one after, in order, marking what was left out', () => {
    const ex = excerptOf(session, queryTerms('where is my trip'), 40)!;
    expect(ex.text).toBe([ELISION, 'User: I booked a trip for the spring.', 'User: It is Kyoto, in April.', ELISION].join('\n'));
    expect(ex.kept).toBe(2);
  });

  it('is null when no unit holds a term, or when it would keep everything', () => {
    expect(excerptOf(session, queryTerms('quantum chromodynamics'), 40)).toBeNull();
    expect(excerptOf('User: a trip.\nUser: to Kyoto.', queryTerms('trip'), 10_000)).toBeNull();
    expect(excerptOf('one sentence about a trip', queryTerms('trip'), 5)).toBeNull();
  });

  it('never cuts inside a unit: every kept line is a whole unit of the text, and elisions are marked', () => {
    const word = fc.constantFrom('trip', 'kyoto', 'work', 'report', 'weather', 'the', 'and', '旅行', '京都', 'x');
    const sentence = fc.array(word, { minLength: 1, maxLength: 8 }).map((w) => `${w.join(' ')}.`);
    const text = fc.array(fc.array(sentence, { minLength: 1, maxLength: 3 }).map((s) => s.join(' ')), { minLength: 2, maxLength: 30 }).map((l) => l.join('\n'));
    fc.assert(
      fc.property(text, fc.array(word, { minLength: 1, maxLength: 4 }), fc.integer({ min: 5, max: 200 }), (t, q, target) => {
        const ex = excerptOf(t, queryTerms(q.join(' ')), target);
        if (!ex) return;
        const units = new Set(textUnits(t).map((u) => u.text));
        const pieces = ex.text.split('\n').flatMap((line) => (line === ELISION ? [] : textUnits(line).map((u) => u.text)));
        for (const p of pieces) expect(units.has(p)).toBe(true);
        expect(ex.kept).toBeLessThan(ex.units);
        expect(ex.text).toContain(ELISION);
      }),
      { numRuns: 300 },
    );
  });
});

describe('planEvidence with a query: long texts as excerpts', () => {
  const long = Array.from({ length: 60 }, (_, i) => `User: line ${i} about the weather and the week.`).join('\n');
  const withFact = `${long}\nUser: I booked a trip to Kyoto in April.\n${long}`;
  const item = (name: string, body: string, score = 0.6): PlanItem => ({
    candidate: { uri: `viking://user/u/memories/events/sessions/${name}.md`, category: 'events', score, abstract: body.split('\n')[0], origin: 'self', stored_overview: '' },
    texts: { overview: '', full: body },
  });

  it('serves the part of a long session that holds the query instead of its unrelated first line, marked as an excerpt', () => {
    const r = planEvidence([item('s1', withFact), item('s2', long, 0.5)], 1600, null, 'estimate', { query: 'where is my trip to kyoto' });
    const e = r.entries.find((x) => x.uri.endsWith('s1.md'))!;
    expect(e.detail).toBe('full');
    expect(e.text).toContain('I booked a trip to Kyoto in April.');
    expect(e.text).toContain(ELISION);
    expect(countTokens(e.text)).toBeLessThan(countTokens(withFact) / 4);
    const parsed = parseCompactBlock(r.rendered).entries.find((x) => x.uri === e.uri)!;
    expect(parsed).toMatchObject({ detail: 'full', excerpt: true });
    expect(r.rendered).toContain('excerpt="full"');
    expect(r.evidence?.excerpts).toBe(1);
    expect(r.stats.used_tokens).toBeLessThanOrEqual(1600);
  });

  it('without a query, or for a short text, serves whole tiers as before', () => {
    const plain = planEvidence([item('s1', withFact)], 1600, null);
    expect(plain.entries[0].text).not.toContain(ELISION);
    expect(plain.evidence?.excerpts).toBeUndefined();
    const short = planEvidence([item('s1', 'User: a trip.\nUser: to Kyoto.')], 1600, null, 'estimate', { query: 'trip' });
    expect(short.entries[0].text).not.toContain(ELISION);
  });
});

describe('planEvidence with a query: a memory whose abstract is its whole body', () => {
  it('cuts the excerpt from the longest text (the abstract), not the deepest tier (its one-paragraph overview)', () => {
    const turns = Array.from({ length: 80 }, (_, i) => (i === 50 ? 'User: my sister Lena started at the hospital in Porto.' : `User: chatter ${i} about lunch and the weather.`));
    const body = ['## 2026-03-14', ...turns].join('\n');
    const r = planEvidence(
      [{ candidate: { uri: 'viking://user/u/memories/events/sessions/2026-03-14.md', category: 'events', score: 0.6, abstract: body, origin: 'self', stored_overview: '## 2026-03-14\nUser: chatter 0 about lunch and the weather.' } }],
      400,
      null,
      'estimate',
      { query: 'where does my sister Lena work' },
    );
    expect(r.entries).toHaveLength(1);
    expect(r.entries[0].detail).toBe('abstract');
    expect(r.entries[0].text).toContain('my sister Lena started at the hospital in Porto.');
    expect(r.rendered).toContain('excerpt="abstract"');
    // With room for the whole body, depth serves it whole instead.
    const roomy = planEvidence([{ candidate: { uri: 'viking://user/u/memories/events/sessions/2026-03-14.md', category: 'events', score: 0.6, abstract: body, origin: 'self' } }], 4000, null, 'estimate', { query: 'sister Lena' });
    expect(roomy.entries[0].text).toBe(body);
  });
});

describe('termsIn', () => {
  it('finds a long term at the start of a word (inflections), a short one only whole, a CJK pair anywhere', () => {
    expect(termsIn('We deployed the billing service.', ['deploy'])).toBe(1);
    expect(termsIn('Redeploy tomorrow.', ['deploy'])).toBe(0);
    expect(termsIn('an ox, oxen', ['ox'])).toBe(1);
    expect(termsIn('boxes', ['ox'])).toBe(0);
    expect(termsIn('我们部署了计费服务', ['部署', '服务', '明天'])).toBe(2);
  });

  it('sees word edges at letters and digits of any script, and never matches a term that is not a word', () => {
    expect(termsIn('x-ray, X1ray, 𝒳ray ray.', ['ray'])).toBe(1);
    expect(termsIn('1ray 𝒳ray éray', ['ray'])).toBe(0);
    expect(termsIn('Deployment, redeploy', ['deploy', 'ploy', 'a-b', '', 'éclair'])).toBe(1);
    expect(termsIn('Éclairs (ÉCLAIRS)', ['éclair'])).toBe(1);
  });

  // What termsIn counted when it split the text into a set of words: the reference the scan
  // that looks for each term where it occurs must agree with.
  const splitting = (unit: string, terms: readonly string[]): number => {
    const lower = unit.toLowerCase();
    const words = new Set(lower.match(/[\p{L}\p{N}]+/gu) ?? []);
    let n = 0;
    for (const t of terms) {
      if (words.has(t)) n++;
      else if ([...t].some((c) => isCjkCodePoint(c.codePointAt(0)!))) {
        if (lower.includes(t)) n++;
      } else if (t.length >= 4 && [...words].some((w) => w.startsWith(t))) n++;
    }
    return n;
  };

  it('counts what splitting the text into words counted, on any text and terms', () => {
    // Pieces that meet at word edges: letters of several scripts and cases, digits, CJK,
    // astral letters, combining marks, punctuation, spaces and a lone surrogate.
    const piece = fc.constantFrom('ray', 'Ray', 'deploy', 'DEPLOY', 'x', '1', '9', 'é', 'É', '\u0301', '𝒳', '\ud835', '部署', '服务', '部', '-', ' ', '.', '\n', '(', '_', 'İ', 'ß', 'ẞ');
    const text = fc.array(piece, { maxLength: 24 }).map((p) => p.join(''));
    const term = fc.oneof(fc.array(piece, { minLength: 1, maxLength: 3 }).map((p) => p.join('').toLowerCase()), fc.constantFrom('ray', 'deploy', 'depl', 'xray', '部署', 'a-b', ''));
    fc.assert(
      fc.property(text, fc.array(term, { maxLength: 5 }), (t, terms) => {
        expect(termsIn(t, terms)).toBe(splitting(t, terms));
        expect(holdsAnyTerm(t, terms)).toBe(splitting(t, terms) > 0);
      }),
      { numRuns: 3000 },
    );
  });
});
