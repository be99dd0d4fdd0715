import { type Embedder, l2normalize } from './embedder';
import { fmix32, hash32, isCjkStopChar, isStopWord, segmentText, stemWord } from './tokenize';

/** Feature weights of the {@link LexicalEmbedder} (before sublinear tf and normalisation). */
export interface LexicalFeatureWeights {
  /** Stemmed non-stop word. @default 1 */
  word: number;
  /**
   * Multiplier of `word` for a word the text capitalises (names, titles, acronyms — in Chinese
   * or Japanese text, typically the Latin-script names and terms): they carry more of a text's
   * identity than an average word, and in CJK text a Latin word is one feature against the
   * several overlapping n-grams of a CJK word. @default 2
   */
  capitalizedWord: number;
  /** Two consecutive non-stop words. @default 0.2 */
  wordBigram: number;
  /** One character 3-gram inside a word of ≥ 4 letters (`^ma`, `mag`, …, `ic$`). @default 0.2 */
  charGram: number;
  /** One non-stop CJK character. @default 0.4 */
  cjkUnigram: number;
  /** Two consecutive CJK characters. @default 1 */
  cjkBigram: number;
  /** Three consecutive CJK characters. @default 0.3 */
  cjkTrigram: number;
}

/** Options of the {@link LexicalEmbedder}. */
export interface LexicalEmbedderOptions {
  /**
   * Vector length (a power of two between 64 and 4096).
   * @default 256 — with signed hashing, two unrelated texts have a collision-noise cosine with a
   * standard deviation of about 1/√256 ≈ 0.06, still far below the 0.35 threshold clients use;
   * MADial-Bench recall is the same at 256, 512 and 1024 within noise
   * (`libs/stores/scripts/madial-eval.mjs`), while 256 halves the memory (1 KiB a vector) and
   * the exact dense scan of the embedded index.
   */
  dimension?: number;
  /** Feature weights; missing keys take the defaults of {@link LexicalFeatureWeights}. */
  weights?: Partial<LexicalFeatureWeights>;
}

/** Default feature weights (tuned on MADial-Bench, English and Chinese). */
export const DEFAULT_LEXICAL_WEIGHTS: Readonly<LexicalFeatureWeights> = Object.freeze({
  word: 1,
  capitalizedWord: 2,
  wordBigram: 0.2,
  charGram: 0.2,
  cjkUnigram: 0.4,
  cjkBigram: 1,
  cjkTrigram: 0.3,
});

/**
 * The built-in, download-free embedder: hashed word and character n-gram features.
 *
 * Each text becomes a bag of features — stemmed words, word bigrams, character 3-grams inside
 * words (for fuzziness: `party`/`parties`), and for CJK runs, which have no spaces, character
 * unigrams, bigrams and trigrams. A feature's weight is its class weight times `1 + ln tf`
 * (sublinear, so a repeated word does not swamp the rest), it is hashed with {@link hash32}
 * to a dimension and a sign (signed hashing keeps collisions unbiased), and the vector is
 * L2-normalised. The cosine of two vectors therefore approximates the weighted overlap of
 * their features: a near-verbatim match scores close to 1, an unrelated text close to 0.
 *
 * Deterministic, synchronous under the hood, about a microsecond per word. Text-only.
 * A text with no features (empty, only punctuation or stop words) maps to the zero vector.
 */
