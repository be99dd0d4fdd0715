/**
 * Query-biased excerpts (issue 20): for a long text, the sentences that carry the matched
 * evidence, instead of the whole text or a summary that may not mention what was asked.
 *
 * A text is cut into units — sentences, headings, list items, and code blocks kept whole — and
 * never inside one. Units are scored by the distinct query terms they hold (words of two or more
 * letters outside a small stop list, lower-cased; overlapping character pairs for CJK); the best
 * units are taken while they fit the target, then the unit after each taken one (an answer often
 * follows the line that names its subject), and the result keeps the text's order with `[…]`
 * where text was left out, so an excerpt never hides that it is one.
 *
 * Written here rather than taken from a package: the kernel has no dependencies, the rules are
 * a few dozen lines, and the unit boundaries must agree with the contract's neutralisation
 * (units are cut on the raw text; neutralising happens at render, as for any tier).
 */
import { type TokenizerName, countTokens, isCjkCodePoint } from './tokens';

/** What marks elided text inside an excerpt. */
export const ELISION = '[…]';

/** Words that carry no evidence on their own (English; CJK pairs need none). */
const STOP = new Set(
  'the and for are was were you your yours mine our ours his her hers its they them their this that these those with from into onto have has had not but can could would should will shall what when where which who whom whose why how does did doing done been being about over under again then than there here just also very much many more most some any all each other such only own same too out off per via its it is be do of to in on at by or an as if so no me my we he she us am'
    .split(' '),
);

/**
 * The query's terms: lower-cased words of at least two letters or digits outside the stop list,
 * and each overlapping pair of CJK characters (a single CJK character when it stands alone).
 */
export function queryTerms(query: string): string[] {
  const out = new Set<string>();
  for (const m of query.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0];
    const cps = [...w];
    if (cps.some((c) => isCjkCodePoint(c.codePointAt(0)!))) {
      // Runs of CJK become pairs; Latin parts of a mixed run stay words.
      let run: string[] = [];
      const flush = () => {
        if (run.length === 1) out.add(run[0]!);
        for (let i = 0; i + 1 < run.length; i++) out.add(run[i]! + run[i + 1]!);
        run = [];
      };
      let latin = '';
      for (const c of cps) {
        if (isCjkCodePoint(c.codePointAt(0)!)) {
          if (latin.length >= 2 && !STOP.has(latin)) out.add(latin);
          latin = '';
          run.push(c);
        } else {
          flush();
          latin += c;
        }
      }
      flush();
      if (latin.length >= 2 && !STOP.has(latin)) out.add(latin);
    } else if (cps.length >= 2 && !STOP.has(w)) out.add(w);
  }
  return [...out];
}

/** One unit of a text: where it starts and ends (exclusive), and whether a newline precedes it. */
interface Unit {
  text: string;
  /** True when the unit starts a line of the original text. */
  lineStart: boolean;
}

