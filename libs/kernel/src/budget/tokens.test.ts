import fc from 'fast-check';
import { UnknownTokenizerError } from '../errors';
import {
  TOKENIZERS,
  countTokens,
  countTokensWithin,
  estimateQuarters,
  estimateTokens,
  resolveTokenizer,
} from './tokens';

/** The §5.1 estimator written literally: for…of code points, float weights, ceil of the sum. */
function literalEstimate(s: string): number {
  const ranges: Array<[number, number]> = [
    [0x3400, 0x4dbf],
    [0x4e00, 0x9fff],
    [0xf900, 0xfaff],
    [0x20000, 0x2ebef],
    [0x3040, 0x30ff],
    [0x31f0, 0x31ff],
    [0xac00, 0xd7af],
    [0x1100, 0x11ff],
    [0x3130, 0x318f],
    [0xff00, 0xffef],
    [0x3000, 0x303f],
  ];
  let sum = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ranges.some(([a, b]) => cp >= a && cp <= b)) sum += 1.5;
    else if (cp > 0xffff) sum += 2.0;
    else sum += 0.25;
  }
  return Math.ceil(sum);
}

describe('estimateTokens', () => {
  it.each([
    ['abcd', 1],
    ['abcde', 2],
    ['中', 2],
    ['中文', 3],
    ['한국어', 5],
    ['😀', 2],
    ['a😀', 3],
    ['ㄅ', 1],
    ['\u3000', 2],
    ['', 0],
  ])('estimates %j as %i (§5.1 examples)', (s, want) => {
    expect(estimateTokens(s)).toBe(want);
  });

  it('prices the bare-URI fragment of §5.1 at 17', () => {
    expect(estimateTokens('<memory uri="viking://u" type="skills" score="0.50" detail="uri" />')).toBe(17);
  });

  it('counts code points, not UTF-16 units', () => {
    // Two UTF-16 units per emoji: counting units would give 0.5, not 2.0, per emoji.
    expect(estimateTokens('😀😀😀😀')).toBe(8);
    expect(estimateTokens('𠮷')).toBe(2); // U+20BB7, in the CJK extension range → 1.5
  });

  it('counts a lone surrogate as one BMP code point', () => {
    expect(estimateQuarters('\ud800')).toBe(1);
    expect(estimateQuarters('a\udc00b')).toBe(3);
  });

  it('matches the literal definition on arbitrary unicode', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(estimateTokens(s)).toBe(literalEstimate(s));
      }),
      { numRuns: 1000 },
    );
  });

  it('adds up in quarters across concatenation', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(estimateQuarters(a + b)).toBe(estimateQuarters(a) + estimateQuarters(b));
      }),
    );
  });
});

describe('countTokens', () => {
  it('defaults to the estimator', () => {
    expect(countTokens('中文')).toBe(3);
    expect(countTokens('中文', 'estimate')).toBe(3);
  });

  it('counts exactly with o200k_base and cl100k_base', () => {
    expect(countTokens('hello world', 'o200k_base')).toBe(2);
    expect(countTokens('hello world', 'cl100k_base')).toBe(2);
    expect(countTokens('中文测试', 'o200k_base')).toBe(2);
    expect(countTokens('中文测试', 'cl100k_base')).toBe(3);
    expect(countTokens('', 'o200k_base')).toBe(0);
  });

  it('treats special-token strings in content as plain text', () => {
    expect(countTokens('<|endoftext|>', 'cl100k_base')).toBe(7);
    expect(countTokens('a <|fim_prefix|> b <|endofprompt|>', 'o200k_base')).toBeGreaterThan(4);
  });

  it('rejects an unknown tokenizer with a typed error', () => {
    expect(() => countTokens('x', 'p50k_base')).toThrow(UnknownTokenizerError);
    let caught: unknown;
    try {
      countTokens('x', 'gpt2');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(UnknownTokenizerError);
    const err = caught as UnknownTokenizerError;
    expect(err.name).toBe('UnknownTokenizerError');
    expect(err.tokenizer).toBe('gpt2');
    expect(err.message).toContain('estimate, o200k_base, cl100k_base');
  });
});

describe('countTokensWithin', () => {
  it.each(TOKENIZERS.map((t) => [t]))('gives the exact count up to the limit and Infinity beyond it (%s)', (tokenizer) => {
    const text = 'The quick brown fox jumps over the lazy dog. 敏捷的棕色狐狸。'.repeat(30);
    const exact = countTokens(text, tokenizer);
    expect(countTokensWithin(text, exact, tokenizer)).toBe(exact);
    expect(countTokensWithin(text, exact + 100, tokenizer)).toBe(exact);
    expect(countTokensWithin(text, exact - 1, tokenizer)).toBe(Infinity);
    expect(countTokensWithin(text, -1, tokenizer)).toBe(Infinity);
  });
});

describe('resolveTokenizer', () => {
  it('defaults to estimate and accepts the listed names', () => {
    expect(resolveTokenizer(undefined)).toBe('estimate');
    expect(resolveTokenizer(null)).toBe('estimate');
    for (const t of TOKENIZERS) expect(resolveTokenizer(t)).toBe(t);
  });

  it('rejects anything else', () => {
    expect(() => resolveTokenizer('O200K_BASE')).toThrow(UnknownTokenizerError);
    expect(() => resolveTokenizer(3)).toThrow(UnknownTokenizerError);
  });
});
