/**
 * Passage chunking (DESIGN §5, retrieve-contract "passages are chunks of at most about 512
 * estimated tokens, split at headings and paragraphs"). Sizes use the context-contract §5.1
 * estimator, the one every budget in the mesh uses, so a passage's size here is its size there.
 */
import { estimateQuarters, quarterWeight } from '@ctxmesh/kernel';

/** Largest passage, in estimated tokens. */
export const MAX_PASSAGE_TOKENS = 512;

/** A piece of text and the separator that joins it to the piece before it. */
interface Unit {
  text: string;
  /** `\n\n` between paragraphs and sections, `\n` between lines, ` ` between words, `` inside a word. */
  sep: string;
  /** Quarter-tokens of `text` (the estimator is additive over concatenation). */
  q: number;
  /** True when the unit starts with a markdown heading (a preferred passage start). */
  heading: boolean;
  /** 0 for whole sections (packed together); k for the pieces of the k-th section that had to be split. */
  group: number;
}

const HEADING = /^#{1,6}[ \t]/;
const FENCE = /^[ \t]{0,3}(```|~~~)/;
/** True for the UTF-16 units JavaScript's `\s` matches. */
function isSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 32 ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/**
 * The words of a line, each with the whitespace after it. A scan rather than a regex: V8's
 * regex engine overflows its stack on one `\S+` match of millions of characters.
 */
function* wordsOf(line: string): Generator<string> {
  const n = line.length;
  let i = 0;
  while (i < n) {
    const start = i;
    while (i < n && !isSpace(line.charCodeAt(i))) i++;
    while (i < n && isSpace(line.charCodeAt(i))) i++;
    yield line.slice(start, i);
  }
}

function unit(text: string, sep: string, heading = false): Unit {
  return { text, sep, q: estimateQuarters(text), heading, group: 0 };
}

/**
 * Split lines into blocks at a boundary predicate, never inside a fenced code block (a
 * heading-like `# comment` line in a shell snippet is not a heading).
 */
function blocks(lines: string[], startsBlock: (line: string) => boolean, isSeparator: (line: string) => boolean): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let inFence = false;
  for (const line of lines) {
    if (!inFence && isSeparator(line)) {
      if (cur.length > 0) out.push(cur);
      cur = [];
      continue;
    }
    if (!inFence && startsBlock(line) && cur.length > 0) {
      out.push(cur);
      cur = [];
    }
    cur.push(line);
    if (FENCE.test(line)) inFence = !inFence;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Units of one overlong line: its words, and a word still too long cut at code points. Lazy,
 * so a 1 MB line of 150,000 words never exists as an array of words or of units.
 */
function* splitLine(line: string, maxQ: number): Generator<Unit> {
  let sep = '\n';
  for (const w of wordsOf(line)) {
    const word = w.trimEnd();
    if (word === '') continue;
    const wu = unit(word, sep);
    sep = ' ';
    if (wu.q <= maxQ) {
      yield wu;
      continue;
    }
    // One "word" above the limit (CJK prose, a blob): cut at code points, by slicing (a
    // string per code point made a 32 MB blob cost seconds and gigabytes).
    let start = 0;
    let q = 0;
    let pieceSep = wu.sep;
    for (let i = 0; i < word.length; ) {
      const cp = word.codePointAt(i)!;
      const width = cp > 0xffff ? 2 : 1;
      const cq = quarterWeight(cp);
      if (q + cq > maxQ && i > start) {
        yield { text: word.slice(start, i), sep: pieceSep, q, heading: false, group: 0 };
        pieceSep = '';
        start = i;
        q = 0;
      }
      q += cq;
      i += width;
    }
    if (start < word.length) yield { text: word.slice(start), sep: pieceSep, q, heading: false, group: 0 };
  }
}

/** Units of a block above the limit: its lines, and overlong lines split further. */
function* splitBlock(lines: string[], maxQ: number): Generator<Unit> {
  for (const line of lines) {
    const text = line.trimEnd();
    if (text.trim() === '') continue;
    const u = unit(text, '\n', HEADING.test(text));
    if (u.q <= maxQ) yield u;
    else yield* splitLine(text, maxQ);
  }
}

/**
 * The units of a body above the limit, in order: sections that fit whole, else their
 * paragraphs, lines, words and code points (see {@link chunkPassages}).
 */
function* unitsOf(body: string, maxQ: number): Generator<Unit> {
  const lines = body.split(/\r?\n/);
  let split = 0;
  for (const section of blocks(lines, (l) => HEADING.test(l), () => false)) {
    const sText = section.join('\n').trim();
    if (sText === '') continue;
    const su = unit(sText, '\n\n', HEADING.test(sText));
    if (su.q <= maxQ) {
      yield su;
      continue;
    }
    // A section above the limit gets passages of its own: its pieces never share a passage
    // with a neighbouring section.
    const group = ++split;
    let firstPara = true;
    for (const para of blocks(section, () => false, (l) => l.trim() === '')) {
      const pText = para.join('\n').trim();
      if (pText === '') continue;
      const pu = unit(pText, '\n\n', firstPara && su.heading);
      firstPara = false;
      if (pu.q <= maxQ) {
        yield { ...pu, group };
        continue;
      }
      let first = true;
      for (const u of splitBlock(para, maxQ)) {
        yield { ...u, group, sep: first ? '\n\n' : u.sep };
        first = false;
      }
    }
  }
}

/**
 * Split a document body into passages of at most `maxTokens` estimated tokens: at headings
 * first (outside code fences), then paragraphs, then lines, then words, then code points.
 * Sections that fit are packed together up to the limit (a heading starts a new passage once
 * the current one is at least half full); a section that does not fit is cut into passages of
 * its own, so no passage mixes the tail of one long section with the start of the next.
 * Passages are trimmed; blank ones are dropped.
 * @param text the prepared body (trimmed; memory metadata comment removed)
 * @param maxTokens limit per passage, estimated tokens @default 512
 * @returns the passages in document order (one passage, the text itself, when it fits)
 */
export function chunkPassages(text: string, maxTokens = MAX_PASSAGE_TOKENS): string[] {
  const body = text.trim();
  if (body === '') return [];
  const maxQ = Math.max(1, maxTokens) * 4;
  if (estimateQuarters(body) <= maxQ) return [body];

  const passages: string[] = [];
  let cur = '';
  let curQ = 0;
  let curGroup = 0;
  for (const u of unitsOf(body, maxQ)) {
    if (cur === '') {
      cur = u.text;
      curQ = u.q;
      curGroup = u.group;
      continue;
    }
    const joinedQ = curQ + estimateQuarters(u.sep) + u.q;
    if (u.group !== curGroup || joinedQ > maxQ || (u.heading && curQ * 2 >= maxQ)) {
      passages.push(cur);
      cur = u.text;
      curQ = u.q;
      curGroup = u.group;
    } else {
      cur += u.sep + u.text;
      curQ = joinedQ;
    }
  }
  if (cur !== '') passages.push(cur);
  return passages.map((p) => p.trim()).filter((p) => p !== '');
}
