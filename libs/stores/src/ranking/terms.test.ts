import { lexicalTerms } from '@ctxmesh/embedder';
import fc from 'fast-check';
import { IDF_FLOOR, robertsonIdf } from './bm25';
import { DocTerms, TfIdfScorer, bagOfCounts, canBeMinor, decodeTermCounts, encodeTermCounts, termBag, termCounts } from './terms';

const doc = (text: string, minorWeight = 0.6): DocTerms => DocTerms.ofText(text, minorWeight);

describe('robertsonIdf', () => {
  it('is ln((n − df + 0.5) / (df + 0.5)) for a term in fewer than half the documents', () => {
    expect(robertsonIdf(1, 10)).toBeCloseTo(Math.log(9.5 / 1.5), 12);
    expect(robertsonIdf(0, 1)).toBeCloseTo(Math.log(1.5 / 0.5), 12);
  });

  it('floors a term in half the documents or more, so it carries (almost) no weight', () => {
    expect(robertsonIdf(5, 10)).toBe(IDF_FLOOR);
    expect(robertsonIdf(10, 10)).toBe(IDF_FLOOR);
  });

  it('decreases as the term gets more common', () => {
    expect(robertsonIdf(1, 100)).toBeGreaterThan(robertsonIdf(2, 100));
    expect(robertsonIdf(2, 100)).toBeGreaterThan(robertsonIdf(20, 100));
  });
});

describe('termBag', () => {
  const twice = 1 + Math.log(2);

  it('weighs stemmed words 1 + ln(count), skipping stop words', () => {
    expect(termBag('The dancer danced and dances', 0.6)).toEqual(
      new Map([
        ['dancer', 1],
        ['danc', twice],
      ]),
    );
  });

  it('weighs CJK bigrams like words and unigrams minorWeight times that', () => {
    expect(termBag('魔术魔术', 0.25)).toEqual(
      new Map([
        ['魔术', twice],
        ['术魔', 1],
        ['魔', 0.25 * twice],
        ['术', 0.25 * twice],
      ]),
    );
  });

  it('adds both weights of a character that is a one-character run and a unigram elsewhere', () => {
    expect(termBag('猫，小猫咪', 0.5).get('猫')).toBe(1.5);
  });

  it('multiplies a capitalised word only when asked (queries)', () => {
    expect(termBag('Bart met bart', 0.6).get('bart')).toBe(twice);
    expect(termBag('Bart met bart', 0.6, 2).get('bart')).toBe(2 * twice);
    expect(termBag('Bart met bart', 0.6, 2).get('met')).toBe(1);
  });
});

describe('TfIdfScorer', () => {
  const flat = (): number => 1;

  it('scores a document with exactly the query’s terms 1 and a disjoint one 0', () => {
    const c = new TfIdfScorer(termBag('lighthouse keeper', 0.6), flat);
    expect(c.score(doc('the keeper of the lighthouse'))).toBeCloseTo(1, 12);
    expect(c.score(doc('sourdough bread'))).toBe(0);
    expect(c.score(doc(''))).toBe(0);
  });

  it('measures coverage as the share of the query’s IDF-weighted mass a document holds, whatever else it says', () => {
    const idf = (t: string): number => (t === 'lighthous' || t === 'lighthouse' ? 3 : 1);
    const q = termBag('lighthouse keeper', 0.6);
    const c = new TfIdfScorer(q, idf);
    expect(c.coverage(doc('the keeper of the lighthouse, and a great many other things besides'))).toBeCloseTo(1, 12);
    expect(c.coverage(doc('sourdough bread'))).toBe(0);
    const half = c.coverage(doc('a keeper'));
    const rare = c.coverage(doc('a lighthouse'));
    expect(half).toBeGreaterThan(0);
    expect(rare).toBeGreaterThan(half);
    expect(half + rare).toBeLessThanOrEqual(1 + 1e-12);
  });

  it('scores 0 for a query without terms', () => {
    expect(new TfIdfScorer(new Map(), flat).score(doc('anything at all'))).toBe(0);
  });

  it('weighs a term more the more often the query repeats it', () => {
    const once = new TfIdfScorer(termBag('rocket launch', 0.6), flat);
    const thrice = new TfIdfScorer(termBag('rocket rocket rocket launch', 0.6), flat);
    const engine = doc('rocket engine');
    expect(thrice.score(engine)).toBeGreaterThan(once.score(engine));
    expect(thrice.score(engine)).toBeGreaterThan(thrice.score(doc('launch engine')));
  });

  it('counts a match’s IDF twice, once from each side', () => {
    const idf = (t: string): number => (t === 'lighthous' ? 2 : 0.5);
    const c = new TfIdfScorer(termBag('lighthouse keeper', 0.6), idf);
    expect(c.score(doc('lighthouse harbor')) / c.score(doc('keeper harbor'))).toBeCloseTo(16, 9);
  });

  it('normalises a document by the length of its own term-frequency vector', () => {
    const c = new TfIdfScorer(termBag('lighthouse', 0.6), (t) => (t === 'lighthous' ? 3 : 0.01));
    expect(c.score(doc('lighthouse')) / c.score(doc('lighthouse harbor cafe'))).toBeCloseTo(Math.sqrt(3), 9);
  });
});

