/**
 * Python string and number semantics that the context contract inherits from the reference
 * kernel (context-contract §4–§6, §11.2 item 9). JavaScript's built-ins differ in small ways
 * that change bytes on the wire, so every comparison-relevant operation goes through here.
 */

/**
 * The characters Python's `str.isspace()` (and therefore `str.strip()`, `str.split()` and the
 * regex class `\s` on `str` patterns) treats as whitespace, as a regex character-class body.
 * Differs from JavaScript's `\s`/`trim()`: includes U+001C–U+001F and U+0085, excludes U+FEFF.
 */
export const PY_WS_CLASS = '\\t\\n\\x0b\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/** Code points in {@link PY_WS_CLASS}, for the scanning helpers below. */
const PY_WS = new Set<number>([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680,
  0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** True when the UTF-16 unit `c` is Python whitespace (all of them are BMP characters). */
export function isPyWhitespace(c: number): boolean {
  return PY_WS.has(c);
}

/** Python `s.strip()` with no argument. */
export function pyStrip(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && PY_WS.has(s.charCodeAt(start))) start++;
  while (end > start && PY_WS.has(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** Python `s.lstrip()` with no argument. */
export function pyLstrip(s: string): string {
  let start = 0;
  while (start < s.length && PY_WS.has(s.charCodeAt(start))) start++;
  return start === 0 ? s : s.slice(start);
}

/** Python `s.rstrip()` with no argument. */
export function pyRstrip(s: string): string {
  let end = s.length;
  while (end > 0 && PY_WS.has(s.charCodeAt(end - 1))) end--;
  return end === s.length ? s : s.slice(0, end);
}

const PY_WS_RUN = new RegExp(`[${PY_WS_CLASS}]+`, 'g');

/** Python `" ".join(s.split())`: whitespace runs collapsed to one space, ends trimmed. */
export function pyCollapseWhitespace(s: string): string {
  return pyStrip(s).replace(PY_WS_RUN, ' ');
}

// \r\n must be tried before its parts so that one CRLF is one boundary, as in Python.
const PY_LINE_BREAK = /\r\n|[\n\r\x0b\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/**
 * Python `s.splitlines()` (no `keepends`): splits on \n, \r, \r\n, \v, \f, \x1c–\x1e, \x85,
 * U+2028 and U+2029; a trailing line break does not produce an empty last line; `""` → `[]`.
 */
export function pySplitlines(s: string): string[] {
  if (s === '') return [];
  const parts = s.split(new RegExp(PY_LINE_BREAK.source, 'g'));
  if (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Number of Unicode code points in `s` (Python `len(s)`). */
export function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * Python `s[:n]`: the first `n` code points of `s` (never splits a surrogate pair).
 * @param n code points to keep; `n <= 0` gives `""`
 */
export function codePointPrefix(s: string, n: number): string {
  if (n <= 0) return '';
  // Fast path: a string of at most n UTF-16 units has at most n code points.
  if (s.length <= n) return s;
  let count = 0;
  for (let i = 0; i < s.length; i++) {
    if (count === n) return s.slice(0, i);
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    count++;
  }
  return s;
}

/**
 * Python `"%.2f" % x`: two decimals, rounding the exact binary value half-to-even.
 *
 * `Number.prototype.toFixed` also rounds the exact binary value but breaks exact ties
 * upwards in magnitude (0.125 → "0.13" where Python gives "0.12"), drops the sign of −0,
 * switches to exponent notation at 1e21 and spells non-finite values differently; each of
 * those cases is handled here.
 */
export function formatFixed2(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (x === Infinity) return 'inf';
  if (x === -Infinity) return '-inf';
  if (Object.is(x, -0)) return '-0.00';
  const neg = x < 0;
  const a = neg ? -x : x;
  let body: string;
  if (a >= 1e21) {
    // Every double this large is an integer, so its exact decimal expansion is BigInt's.
    body = `${BigInt(a).toString()}.00`;
  } else if (Number.isInteger(a * 8) && !Number.isInteger(a * 4)) {
    // An exact tie at the third decimal means a is an odd multiple of 1/8, a = m/8 with m
    // odd (a·8 is exact: a power-of-two scale). In hundredths a = 25m/2 = k + ½ with
    // k = ⌊25m/2⌋; Python picks the even one of k and k+1. BigInt keeps this exact where
    // a·100 would round (a ≥ 2^53/100).
    const k = (BigInt(a * 8) * 25n) / 2n;
    const n = k % 2n === 0n ? k : k + 1n;
    const digits = n.toString().padStart(3, '0');
    body = `${digits.slice(0, -2)}.${digits.slice(-2)}`;
  } else {
    body = a.toFixed(2);
  }
  return neg ? `-${body}` : body;
}

/**
 * Python 3 `round(x)` for one argument: the nearest integer, exact halves to the even one.
 * `Math.round` sends halves up (1626.5 → 1627; Python gives 1626).
 * @throws RangeError for NaN or ±Infinity (Python raises ValueError/OverflowError)
 */
export function pyRound(x: number): number {
  if (!Number.isFinite(x)) throw new RangeError(`cannot round ${x}`);
  const f = Math.floor(x);
  const diff = x - f; // exact for doubles
  if (diff < 0.5) return f;
  if (diff > 0.5) return f + 1;
  return f % 2 === 0 ? f : f + 1;
}

/**
 * Python `int(x)` for a number (truncation toward zero); non-finite values give `NaN`
 * so that callers can apply their own fallback.
 */
export function pyInt(x: number): number {
  return Number.isFinite(x) ? Math.trunc(x) : NaN;
}
