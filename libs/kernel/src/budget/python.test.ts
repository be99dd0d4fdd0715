import fc from 'fast-check';
import {
  codePointLength,
  codePointPrefix,
  formatFixed2,
  pyCollapseWhitespace,
  pyLstrip,
  pyRound,
  pyRstrip,
  pySplitlines,
  pyStrip,
} from './python';

/**
 * Exact oracle for Python `"%.2f"`: expand the double into an exact fraction with BigInt and
 * round value·100 half-to-even. Independent of formatFixed2's toFixed-based shortcut.
 */
function exactFixed2(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0);
  const lo = view.getUint32(4);
  const sign = hi >>> 31 ? '-' : '';
  const exp = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let e: number;
  if (exp === 0) {
    e = -1074;
  } else {
    mant |= 1n << 52n;
    e = exp - 1075;
  }
  // value = mant · 2^e; scaled = value · 100 = num / den
  let num = mant * 100n;
  let den = 1n;
  if (e >= 0) num <<= BigInt(e);
  else den <<= BigInt(-e);
  let q = num / den;
  const r2 = (num % den) * 2n;
  if (r2 > den || (r2 === den && q % 2n === 1n)) q += 1n;
  const digits = q.toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

describe('formatFixed2', () => {
  // Values and answers taken from CPython 3 `'%.2f' % v`.
  it.each([
    [0.125, '0.12'],
    [0.995, '0.99'],
    [-0.004, '-0.00'],
    [0.375, '0.38'],
    [-0.125, '-0.12'],
    [-0.375, '-0.38'],
    [1.125, '1.12'],
    [1.005, '1.00'],
    [2.675, '2.67'],
    [0.005, '0.01'],
    [0.015, '0.01'],
    [0.025, '0.03'],
    [0.045, '0.04'],
    [99.995, '100.00'],
    [0.71, '0.71'],
    [0.8, '0.80'],
    [0, '0.00'],
    [-0, '-0.00'],
    [5e-324, '0.00'],
    [123456789.125, '123456789.12'],
    [4503599627370495.5, '4503599627370495.50'],
    [1e21, '1000000000000000000000.00'],
    [1e22, '10000000000000000000000.00'],
  ])('formats %p as Python does (%s)', (x, want) => {
    expect(formatFixed2(x)).toBe(want);
  });

  it('differs from toFixed exactly where Python breaks ties to even', () => {
    expect((0.125).toFixed(2)).toBe('0.13');
    expect(formatFixed2(0.125)).toBe('0.12');
  });

  it('spells non-finite values like Python', () => {
    expect(formatFixed2(NaN)).toBe('nan');
    expect(formatFixed2(Infinity)).toBe('inf');
    expect(formatFixed2(-Infinity)).toBe('-inf');
  });

  it('writes the exact expansion of huge values', () => {
    expect(formatFixed2(1.5e300)).toBe(exactFixed2(1.5e300));
    expect(formatFixed2(1.5e300).startsWith('15000000000000000787571403828066')).toBe(true);
  });

  it('agrees with the exact half-even oracle on arbitrary doubles', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        expect(formatFixed2(x)).toBe(exactFixed2(x));
      }),
      { numRuns: 2000 },
    );
  });

  it('agrees with the oracle on every odd multiple of 1/8 (the exact ties)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (k) => {
        const x = (2 * k + 1) / 8;
        expect(formatFixed2(x)).toBe(exactFixed2(x));
      }),
      { numRuns: 1000 },
    );
  });
});

describe('pyRound', () => {
  it.each([
    [1626.5, 1626],
    [1627.5, 1628],
    [2.5, 2],
    [-2.5, -2],
    [0.49999999999999994, 0],
    [1625, 1625],
    [6502 / 4, 1626],
    [6506 / 4, 1626],
    [3.7, 4],
    [-3.7, -4],
  ])('rounds %p to %p (half to even)', (x, want) => {
    expect(pyRound(x)).toBe(want);
  });

  it('rounds -0.5 to zero', () => {
    expect(pyRound(-0.5) === 0).toBe(true);
  });

  it('differs from Math.round on halves', () => {
    expect(Math.round(1626.5)).toBe(1627);
    expect(pyRound(1626.5)).toBe(1626);
  });

  it('refuses non-finite input', () => {
    expect(() => pyRound(NaN)).toThrow(RangeError);
    expect(() => pyRound(Infinity)).toThrow(RangeError);
  });
});

describe('pyStrip', () => {
  it('strips the separators Python treats as whitespace and JavaScript does not', () => {
    expect(pyStrip('\x1c\x1d\x1e\x1f a \x85')).toBe('a');
    expect('\x1c a \x85'.trim()).toBe('\x1c a \x85');
  });

  it('keeps U+FEFF, which JavaScript trim() removes', () => {
    expect(pyStrip('\ufeffa\ufeff')).toBe('\ufeffa\ufeff');
    expect('\ufeffa\ufeff'.trim()).toBe('a');
  });

  it('stops at the first non-whitespace character from each end', () => {
    expect(pyStrip('\x1c\x1d a \x85\ufeff')).toBe('a \x85\ufeff');
  });

  it('has one-sided variants', () => {
    expect(pyLstrip(' \u3000\x1fa ')).toBe('a ');
    expect(pyRstrip(' a\u2028\x85\t')).toBe(' a');
    expect(pyStrip('')).toBe('');
    expect(pyStrip(' \n\t ')).toBe('');
  });
});

describe('pySplitlines', () => {
  it('splits on every Python line boundary, CRLF once', () => {
    expect(pySplitlines('a\r\nb\rc\nd\x0be\x0cf\x1cg\x85h\u2028i\x1fj')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i\x1fj']);
  });

  it('drops the empty piece after a trailing break only', () => {
    expect(pySplitlines('a\n')).toEqual(['a']);
    expect(pySplitlines('a\n\n')).toEqual(['a', '']);
    expect(pySplitlines('\n')).toEqual(['']);
    expect(pySplitlines('')).toEqual([]);
  });
});

describe('code points', () => {
  it('counts astral characters once', () => {
    expect(codePointLength('a😀中')).toBe(3);
    expect('a😀中'.length).toBe(4);
  });

  it('cuts without splitting a surrogate pair', () => {
    expect(codePointPrefix('😀😀😀', 2)).toBe('😀😀');
    expect(codePointPrefix('ab', 5)).toBe('ab');
    expect(codePointPrefix('ab', 0)).toBe('');
  });

  it('cuts to exactly n code points for any string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.nat(40), (s, n) => {
        const p = codePointPrefix(s, n);
        expect(s.startsWith(p)).toBe(true);
        expect(codePointLength(p)).toBe(Math.min(n, codePointLength(s)));
      }),
    );
  });
});

describe('pyCollapseWhitespace', () => {
  it('joins on single spaces like " ".join(s.split())', () => {
    expect(pyCollapseWhitespace('  a\n\t b\x1f\x85c  ')).toBe('a b c');
    expect(pyCollapseWhitespace('a\ufeffb')).toBe('a\ufeffb');
  });
});
