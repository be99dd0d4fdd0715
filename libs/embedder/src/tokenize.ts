/**
 * The one text segmenter shared by the lexical embedder, the embedded inverted index and the
 * Qdrant adapter's sparse vectors, so that every lexical signal in ctxmesh sees the same terms.
 *
 * - Text is NFKC-normalised and case-folded (full-width letters and digits become ASCII,
 *   compatibility ideographs their unified form).
 * - Space-separated scripts are split into words at anything that is not a letter, digit or
 *   combining mark; apostrophes inside words are dropped (`don't` → `dont`, `Bart’s` → `barts`).
 * - CJK runs (Han, kana, Hangul) have no spaces, so they become character unigrams and bigrams
 *   (and trigrams for the embedder). A few high-frequency particles (的, 了, 吗 …) split runs,
 *   because a bigram across a particle is almost never a word.
 * - Words get a light, deterministic English stemmer (Porter steps 1a–1c) and stop-word removal.
 */

/** One normalised run of text. */
export interface Segment {
  /** `word` for a token of a space-separated script (already stemmed unless asked otherwise), `cjk` for a CJK run. */
  kind: 'word' | 'cjk';
  /** The normalised text of the run (a word's surface form, unstemmed; a CJK run's characters). */
  text: string;
  /** For words: the source spelled it with an upper-case first letter (a name, title or acronym). */
  capitalized?: boolean;
}

// Han (incl. extension A and compatibility ideographs), Hiragana, Katakana (+ phonetic
// extensions and the half-width forms NFKC leaves alone), Hangul syllables and jamo.
const CJK_RE = /[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]|[\ud840-\ud87e][\udc00-\udfff]/;
const WORD_CHAR_RE = /[\p{L}\p{N}\p{M}]/u;
const APOSTROPHES = new Set(["'", '\u2019', '\u02bc']);

/** Particles that end a CJK run (they almost never start or end a content word). */
const CJK_BREAKERS = new Set('的了吗呢吧啊呀哦嗯哈啦嘛哇呗噢喔'.split(''));

/** CJK characters too frequent to be useful alone; a bigram made only of them is dropped too. */
const CJK_STOP = new Set(
  (
    '的了是在和与及也都就还又吗呢吧啊呀哦嗯哈啦嘛着过得地这那个些么什我你他她它们您咱自己一不没很太更最' +
    '会能要想说让把被给对从向到为以而但如果所因此其之于有里样怎哪谁啥非常真好'
  ).split(''),
);

/**
 * English stop words (function words plus conversational fillers). They carry no topic,
 * and in a hashed vector without IDF they would dominate every long query.
 */
const EN_STOP = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves im ive id ill youre youve youll youd hes shes its were theyre weve ' +
    'dont doesnt didnt cant couldnt wont wouldnt isnt arent wasnt werent shouldnt thats whats lets also us may might must ' +
    'shall oh ah ahh hey hi hello wow um uh hmm haha hahaha yeah yes yep ok okay well really just sure'
  ).split(' '),
);