export class LexicalEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  readonly supportsImages = false;
  private readonly w: LexicalFeatureWeights;
  private readonly mask: number;
  private readonly given: LexicalEmbedderOptions;

  constructor(opts: LexicalEmbedderOptions = {}) {
    const dim = opts.dimension ?? 256;
    if (!Number.isInteger(dim) || dim < 64 || dim > 4096 || (dim & (dim - 1)) !== 0) {
      throw new RangeError(`dimension must be a power of two in 64..4096, got ${dim}`);
    }
    this.dimension = dim;
    this.mask = dim - 1;
    this.w = { ...DEFAULT_LEXICAL_WEIGHTS, ...opts.weights };
    const custom = opts.weights && Object.keys(opts.weights).length > 0;
    // The id changes with anything that changes the vectors, so stored vectors are never
    // compared with incompatible ones.
    this.id = `lexical-v1-d${dim}` + (custom ? `-${hash32(JSON.stringify(this.w)).toString(16)}` : '');
    this.given = { dimension: dim, ...(opts.weights ? { weights: { ...opts.weights } } : {}) };
  }

  /**
   * The options this embedder was built with: `new LexicalEmbedder(options)` anywhere else (a
   * worker thread) builds one with the same {@link id} and the same vectors. Plain data (it
   * survives `postMessage`).
   */
  get options(): LexicalEmbedderOptions {
    return { dimension: this.given.dimension, ...(this.given.weights ? { weights: { ...this.given.weights } } : {}) };
  }

  /** Embed a batch (see {@link embedOne}). */
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  /** Embed one text synchronously. @returns a unit vector of length `dimension`, or zeros */
  embedOne(text: string): Float32Array {
    const bag = this.bag(text);
    const v = new Float32Array(this.dimension);
    // In the order the features first occur: the float sums, hence the vectors, are reproducible.
    for (let i = 0; i < bag.size; i++) {
      const h = bag.hashes[i]!;
      // Index from the low bits, sign from the top bit: independent enough for a 2^k table.
      const sign = h & 0x80000000 ? -1 : 1;
      v[h & this.mask] += sign * bag.weights[i]! * (1 + Math.log(bag.counts[i]!));
    }
    return l2normalize(v);
  }

  /**
   * The weighted feature bag of `text` (exposed for tests and diagnostics).
   * @returns feature key → class weight and raw count, in the order the features first occur
   */
  features(text: string): Map<string, { weight: number; count: number }> {
    const bag = this.bag(text);
    const out = new Map<string, { weight: number; count: number }>();
    for (let i = 0; i < bag.size; i++) out.set(bag.key(i), { weight: bag.weights[i]!, count: bag.counts[i]! });
    return out;
  }

  /**
   * The features of `text`: stemmed words (`w:`), word bigrams (`b:`), character 3-grams inside
   * words (`g:`) and CJK uni-, bi- and trigrams (`c1:` `c2:` `c3:`), as {@link FeatureBag} keeps them.
   */
  private bag(text: string): FeatureBag {
    const bag = new FeatureBag();
    const w = this.w;
    let prevStem: string | null = null;
    for (const seg of segmentText(text)) {
      if (seg.kind === 'cjk') {
        prevStem = null;
        const cs = Array.from(seg.text);
        for (let i = 0; i < cs.length; i++) {
          const a = cs[i]!;
          const b = cs[i + 1];
          if (!isCjkStopChar(a)) bag.add(K_C1, a, '', '', fmix32(fnv(H_C1, a)), w.cjkUnigram);
          if (b !== undefined && !(isCjkStopChar(a) && isCjkStopChar(b))) bag.add(K_C2, a, b, '', fmix32(fnv(fnv(H_C2, a), b)), w.cjkBigram);
          const c = cs[i + 2];
          if (c !== undefined) bag.add(K_C3, a, b!, c, fmix32(fnv(fnv(fnv(H_C3, a), b!), c)), w.cjkTrigram);
        }
        continue;
      }
      const word = wordFeatures(seg.text);
      if (word === null) continue;
      bag.add(K_WORD, word.stem, '', '', word.stemHash, seg.capitalized ? w.word * w.capitalizedWord : w.word);
      if (prevStem !== null) bag.add(K_BIGRAM, prevStem, word.stem, '', fmix32(fnv(fnv(fnv(H_B, prevStem), ' '), word.stem)), w.wordBigram);
      prevStem = word.stem;
      for (let i = 0; i < word.grams.length; i++) bag.add(K_GRAM, word.grams[i]!, '', '', word.gramHashes[i]!, w.charGram);
    }
    return bag;
  }
}

/** FNV-1a over `s`'s UTF-16 code units from state `h`: {@link hash32} is `fmix32(fnv(seed, s))`, piece by piece. */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}


