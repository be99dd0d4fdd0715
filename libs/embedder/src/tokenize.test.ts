import fc from 'fast-check';
import { type Segment, hash32, isCjkChar, lexicalTermCounts, lexicalTerms, normalizeText, segmentText, sparseVector, stemWord } from './tokenize';

/**
 * The segmentation rules of `segmentText` spelled out with one Unicode class test per
 * character (no fast paths): the oracle its optimised loop must agree with.
 */
function referenceSegments(text: string): Segment[] {
  const out: Segment[] = [];
  let word = '';
  let cjk = '';
  const flush = (): void => {
    if (word !== '') out.push({ kind: 'word', text: word.toLowerCase(), capitalized: word[0] !== word[0].toLowerCase() });
    if (cjk !== '') out.push({ kind: 'cjk', text: cjk });
    word = '';
    cjk = '';
  };
  for (const ch of text.normalize('NFKC')) {
    if (isCjkChar(ch)) {
      if (word !== '') flush();
      if ('的了吗呢吧啊呀哦嗯哈啦嘛哇呗噢喔'.includes(ch)) flush();
      else cjk += ch;
    } else if (/[\p{L}\p{N}\p{M}]/u.test(ch)) {
      if (cjk !== '') flush();
      word += ch;
    } else if (!(["'", '\u2019', '\u02bc'].includes(ch) && word !== '')) {
      flush();
    }
  }
  flush();
  return out;
}

describe('normalizeText', () => {
  it('folds case and full-width forms with NFKC', () => {
    expect(normalizeText('ＡＢＣ１２３ Hello')).toBe('abc123 hello');
  });
});

describe('segmentText', () => {
  it('splits words at punctuation and keeps CJK runs apart from Latin words', () => {
    expect(segmentText('Redis连接超时, retry!')).toEqual([
      { kind: 'word', text: 'redis', capitalized: true },
      { kind: 'cjk', text: '连接超时' },
      { kind: 'word', text: 'retry', capitalized: false },
    ]);
  });

  it('drops apostrophes inside words instead of splitting', () => {
    expect(segmentText("Bart’s don't")).toEqual([
      { kind: 'word', text: 'barts', capitalized: true },
      { kind: 'word', text: 'dont', capitalized: false },
    ]);
  });

  it('ends a CJK run at a particle such as 的', () => {
    expect(segmentText('我的猫').map((s) => s.text)).toEqual(['我', '猫']);
  });

  it('marks capitalised words and folds case per word', () => {
    expect(segmentText('NASA launched ΟΔΟΣ today').map((x) => [x.text, x.capitalized])).toEqual([
      ['nasa', true],
      ['launched', false],
      ['οδος', true],
      ['today', false],
    ]);
  });

  it('agrees with the plain per-character rules on any mix of scripts, marks and punctuation', () => {
    const pieces = ['a', 'Z', 'q', '7', ' ', ',', '.', '!', '-', '_', '"', "'", '\n', '’', 'ʼ', 'é', 'Ä', 'ß', 'Ω', 'д', 'e\u0301', 'Ａ', '１', '漢', '字', '的', '吗', 'か', 'タ', '한', '𠀀', '😀', '\u00a0', '·'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(segmentText(text)).toEqual(referenceSegments(text));
      }),
      { numRuns: 500 },
    );
  });

  it('treats kana and Hangul as CJK', () => {
    expect(isCjkChar('か')).toBe(true);
    expect(isCjkChar('한')).toBe(true);
    expect(isCjkChar('a')).toBe(false);
    expect(segmentText('東京タワー').map((s) => s.kind)).toEqual(['cjk']);
  });
});

