/**
 * Token counting (context-contract §5.1): the CJK-aware estimator, plus exact counting with
 * `gpt-tokenizer` encodings for callers that name one.
 */
import { UnknownTokenizerError } from '../errors';
import { bpeCounter, countBpe, type BpeCounter } from './bpe';

/** Tokenizer names a request may select. `"estimate"` is the contract's default. */
export const TOKENIZERS = ['estimate', 'o200k_base', 'cl100k_base'] as const;

/** One of {@link TOKENIZERS}. */
export type TokenizerName = (typeof TOKENIZERS)[number];

/** The tokenizer used when a request names none. */
export const DEFAULT_TOKENIZER: TokenizerName = 'estimate';


/**
 * Validate a tokenizer name.
 * @param name the requested name; `undefined`/`null` select {@link DEFAULT_TOKENIZER}
 * @throws UnknownTokenizerError for any other value
 */
export function resolveTokenizer(name: unknown): TokenizerName {
  if (name === undefined || name === null) return DEFAULT_TOKENIZER;
  if (typeof name === 'string' && (TOKENIZERS as readonly string[]).includes(name)) return name as TokenizerName;
  throw new UnknownTokenizerError(String(name), TOKENIZERS);
}

/**
 * Estimator weight of one code point, in quarter tokens: 6 (1.5) for the listed CJK, kana,
 * Hangul, fullwidth and CJK-punctuation ranges, 8 (2.0) for any other astral code point,
 * 1 (0.25) otherwise. Quarters keep the sum an exact integer, as Python's float sum of
 * 0.25/1.5/2.0 is exact at any realistic length. (A lone surrogate is a BMP code point: 1.)
 */
export function quarterWeight(cp: number): number {
  if (cp < 0x1100) return 1;
  if (isCjkCodePoint(cp)) return 6;
  return cp > 0xffff ? 8 : 1;
}

/**
 * True for the code points the estimator weighs 1.5 (§5.1): CJK ideographs and extensions,
 * compatibility ideographs, kana, Hangul syllables and jamo, fullwidth forms and CJK
 * punctuation. Shared with the session log's rank counter.
 */
export function isCjkCodePoint(cp: number): boolean {
  return (
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x20000 && cp <= 0x2ebef) ||
    (cp >= 0x3040 && cp <= 0x30ff) ||
    (cp >= 0x31f0 && cp <= 0x31ff) ||
    (cp >= 0xac00 && cp <= 0xd7af) ||
    (cp >= 0x1100 && cp <= 0x11ff) ||
    (cp >= 0x3130 && cp <= 0x318f) ||
    (cp >= 0xff00 && cp <= 0xffef) ||
    (cp >= 0x3000 && cp <= 0x303f)
  );
}

/**
 * The estimator's raw sum for `s`, in quarter tokens (see {@link estimateTokens}). Sums of
 * concatenated strings add up, which lets the budget price a fragment without building it.
 * A lone surrogate counts as one BMP code point (0.25), as Python sees it.
 */
export function estimateQuarters(s: string): number {
  let q = 0;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x1100) {
      q += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        q += quarterWeight(((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000);
        i++;
      } else {
        q += 1;
      }
    } else {
      q += quarterWeight(c);
    }
  }
  return q;
}

/**
 * The CJK-aware estimate: `ceil(Σ weight(code point))`, weights 1.5 / 2.0 / 0.25 (§5.1).
 * Examples: `"abcd"` → 1, `"abcde"` → 2, `"中文"` → 3, `"😀"` → 2, `""` → 0.
 */
export function estimateTokens(s: string): number {
  return Math.ceil(estimateQuarters(s) / 4);
}

const counters = new Map<TokenizerName, BpeCounter>();

/** Load an encoding on first use, so that the estimate path never pays for the BPE tables. */
function counterFor(name: Exclude<TokenizerName, 'estimate'>): BpeCounter {
  let c = counters.get(name);
  if (!c) {
    // Static specifiers (not a computed path) keep bundlers and tsc able to see them.
    c = bpeCounter(name === 'o200k_base' ? require('gpt-tokenizer/encoding/o200k_base') : require('gpt-tokenizer/encoding/cl100k_base'));
    counters.set(name, c);
  }
  return c;
}

/**
 * Count the tokens of `text` with the named tokenizer.
 * @param tokenizer `"estimate"` (default, the §5.1 estimator), `"o200k_base"` or `"cl100k_base"`
 *   (exact BPE counts, O(n log n) in the text's length — see `./bpe`; special-token strings
 *   count as plain text)
 * @throws UnknownTokenizerError for any other name
 */
export function countTokens(text: string, tokenizer: string = DEFAULT_TOKENIZER): number {
  if (tokenizer === 'estimate') return estimateTokens(text);
  if (tokenizer === 'o200k_base' || tokenizer === 'cl100k_base') return text === '' ? 0 : countBpe(counterFor(tokenizer), text);
  throw new UnknownTokenizerError(tokenizer, TOKENIZERS);
}

/**
 * Count the tokens of `text` only as far as needed to compare with `limit`: the exact count
 * when it is at most `limit`, else `Infinity`. An exact tokenizer stops encoding once the
 * limit is passed, so the cost follows the limit, not the length of an oversized body.
 * @param limit token limit (inclusive)
 * @throws UnknownTokenizerError for an unknown tokenizer name
 */
export function countTokensWithin(text: string, limit: number, tokenizer: string = DEFAULT_TOKENIZER): number {
  if (tokenizer === 'o200k_base' || tokenizer === 'cl100k_base') {
    if (text === '') return 0 <= limit ? 0 : Infinity;
    if (limit < 0) return Infinity;
    return countBpe(counterFor(tokenizer), text, limit);
  }
  const n = countTokens(text, tokenizer);
  return n <= limit ? n : Infinity;
}
