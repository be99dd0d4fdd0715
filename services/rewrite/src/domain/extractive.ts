/**
 * The extractive digest: what `rewrite:true` gives when no model is configured. The served
 * entries' texts are split into sentences (English and Chinese punctuation), each sentence is
 * scored against the query with the lexical features every other lexical signal in ctxmesh
 * uses (`@ctxmesh/embedder`), and the best ones become cited bullets in the shape a model
 * digest has, so they pass the same normalisation and citation allowlist.
 */
import { codePointLength, codePointPrefix, pyCollapseWhitespace } from '@ctxmesh/kernel';
import { isCjkChar, LexicalEmbedder } from '@ctxmesh/embedder';

/**
 * Lowest score a sentence needs to become a bullet (exclusive): the cosine of its lexical
 * feature bag with the query's. The bags are compared exactly (no hashing), so a sentence
 * sharing nothing with the query scores 0, never collision noise. Measured on short queries:
 * sentences that share only character trigrams of different words ("commander" for
 * "command", "development" for "deployment") score 0.02–0.1; sharing one content word or CJK
 * bigram scores 0.15–0.35; a sentence that states the answer scores 0.45 and more. 0.1 keeps
 * the accidental overlaps out and any shared word in.
 */
export const EXTRACTIVE_SCORE_FLOOR = 0.1;
/** Most bullets taken from one entry (one when there are enough entries to fill the digest). */
export const MAX_BULLETS_PER_ENTRY = 2;
/** Maximum code points of one bullet (the normalisation's cut, context-contract §8.2). */
const MAX_BULLET_CHARS = 500;
/** Sentences shorter than this many code points carry no fact worth a bullet ("OK.", "是。"). */
const MIN_SENTENCE_CHARS = 4;

/** A served entry offered to the digest. */
export interface ExtractiveSource {
  /** Node URI (cited verbatim). */
  uri: string;
  /** Entry text (the served tier). */
  text: string;
}

/** One chosen sentence. */
export interface ExtractiveBullet {
  /** URI of the entry it came from. */
  uri: string;
  /** The sentence, whitespace collapsed. */
  sentence: string;
  /** Cosine with the query, 0..1. */
  score: number;
  /** The bullet line: `- <sentence> source: <uri>` (`来源：` for a Chinese sentence). */
  line: string;
}

/** Input of {@link extractiveDigest}. */
export interface ExtractiveInput {
  /** The query. */
  query: string;
  /** Served entries, in served order. */
  sources: readonly ExtractiveSource[];
  /** URIs a bullet may cite (entries outside it are skipped). */
  allowedUris: ReadonlySet<string>;
  /** Most bullets. */
  maxBullets: number;
}

// ---------------------------------------------------------------------------------------------
// Sentences

const CJK_STOPS = new Set(['。', '！', '？', '；', '…']);
const LATIN_STOPS = new Set(['.', '!', '?']);
const CLOSERS = new Set(['"', "'", '”', '’', ')', '）', '」', '』', ']', '】']);
// "e.g. the" is not the end of a sentence.
const ABBREVIATIONS = /(?:^|\s)(?:e\.g|i\.e|etc|vs|cf|mr|mrs|ms|dr|st|no|fig)\.$/i;

/** Markdown block prefixes stripped from a line: quote, list item, numbered item, task box. */
const BLOCK_PREFIX = /^(?:>\s*)*(?:(?:[-*+•]|\d{1,3}[.)])\s+)?(?:\[[ xX]\]\s+)?/;

/** Split one block of text at sentence ends (`.`, `!`, `?` before a space; `。！？；…` anywhere). */
function splitBlock(block: string): string[] {
  const out: string[] = [];
  const cps = Array.from(block);
  let cur = '';
  for (let i = 0; i < cps.length; i++) {
    const ch = cps[i];
    cur += ch;
    const latinEnd = LATIN_STOPS.has(ch) && (i + 1 === cps.length || /\s/.test(cps[i + 1]) || CLOSERS.has(cps[i + 1]));
    if (!CJK_STOPS.has(ch) && !latinEnd) continue;
    if (latinEnd && ch === '.' && ABBREVIATIONS.test(cur)) continue;
    // Closing quotes and brackets belong to the sentence they end.
    while (i + 1 < cps.length && (CLOSERS.has(cps[i + 1]) || CJK_STOPS.has(cps[i + 1]) || LATIN_STOPS.has(cps[i + 1]))) cur += cps[++i];
    out.push(cur);
    cur = '';
  }
  if (cur.trim()) out.push(cur);
  return out;
}

/** True when joining `a` and `b` needs no space (a CJK line wrapped mid-sentence). */
function cjkJoin(a: string, b: string): boolean {
  const last = Array.from(a).at(-1) ?? '';
  const first = Array.from(b)[0] ?? '';
  return isCjkChar(last) && isCjkChar(first);
}

/**
 * Sentences of an entry text, in order, whitespace collapsed. Front matter, HTML comments,
 * fenced code, headings, table rules and sentences citing `viking://` URIs are left out (a
 * quoted citation could fall outside the allowlist and cost the bullet). Consecutive plain
 * lines are one paragraph; list items, quotes and table rows are blocks of their own.
 */
