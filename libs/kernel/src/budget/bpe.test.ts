import fc from 'fast-check';
import { bpeCounter, countBpe } from './bpe';
import { countTokens, countTokensWithin } from './tokens';

// The library's own (quadratic) count is the oracle for exactness.
const o200k = require('gpt-tokenizer/encoding/o200k_base') as { countTokens(t: string, o: object): number };
const cl100k = require('gpt-tokenizer/encoding/cl100k_base') as { countTokens(t: string, o: object): number };
const AS_TEXT = { disallowedSpecial: new Set<string>() };

/** Text built from runs that the pre-tokenizer keeps whole (letters, CJK, spaces, symbols). */
const runs = fc
  .array(
    fc.tuple(fc.constantFrom('a', 'Zq', '中文', ' ', '\n', '=', 'é', '😀', '12', 'x y', '\ud800'), fc.integer({ min: 1, max: 400 })),
    { maxLength: 6 },
  )
  .map((parts) => parts.map(([s, n]) => s.repeat(n)).join(''));

describe('countBpe', () => {
  it('gives the library count on arbitrary text, short and long pieces alike', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), runs), (text) => {
        expect(countTokens(text, 'o200k_base')).toBe(o200k.countTokens(text, AS_TEXT));
        expect(countTokens(text, 'cl100k_base')).toBe(cl100k.countTokens(text, AS_TEXT));
      }),
      { numRuns: 300 },
    );
  });

  it('counts one long piece exactly (the heap merge, beyond the short-piece path)', () => {
    const zh = '我们使用蓝绿发布部署网关在出现问题时切换流量回滚'.repeat(200); // one 4,800-character piece
    expect(countTokens(zh, 'o200k_base')).toBe(o200k.countTokens(zh, AS_TEXT));
    const word = 'abcdefghij'.repeat(300);
    expect(countTokens(word, 'cl100k_base')).toBe(cl100k.countTokens(word, AS_TEXT));
  });

  it('settles a long piece over the limit without an exact answer', () => {
    const c = bpeCounter(require('gpt-tokenizer/encoding/o200k_base'));
    expect(c.longestToken).toBeGreaterThanOrEqual(128);
    expect(countBpe(c, 'a'.repeat(100_000), 10)).toBe(Infinity);
    expect(countTokensWithin('a'.repeat(10_000), 1_000_000, 'o200k_base')).toBe(o200k.countTokens('a'.repeat(10_000), AS_TEXT));
  });

  // Regression (issue 12, item 2): the library's merge is quadratic in one piece's length;
  // 300,000 characters of Chinese without punctuation took minutes and froze the event loop.
  // The work is counted, not timed: rank lookups stay within a constant per byte (a quadratic
  // merge makes hundreds of billions on this piece), and twice the text costs about twice as many.
  it('counts a 300,000-character piece with work linear in its bytes', () => {
    const base = bpeCounter(require('gpt-tokenizer/encoding/o200k_base'));
    let lookups = 0;
    const core = base.core;
    const counted = {
      ...base,
      core: {
        tokenSplitRegex: core.tokenSplitRegex,
        getBpeRankFromString: (p: string) => core.getBpeRankFromString(p),
        getBpeRankFromBytes: (b: Uint8Array) => (lookups++, core.getBpeRankFromBytes(b)),
        bytePairEncode: (p: string) => core.bytePairEncode(p),
      },
    };
    const unit = '我们使用蓝绿发布部署网关在出现问题时切换流量回滚';
    const work = (repeat: number) => {
      lookups = 0;
      const text = unit.repeat(repeat);
      const tokens = countBpe(counted, text);
      return { tokens, lookups, bytes: Buffer.byteLength(text) };
    };
    const half = work(6_250);
    const full = work(12_500);
    expect(full.tokens).toBeGreaterThan(100_000);
    expect(full.lookups).toBeLessThanOrEqual(4 * full.bytes);
    expect(full.lookups / half.lookups).toBeLessThan(2.2);
    expect(countTokens(' '.repeat(300_000), 'cl100k_base')).toBeGreaterThan(0);
  }, 60_000);

  it('refuses an encoding module without the expected internals', () => {
    expect(() => bpeCounter({ default: {} })).toThrow(/unexpected encoding internals/);
  });
});