describe('stemWord', () => {
  it.each([
    ['parties', 'parti'],
    ['party', 'parti'],
    ['caresses', 'caress'],
    ['running', 'run'],
    ['hoped', 'hope'],
    ['hoping', 'hope'],
    ['agreed', 'agre'],
    ['dance', 'danc'],
    ['dancing', 'danc'],
    ['cats', 'cat'],
    ['timed', 'time'],
    ['happy', 'happi'],
  ])('stems %s to %s', (word, stem) => {
    expect(stemWord(word)).toBe(stem);
  });

  it('returns the same stem from its memo as on first use', () => {
    const words = ['dancing', 'parties', 'hoped', 'running'];
    const first = words.map(stemWord);
    expect(words.map(stemWord)).toEqual(first);
    expect(first).toEqual(['danc', 'parti', 'hope', 'run']);
  });

  it('leaves short words, digits and non-Latin words alone', () => {
    expect(stemWord('is')).toBe('is');
    expect(stemWord('mp3s')).toBe('mp3s');
    expect(stemWord('привет')).toBe('привет');
  });
});

describe('lexicalTermCounts', () => {
  const counted = (terms: string[]) => {
    const m = new Map<string, number>();
    for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  };
  const expectSameAsCountingTerms = (text: string) => {
    const { main, minor } = lexicalTerms(text);
    const got = lexicalTermCounts(text);
    // Same counts, and the same order (first occurrence): stores encode the maps in that order.
    expect([[...got.main], [...got.minor]]).toEqual([[...counted(main)], [...counted(minor)]]);
  };

  it('counts the terms of lexicalTerms per class, in first-occurrence order', () => {
    for (const text of ['', 'The parties were running late, the party ran', '港 的 港口 引航员在黎明登船 港口', 'Ünïcödé CAFÉ naïve 𠀀𠀁𠀂 x y', 'a a a b', '的了吗']) expectSameAsCountingTerms(text);
  });

  it('agrees with counting lexicalTerms on any text', () => {
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom('a', 'B', 'ing', ' ', '港', '口', '的', '𠀀', '-', 'é', 'runs', 'The ') }), expectSameAsCountingTerms), { numRuns: 300 });
  });
});

describe('lexicalTerms', () => {
  it('emits stemmed non-stop words', () => {
    expect(lexicalTerms('The parties were running late').main).toEqual(['parti', 'run', 'late']);
  });

  it('emits CJK bigrams as main terms and non-stop unigrams as minor terms', () => {
    const t = lexicalTerms('表演魔术');
    expect(t.main).toEqual(['表演', '演魔', '魔术']);
    expect(t.minor).toEqual(['表', '演', '魔', '术']);
  });

  it('keeps a one-character CJK run as a main term so one-character queries match', () => {
    expect(lexicalTerms('猫').main).toEqual(['猫']);
  });

  it('lists the terms the text capitalises', () => {
    expect(lexicalTerms('Bart met Lisa and bart laughed').capitalized.sort()).toEqual(['bart', 'lisa']);
  });

  it('drops bigrams made only of stop characters', () => {
    expect(lexicalTerms('我们').main).toEqual([]);
  });
});

describe('hash32', () => {
  it('is deterministic and unsigned', () => {
    expect(hash32('redis')).toBe(hash32('redis'));
    expect(hash32('redis')).not.toBe(hash32('redit'));
    expect(hash32('魔术')).toBeGreaterThanOrEqual(0);
    expect(hash32('魔术')).toBeLessThan(2 ** 32);
  });
});

describe('sparseVector', () => {
  it('returns ascending unique ids with sublinear weights and light unigram weights', () => {
    const v = sparseVector('cat cat cat dog 猫狗');
    expect([...v.indices].sort((a, b) => a - b)).toEqual(v.indices);
    expect(new Set(v.indices).size).toBe(v.indices.length);
    const w = (term: string): number => v.values[v.indices.indexOf(hash32(term))];
    expect(w('cat')).toBeCloseTo(1 + Math.log(3));
    expect(w('dog')).toBeCloseTo(1);
    expect(w('猫狗')).toBeCloseTo(1);
    expect(w('猫')).toBeCloseTo(0.6);
  });

  it('weighs capitalised terms double', () => {
    const v = sparseVector('Redis stores redis keys');
    expect(v.values[v.indices.indexOf(hash32('redi'))]).toBeCloseTo(2 * (1 + Math.log(2)));
    expect(v.values[v.indices.indexOf(hash32('kei'))]).toBeCloseTo(1);
  });
});