/** Lower-case and NFKC-normalise `text` (the first step of every tokenisation). */
export function normalizeText(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

/** True when the code point starting at `ch` is a CJK character (Han, kana or Hangul). */
export function isCjkChar(ch: string): boolean {
  return CJK_RE.test(ch);
}

/**
 * Split text into word and CJK segments, normalised as {@link normalizeText} does. Punctuation,
 * symbols and spaces separate segments and are dropped. Words keep their (lower-cased) surface
 * form here, and whether the source capitalised them.
 */
export function segmentText(text: string): Segment[] {
  const out: Segment[] = [];
  // Case is folded per word, not up front, so each word can remember its capitalisation.
  const norm = text.normalize('NFKC');
  let word = '';
  let cjk = '';
  const flushWord = (): void => {
    if (word !== '') {
      const lower = word.toLowerCase();
      const first = word[0];
      out.push({ kind: 'word', text: lower, capitalized: first !== first.toLowerCase() });
    }
    word = '';
  };
  const flushCjk = (): void => {
    if (cjk !== '') out.push({ kind: 'cjk', text: cjk });
    cjk = '';
  };
  // Iterating by code point keeps astral Han (extension B+) characters whole.
  for (const ch of norm) {
    const code = ch.charCodeAt(0);
    if (code < 0x80) {
      // ASCII fast path (most of any Latin-script text), same classes as below: letters and
      // digits join a word, the ASCII apostrophe is dropped inside one, anything else separates.
      if ((code >= 0x61 && code <= 0x7a) || (code >= 0x41 && code <= 0x5a) || (code >= 0x30 && code <= 0x39)) {
        flushCjk();
        word += ch;
      } else if (code === 0x27 && word !== '') {
        continue;
      } else {
        flushWord();
        flushCjk();
      }
      continue;
    }
    if (isCjkChar(ch)) {
      flushWord();
      if (CJK_BREAKERS.has(ch)) flushCjk();
      else cjk += ch;
    } else if (WORD_CHAR_RE.test(ch)) {
      flushCjk();
      word += ch;
    } else if (APOSTROPHES.has(ch) && word !== '') {
      // "don't" → "dont": the apostrophe joins, it never splits.
      continue;
    } else {
      flushWord();
      flushCjk();
    }
  }
  flushWord();
  flushCjk();
  return out;
}

/** True for an English stop word (after normalisation, before stemming). */
export function isStopWord(word: string): boolean {
  return EN_STOP.has(word);
}

/** True for a CJK character that carries no topic on its own. */
export function isCjkStopChar(ch: string): boolean {
  return CJK_STOP.has(ch);
}

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u']);

function isConsonant(w: string, i: number): boolean {
  const c = w[i];
  if (VOWELS.has(c)) return false;
  if (c === 'y') return i === 0 ? true : !isConsonant(w, i - 1);
  return true;
}

/** Porter's measure m of a stem: the number of vowel-consonant sequences. */
function measure(stem: string): number {
  let m = 0;
  let i = 0;
  const n = stem.length;
  while (i < n && isConsonant(stem, i)) i++;
  while (i < n) {
    while (i < n && !isConsonant(stem, i)) i++;
    if (i >= n) break;
    while (i < n && isConsonant(stem, i)) i++;
    m++;
  }
  return m;
}

function hasVowel(stem: string): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(w: string): boolean {
  const n = w.length;
  return n >= 2 && w[n - 1] === w[n - 2] && isConsonant(w, n - 1);
}

/** consonant-vowel-consonant ending, the last consonant not w, x or y. */
function endsCvc(w: string): boolean {
  const n = w.length;
  if (n < 3) return false;
  if (!isConsonant(w, n - 3) || isConsonant(w, n - 2) || !isConsonant(w, n - 1)) return false;
  const c = w[n - 1];
  return c !== 'w' && c !== 'x' && c !== 'y';
}

/** Stems already computed, by word: a text's vocabulary repeats, and stemming is the bulk of tokenising English. */
const STEMS = new Map<string, string>();
/** Words {@link STEMS} holds before it starts over (bounds its memory at a few MB). */
const STEM_MEMO_WORDS = 50_000;

/**
 * Light English stemmer: Porter's steps 1a, 1b, 1c and 5a (plurals, -ed, -ing, final -y, final -e), which
 * conflate the inflections that matter for recall without the over-stemming of the later steps.
 * Words of non-Latin scripts, words with digits and words of ≤ 2 letters are returned unchanged.
 * Memoised (a pure function of the word).
 * @param word a normalised (lower-case) word
 */
export function stemWord(word: string): string {
  let stem = STEMS.get(word);
  if (stem === undefined) {
    stem = porterLight(word);
    if (STEMS.size >= STEM_MEMO_WORDS) STEMS.clear();
    STEMS.set(word, stem);
  }
  return stem;
}

/** {@link stemWord} without the memo. */
function porterLight(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let w = word;
  // Step 1a: plurals.
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies')) w = w.slice(0, -2);
  else if (!w.endsWith('ss') && w.endsWith('s') && w.length > 3) w = w.slice(0, -1);
  // Step 1b: -eed, -ed, -ing.
  let fixup = false;
  if (w.endsWith('eed')) {
    if (measure(w.slice(0, -3)) > 0) w = w.slice(0, -1);
  } else if (w.endsWith('ed') && hasVowel(w.slice(0, -2))) {
    w = w.slice(0, -2);
    fixup = true;
  } else if (w.endsWith('ing') && hasVowel(w.slice(0, -3))) {
    w = w.slice(0, -3);
    fixup = true;
  }
  if (fixup) {
    if (w.endsWith('at') || w.endsWith('bl') || w.endsWith('iz')) w += 'e';
    else if (endsDoubleConsonant(w) && !/[lsz]$/.test(w)) w = w.slice(0, -1);
    else if (measure(w) === 1 && endsCvc(w)) w += 'e';
  }
  // Step 1c: final y after a vowel-bearing stem.
  if (w.endsWith('y') && w.length > 2 && hasVowel(w.slice(0, -1))) w = w.slice(0, -1) + 'i';
  // Step 5a: a final e goes, so that dance/danced/dancing share one stem.
  if (w.endsWith('e') && w.length > 3) {
    const m = measure(w.slice(0, -1));
    if (m > 1 || (m === 1 && !endsCvc(w.slice(0, -1)))) w = w.slice(0, -1);
  }
  return w;
}

/**
 * Terms of a text for lexical (BM25) matching, split by weight class:
 * - `main`: stemmed non-stop words and CJK bigrams (a one-character CJK run contributes its
 *   character here instead, so a one-character query still matches);
 * - `minor`: CJK unigrams (low weight: they give partial credit across different words that
 *   share a character, such as 跳舞 / 舞蹈).
 * Terms appear in text order with repeats (term frequency is the count).
 */
export interface LexicalTerms {
  /** Stemmed words and CJK bigrams. */
  main: string[];
  /** CJK single characters. */
  minor: string[];
  /** The distinct `main` terms the text capitalises somewhere (names, titles, acronyms). */
  capitalized: string[];
}

/**
 * Lexical terms of `text` ({@link LexicalTerms}). Deterministic; the same function feeds the
 * embedded inverted index, the Qdrant sparse vectors and the lexical query.
 */
export function lexicalTerms(text: string): LexicalTerms {
  const main: string[] = [];
  const minor: string[] = [];
  const capitalized = new Set<string>();
  for (const seg of segmentText(text)) {
    if (seg.kind === 'word') {
      if (isStopWord(seg.text)) continue;
      const stem = stemWord(seg.text);
      main.push(stem);
      if (seg.capitalized) capitalized.add(stem);
      continue;
    }
    const chars = Array.from(seg.text);
    if (chars.length === 1) {
      if (!CJK_STOP.has(chars[0])) main.push(chars[0]);
      continue;
    }
    for (let i = 0; i < chars.length; i++) {
      if (!CJK_STOP.has(chars[i])) minor.push(chars[i]);
      if (i + 1 < chars.length && !(CJK_STOP.has(chars[i]) && CJK_STOP.has(chars[i + 1]))) {
        main.push(chars[i] + chars[i + 1]);
      }
    }
  }
  return { main, minor, capitalized: [...capitalized] };
}

/** How often each {@link lexicalTerms} term occurs in a text, by class. */
export interface LexicalTermCounts {
  /** Stemmed words and CJK bigrams (and one-character CJK runs). */
  main: Map<string, number>;
  /** CJK single characters. */
  minor: Map<string, number>;
}

/**
 * The terms of {@link lexicalTerms} counted per class, each class's terms in the order they
 * first occur — what counting `lexicalTerms(text).main` and `.minor` gives (the counts the
 * lexical indexes store per row), without building the term lists.
 */
export function lexicalTermCounts(text: string): LexicalTermCounts {
  const main = new Map<string, number>();
  const minor = new Map<string, number>();
  for (const seg of segmentText(text)) {
    if (seg.kind === 'word') {
      if (isStopWord(seg.text)) continue;
      const stem = stemWord(seg.text);
      main.set(stem, (main.get(stem) ?? 0) + 1);
      continue;
    }
    const chars = Array.from(seg.text);
    if (chars.length === 1) {
      if (!CJK_STOP.has(chars[0])) main.set(chars[0]!, (main.get(chars[0]!) ?? 0) + 1);
      continue;
    }
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i]!;
      if (!CJK_STOP.has(c)) minor.set(c, (minor.get(c) ?? 0) + 1);
      if (i + 1 < chars.length && !(CJK_STOP.has(c) && CJK_STOP.has(chars[i + 1]!))) {
        const bigram = c + chars[i + 1];
        main.set(bigram, (main.get(bigram) ?? 0) + 1);
      }
    }
  }
  return { main, minor };
}

