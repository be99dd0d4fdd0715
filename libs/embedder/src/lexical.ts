import { type Embedder, l2normalize } from './embedder';
import { hash32, isCjkStopChar, isStopWord, segmentText, stemWord } from './tokenize';

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
    const feats = this.features(text);
    const v = new Float32Array(this.dimension);
    for (const [f, { weight, count }] of feats) {
      const h = hash32(f);
      // Index from the low bits, sign from the top bit: independent enough for a 2^k table.
      const sign = h & 0x80000000 ? -1 : 1;
      v[h & this.mask] += sign * weight * (1 + Math.log(count));
    }
    return l2normalize(v);
  }

  /**
   * The weighted feature bag of `text` (exposed for tests and diagnostics).
   * @returns feature key → class weight and raw count
   */
  features(text: string): Map<string, { weight: number; count: number }> {
    const feats = new Map<string, { weight: number; count: number }>();
    const add = (key: string, weight: number): void => {
      if (weight <= 0) return;
      const cur = feats.get(key);
      if (cur) cur.count++;
      else feats.set(key, { weight, count: 1 });
    };
    let prevStem: string | null = null;
    for (const seg of segmentText(text)) {
      if (seg.kind === 'cjk') {
        prevStem = null;
        const cs = Array.from(seg.text);
        for (let i = 0; i < cs.length; i++) {
          if (!isCjkStopChar(cs[i])) add('c1:' + cs[i], this.w.cjkUnigram);
          if (i + 1 < cs.length && !(isCjkStopChar(cs[i]) && isCjkStopChar(cs[i + 1]))) {
            add('c2:' + cs[i] + cs[i + 1], this.w.cjkBigram);
          }
          if (i + 2 < cs.length) add('c3:' + cs[i] + cs[i + 1] + cs[i + 2], this.w.cjkTrigram);
        }
        continue;
      }
      const word = seg.text;
      if (isStopWord(word)) continue;
      const stem = stemWord(word);
      add('w:' + stem, seg.capitalized ? this.w.word * this.w.capitalizedWord : this.w.word);
      if (prevStem !== null) add('b:' + prevStem + ' ' + stem, this.w.wordBigram);
      prevStem = stem;
      if (word.length >= 4) {
        const padded = '^' + word + '$';
        for (let i = 0; i + 3 <= padded.length; i++) add('g:' + padded.slice(i, i + 3), this.w.charGram);
      }
    }
    return feats;
  }
}
