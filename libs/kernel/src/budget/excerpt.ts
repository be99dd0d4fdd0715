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

/**
 * Distinct query terms a text holds: a CJK pair anywhere; a word as a whole word, or, for a term
 * of four letters or more, as the start of one (`deploy` holds in `deployed`: no stemmer, but
 * the common inflections).
 */
export function termsIn(unit: string, terms: readonly string[]): number {
  const lower = unit.toLowerCase();
  const words = new Set(lower.match(/[\p{L}\p{N}]+/gu) ?? []);
  let n = 0;
  for (const t of terms) {
    if (words.has(t)) n++;
    else if ([...t].some((c) => isCjkCodePoint(c.codePointAt(0)!))) {
      if (lower.includes(t)) n++;
    } else if (t.length >= 4) {
      for (const w of words) {
        if (w.startsWith(t)) {
          n++;
          break;
        }
      }
    }
  }
  return n;
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
  const scores = units.map((u) => termsIn(u.text, terms));
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