/**
 * Stable 32-bit hash of a string (FNV-1a over UTF-16 code units, then the murmur3 finaliser
 * for avalanche). Used for feature hashing and for the sparse-vector indices of lexical terms.
 * @returns an unsigned 32-bit integer
 */
export function hash32(s: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** The murmur3 32-bit finaliser {@link hash32} ends with (the lexical embedder hashes features piece by piece and finishes with it). */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A sparse lexical vector: parallel arrays of term ids ({@link hash32}) and weights. */
export interface SparseVector {
  /** Term ids, ascending and unique. */
  indices: number[];
  /** Sublinear term frequencies (`1 + ln tf`, scaled by the term class weight). */
  values: number[];
}

/**
 * Sparse lexical vector of `text` for engines that apply IDF themselves (Qdrant's `idf`
 * modifier): `main` terms weigh `1 + ln tf` (times `capitalizedWeight` for a capitalised
 * term), `minor` terms `minorWeight · (1 + ln tf)`. Two different terms hashing to the same id
 * have their weights added. The defaults match the embedded index's lexical leg.
 * @param minorWeight weight of CJK unigrams relative to main terms; @default 0.6
 * @param capitalizedWeight multiplier of a capitalised main term; @default 2
 */
export function sparseVector(text: string, minorWeight = 0.6, capitalizedWeight = 2): SparseVector {
  const { main, minor, capitalized } = lexicalTerms(text);
  const caps = new Set(capitalized);
  const tf = new Map<number, number>();
  const add = (terms: string[], w: number): void => {
    const counts = new Map<string, number>();
    for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
    for (const [t, c] of counts) {
      const id = hash32(t);
      const cw = w === 1 && caps.has(t) ? capitalizedWeight : 1;
      tf.set(id, (tf.get(id) ?? 0) + cw * w * (1 + Math.log(c)));
    }
  };
  add(main, 1);
  add(minor, minorWeight);
  const indices = [...tf.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((i) => tf.get(i) as number) };
}