// Feature kinds and their key prefixes; a key is its prefix and its parts (stems hold no
// space and a CJK part is one character, so the parts of a key are determined by it).
const K_WORD = 0;
const K_BIGRAM = 1;
const K_GRAM = 2;
const K_C1 = 3;
const K_C2 = 4;
const K_C3 = 5;
const PREFIXES = ['w:', 'b:', 'g:', 'c1:', 'c2:', 'c3:'];
const SEED = 0x811c9dc5;
const H_B = fnv(SEED, 'b:');
const H_C1 = fnv(SEED, 'c1:');
const H_C2 = fnv(SEED, 'c2:');
const H_C3 = fnv(SEED, 'c3:');

/**
 * A text's features as {@link LexicalEmbedder} accumulates them: each distinct key once, in the
 * order it first occurs, with the class weight of that occurrence, its count and its
 * {@link hash32}. An open-addressing table on the hash finds a key by its parts, so no key
 * string is built per occurrence.
 */
class FeatureBag {
  size = 0;
  readonly hashes: number[] = [];
  readonly weights: number[] = [];
  readonly counts: number[] = [];
  private readonly kinds: number[] = [];
  private readonly p1: string[] = [];
  private readonly p2: string[] = [];
  private readonly p3: string[] = [];
  /** Feature index + 1 per table cell (0: empty). */
  private table = new Int32Array(256);

  /** Count one occurrence of the feature (ignored when `weight` ≤ 0); `hash` is its key's {@link hash32}. */
  add(kind: number, a: string, b: string, c: string, hash: number, weight: number): void {
    if (weight <= 0) return;
    const mask = this.table.length - 1;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const at = this.table[i]! - 1;
      if (at < 0) {
        this.table[i] = this.size + 1;
        break;
      }
      if (this.hashes[at] === hash && this.kinds[at] === kind && this.p1[at] === a && this.p2[at] === b && this.p3[at] === c) {
        this.counts[at]!++;
        return;
      }
    }
    this.hashes.push(hash);
    this.weights.push(weight);
    this.counts.push(1);
    this.kinds.push(kind);
    this.p1.push(a);
    this.p2.push(b);
    this.p3.push(c);
    if (++this.size * 2 > this.table.length) this.grow();
  }

  /** The key string of feature `i` (`w:stem`, `b:stem stem`, `g:abc`, `c2:港口`…). */
  key(i: number): string {
    const k = this.kinds[i]!;
    return PREFIXES[k] + (k === K_BIGRAM ? `${this.p1[i]} ${this.p2[i]}` : this.p1[i]! + this.p2[i]! + this.p3[i]!);
  }

  private grow(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let f = 0; f < this.size; f++) {
      let i = this.hashes[f]! & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = f + 1;
    }
    this.table = table;
  }
}

/** The features of one word that do not depend on its neighbours: its stem, its stem key's hash and its character 3-grams (`^ab`, `abc`, …, `yz$`) and their keys' hashes. */
interface WordFeatures {
  stem: string;
  stemHash: number;
  grams: string[];
  gramHashes: number[];
}

/** {@link wordFeatures} already built, by normalised word (null: a stop word); text repeats its words. */
const WORDS = new Map<string, WordFeatures | null>();
/** Words {@link WORDS} holds before it starts over (bounds its memory at a few MB). */
const WORD_MEMO = 50_000;

/** The neighbour-independent features of a normalised word (null for a stop word), memoised. */
function wordFeatures(word: string): WordFeatures | null {
  let f = WORDS.get(word);
  if (f !== undefined) return f;
  if (isStopWord(word)) f = null;
  else {
    const stem = stemWord(word);
    const grams: string[] = [];
    if (word.length >= 4) {
      const padded = '^' + word + '$';
      for (let i = 0; i + 3 <= padded.length; i++) grams.push(padded.slice(i, i + 3));
    }
    f = { stem, stemHash: hash32('w:' + stem), grams, gramHashes: grams.map((g) => hash32('g:' + g)) };
  }
  if (WORDS.size >= WORD_MEMO) WORDS.clear();
  WORDS.set(word, f);
  return f;
}