export function splitSentences(text: string): string[] {
  let body = text.replace(/<!--[\s\S]*?-->/g, ' ');
  body = body.replace(/^\uFEFF?---\r?\n[\s\S]*?\r?\n---[ \t]*(?:\r?\n|$)/, '');
  const blocks: string[] = [];
  let para = '';
  let inFence = false;
  const flush = () => {
    if (para.trim()) blocks.push(para);
    para = '';
  };
  for (const raw of body.split(/\r?\n/)) {
    const line = raw.trim();
    if (/^(```|~~~)/.test(line)) {
      flush();
      inFence = !inFence;
      continue;
    }
    if (inFence) continue;
    if (line === '' || /^#{1,6}(\s|$)/.test(line) || /^[|:\-\s=*_]+$/.test(line)) {
      flush();
      continue;
    }
    const stripped = line.replace(BLOCK_PREFIX, '');
    if (stripped !== line || line.startsWith('|')) {
      flush();
      blocks.push(line.startsWith('|') ? stripped.replace(/\|/g, ' ') : stripped);
      continue;
    }
    para = para === '' ? line : cjkJoin(para, line) ? para + line : `${para} ${line}`;
  }
  flush();
  const out: string[] = [];
  for (const block of blocks) {
    for (const s of splitBlock(block)) {
      const sentence = pyCollapseWhitespace(s);
      if (codePointLength(sentence) < MIN_SENTENCE_CHARS || sentence.includes('viking://')) continue;
      out.push(sentence);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Scoring

const lexical = new LexicalEmbedder();

/** A text's lexical feature bag: feature → weight × (1 + ln count), as the LexicalEmbedder weighs it. */
export function featureBag(text: string): Map<string, number> {
  const bag = new Map<string, number>();
  for (const [key, { weight, count }] of lexical.features(text)) bag.set(key, weight * (1 + Math.log(count)));
  return bag;
}

/** Exact cosine of two feature bags (0 when either is empty). */
export function bagCosine(a: Map<string, number>, b: Map<string, number>): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a];
  let dot = 0;
  for (const [k, v] of small) {
    const w = large.get(k);
    if (w !== undefined) dot += v * w;
  }
  if (dot === 0) return 0;
  let na = 0;
  let nb = 0;
  for (const v of a.values()) na += v * v;
  for (const v of b.values()) nb += v * v;
  return dot / Math.sqrt(na * nb);
}

/** The bullet line for a sentence, cut so that the whole line fits the normalisation's 500 code points. */
export function bulletLine(sentence: string, uri: string): string | null {
  const chinese = Array.from(sentence).some(isCjkChar);
  const suffix = chinese ? ` 来源：${uri}` : ` source: ${uri}`;
  const room = MAX_BULLET_CHARS - 2 - codePointLength(suffix);
  if (room < MIN_SENTENCE_CHARS) return null;
  const body = codePointLength(sentence) <= room ? sentence : `${codePointPrefix(sentence, room - 1)}…`;
  return `- ${body}${suffix}`;
}

interface Candidate {
  entry: number;
  order: number;
  uri: string;
  sentence: string;
  score: number;
}

/**
 * Choose the bullets of an extractive digest: every sentence of every allowed entry is
 * scored against the query; sentences at or below {@link EXTRACTIVE_SCORE_FLOOR} and repeats
 * of an already chosen sentence are dropped; the rest are taken in score order (ties: served
 * order, then order in the text) up to `maxBullets`, at most {@link MAX_BULLETS_PER_ENTRY}
 * per entry — or one per entry when enough entries have a candidate to fill the digest.
 * Deterministic: the same input gives the same bullets.
 * @returns the bullets, best first (empty when nothing scored above the floor)
 */
export function extractiveDigest(input: ExtractiveInput): ExtractiveBullet[] {
  const limit = Math.max(1, Math.trunc(input.maxBullets) || 1);
  const q = featureBag(input.query);
  if (q.size === 0) return [];
  const candidates: Candidate[] = [];
  const entriesWithCandidates = new Set<number>();
  input.sources.forEach((src, entry) => {
    if (!input.allowedUris.has(src.uri) || !src.text) return;
    splitSentences(src.text).forEach((sentence, order) => {
      const score = bagCosine(q, featureBag(sentence));
      if (score <= EXTRACTIVE_SCORE_FLOOR) return;
      candidates.push({ entry, order, uri: src.uri, sentence, score });
      entriesWithCandidates.add(entry);
    });
  });
  candidates.sort((a, b) => b.score - a.score || a.entry - b.entry || a.order - b.order);
  const perEntry = entriesWithCandidates.size >= limit ? 1 : MAX_BULLETS_PER_ENTRY;
  const taken = new Map<number, number>();
  const seen = new Set<string>();
  const out: ExtractiveBullet[] = [];
  for (const c of candidates) {
    if (out.length >= limit) break;
    if ((taken.get(c.entry) ?? 0) >= perEntry || seen.has(c.sentence)) continue;
    const line = bulletLine(c.sentence, c.uri);
    if (line === null) continue;
    taken.set(c.entry, (taken.get(c.entry) ?? 0) + 1);
    seen.add(c.sentence);
    out.push({ uri: c.uri, sentence: c.sentence, score: c.score, line });
  }
  return out;
}