describe('term counts', () => {
  it('round-trip through their string form, CJK and empty classes included', () => {
    for (const text of ['Redis连接超时, retry the retry!', '', 'lighthouse', '魔术魔术 and 猫，小猫咪']) {
      const counts = termCounts(lexicalTerms(text));
      expect(decodeTermCounts(encodeTermCounts(counts))).toEqual(counts);
    }
  });

  it('refuse a string they did not write', () => {
    for (const bad of ['lighthouse 2', 'lighthouse\t', 'lighthouse 0\t', 'lighthouse x\t', 'lighthouse 2 \t', 'a 1\tb 1\tc 1', 'a 1\tb']) {
      expect(() => decodeTermCounts(bad)).toThrow(RangeError);
      expect(() => DocTerms.decode(bad, 0.6)).toThrow(RangeError);
    }
  });

  it('give the same bag as the text', () => {
    const text = 'Bart danced, dancing at the 圣诞节晚会 with Bart';
    expect(bagOfCounts(termCounts(lexicalTerms(text)), 0.6)).toEqual(termBag(text, 0.6));
  });
});

describe('DocTerms', () => {
  const texts = fc.array(fc.constantFrom('lighthouse', 'keeper', 'Harbor', 'the', 'danced', '魔术', '猫', '，', '小猫咪', '圣诞节晚会', 'Redis', '连接超时', ' '), { maxLength: 25 }).map((xs) => xs.join(' '));

  it('weighs, norms and counts like the text’s term bag, for any minor weight', () => {
    fc.assert(
      fc.property(texts, fc.constantFrom(0, 0.25, 0.6, 1), (text, m) => {
        const d = DocTerms.ofText(text, m);
        const bag = termBag(text, m);
        let n2 = 0;
        for (const [t, w] of bag) {
          expect(d.weight(t)).toBeCloseTo(w, 12);
          expect(d.has(t)).toBe(true);
          n2 += w * w;
        }
        expect(d.norm).toBeCloseTo(Math.sqrt(n2), 12);
        const { main, minor } = lexicalTerms(text);
        expect(d.length).toBe(1 + main.length + minor.length);
        const set = new Map<string, number>();
        for (const t of main) set.set(t, 1);
        for (const t of minor) if (!set.has(t)) set.set(t, m);
        expect(d.setNorm2).toBeCloseTo([...set.values()].reduce((s, w) => s + w * w, 0), 12);
        for (const [t, w] of set) expect(d.setWeight(t)).toBe(w);
      }),
    );
  });

  it('reads the same from its stored string as from the maps it was counted into, without decoding them', () => {
    // Digit terms are looked up pair by pair (a count is digits too); absent terms, prefixes of
    // present ones and the counts themselves must all read as 0.
    const words = fc.constantFrom('lighthouse', 'light', 'keeper', 'Harbor', '2024', '3', '12', '1', 'x1', '魔术', '魔', '猫', '小猫咪', '圣诞节晚会', 'Redis', '连接超时', ' ');
    fc.assert(
      fc.property(fc.array(words, { maxLength: 40 }), fc.constantFrom(0, 0.25, 0.6, 1), (xs, m) => {
        const text = xs.join(' ');
        const d = DocTerms.ofText(text, m);
        const e = DocTerms.decode(encodeTermCounts(d.counts), m);
        expect([e.length, e.norm, e.setNorm2]).toEqual([d.length, d.norm, d.setNorm2]);
        const probes = new Set([...d.counts.main.keys(), ...d.counts.minor.keys(), 'light', 'lighthous', 'ighthous', '2', '4', '1', '0', '12', '魔术表', '', 'a b']);
        for (const t of probes) {
          expect([e.count(0, t), e.count(1, t), e.weight(t), e.has(t), e.setWeight(t)]).toEqual([d.count(0, t), d.count(1, t), d.weight(t), d.has(t), d.setWeight(t)]);
        }
        expect(e.counts).toEqual(d.counts);
      }),
    );
  });

  it('is empty for a text without terms', () => {
    const d = doc('the and of');
    expect([d.length, d.norm, d.setNorm2, d.weight('the'), d.has('the')]).toEqual([1, 0, 0, 0, false]);
  });
});

describe('canBeMinor', () => {
  it('holds for every minor term the tokenizer makes, and for no term of two characters or more', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('魔术表演很精彩', '𠀀𠀁 emoji 🎉 and words', '猫'), (s, cjk) => {
        const { main, minor } = lexicalTerms(s + cjk);
        for (const t of minor) expect(canBeMinor(t)).toBe(true);
        for (const t of main) if ([...t].length > 1) expect(canBeMinor(t)).toBe(false);
      }),
    );
    expect(canBeMinor('猫')).toBe(true);
    expect(canBeMinor('𠀀')).toBe(true);
    expect(canBeMinor('魔术')).toBe(false);
    expect(canBeMinor('')).toBe(false);
  });
});