const FENCE = /^\s*(```|~~~)/;
// A sentence ends at . ! ? (followed by a space) or at a CJK full stop, question or exclamation mark.
const SENTENCE_END = /(?<=[.!?])\s+(?=\S)|(?<=[。！？])/u;

/** Cut a text into units: code blocks whole, each other line into its sentences. */
export function textUnits(text: string): Unit[] {
  const lines = text.split('\n');
  const units: Unit[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) {
      // A fenced block is one unit, through its closing fence (or the end of the text).
      let j = i + 1;
      while (j < lines.length && !FENCE.test(lines[j]!)) j++;
      units.push({ text: lines.slice(i, Math.min(j, lines.length - 1) + 1).join('\n'), lineStart: true });
      i = j;
      continue;
    }
    if (line.trim() === '') continue;
    const parts = line.split(SENTENCE_END).filter((p) => p.trim() !== '');
    parts.forEach((p, k) => units.push({ text: p.trim(), lineStart: k === 0 }));
  }
  return units;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;
const WORD = /^[\p{L}\p{N}]+$/u;

/** Whether the code point is a letter or a digit (what the words of a text are made of). */
function isWordCodePoint(cp: number | undefined): boolean {
  if (cp === undefined) return false;
  if (cp < 128) return (cp >= 97 && cp <= 122) || (cp >= 65 && cp <= 90) || (cp >= 48 && cp <= 57);
  return WORD_CHAR.test(String.fromCodePoint(cp));
}

/** The code point that ends just before UTF-16 index `i` (undefined at the start). */
function codePointBefore(s: string, i: number): number | undefined {
  if (i <= 0) return undefined;
  const lo = s.charCodeAt(i - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && i >= 2) {
    const hi = s.charCodeAt(i - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return s.codePointAt(i - 2);
  }
  return lo;
}

/** How a query term is looked for (see {@link termsIn}). */
type TermKind = 'cjk' | 'word' | 'prefix' | 'never';

/** How each term is looked for. */
function termKinds(terms: readonly string[]): TermKind[] {
  return terms.map((t): TermKind => {
    for (const c of t) if (isCjkCodePoint(c.codePointAt(0)!)) return 'cjk';
    // A word is a whole run of letters and digits: a term holding anything else is never one.
    if (!WORD.test(t)) return 'never';
    return t.length >= 4 ? 'prefix' : 'word';
  });
}

/** Whether lower-cased `lower` holds the term as {@link termsIn} counts it. */
function holds(lower: string, t: string, kind: TermKind): boolean {
  if (kind === 'never') return false;
  if (kind === 'cjk') return lower.includes(t);
  // A run of letters and digits starts at the match, and (for a whole word) ends with it.
  for (let at = lower.indexOf(t); at >= 0; at = lower.indexOf(t, at + 1)) {
    if (isWordCodePoint(codePointBefore(lower, at))) continue;
    if (kind === 'prefix' || !isWordCodePoint(lower.codePointAt(at + t.length))) return true;
  }
  return false;
}

/**
 * Distinct query terms a text holds: a CJK pair anywhere; a word as a whole word, or, for a term
 * of four letters or more, as the start of one (`deploy` holds in `deployed`: no stemmer, but
 * the common inflections). Words are the text's lower-cased runs of letters and digits; each
 * term is looked for where it occurs, without splitting the text into words.
 */
export function termsIn(unit: string, terms: readonly string[]): number {
  return terms.length === 0 ? 0 : countHeld(unit.toLowerCase(), terms, termKinds(terms));
}

function countHeld(lower: string, terms: readonly string[], kinds: readonly TermKind[]): number {
  let n = 0;
  for (let i = 0; i < terms.length; i++) if (holds(lower, terms[i]!, kinds[i]!)) n++;
  return n;
}

/** Whether a text holds any of the terms (`termsIn(text, terms) > 0`, stopping at the first). */
export function holdsAnyTerm(text: string, terms: readonly string[]): boolean {
  if (terms.length === 0) return false;
  const lower = text.toLowerCase();
  const kinds = termKinds(terms);
  for (let i = 0; i < terms.length; i++) if (holds(lower, terms[i]!, kinds[i]!)) return true;
  return false;
}

/** An excerpt and what it kept. */
export interface Excerpt {
  /** The excerpt's text: kept units in the text's order, `[…]` where text was left out. */
  text: string;
  /** Units kept, of all units. */
  kept: number;
  units: number;
}

/**
 * The query-biased excerpt of `text` within about `targetTokens` (in `tokenizer`), or null when
 * no unit holds a query term, or the excerpt would keep the whole text.
 */
export function excerptOf(text: string, terms: readonly string[], targetTokens: number, tokenizer: TokenizerName = 'estimate'): Excerpt | null {
  if (terms.length === 0 || text === '') return null;
  const units = textUnits(text);
  if (units.length < 2) return null;
  const kinds = termKinds(terms);
  const scores = units.map((u) => countHeld(u.text.toLowerCase(), terms, kinds));
  const order = scores.map((s, i) => [s, i] as const).filter(([s]) => s > 0).sort((a, b) => b[0] - a[0] || a[1] - b[1]);
  if (order.length === 0) return null;
  const cost = units.map((u) => countTokens(u.text, tokenizer) + 1);
  const keep = new Set<number>();
  let spent = 0;
  for (const [, i] of order) {
    if (keep.size > 0 && spent + cost[i]! > targetTokens) continue;
    keep.add(i);
    spent += cost[i]!;
  }
  // The unit after each matched one, while there is room: an answer often follows its subject.
  for (const i of [...keep].sort((a, b) => a - b)) {
    const next = i + 1;
    if (next < units.length && !keep.has(next) && spent + cost[next]! <= targetTokens) {
      keep.add(next);
      spent += cost[next]!;
    }
  }
  if (keep.size === units.length) return null;
  const kept = [...keep].sort((a, b) => a - b);
  let out = kept[0] === 0 ? '' : `${ELISION}\n`;
  kept.forEach((i, k) => {
    if (k > 0) out += i === kept[k - 1]! + 1 ? (units[i]!.lineStart ? '\n' : ' ') : `\n${ELISION}\n`;
    out += units[i]!.text;
  });
  if (kept[kept.length - 1] !== units.length - 1) out += `\n${ELISION}`;
  return { text: out, kept: kept.length, units: units.length };
}
