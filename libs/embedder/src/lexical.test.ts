import fc from 'fast-check';
import { cosine, l2normalize } from './embedder';
import { DEFAULT_LEXICAL_WEIGHTS, LexicalEmbedder, type LexicalFeatureWeights } from './lexical';
import { hash32, isCjkStopChar, isStopWord, segmentText, stemWord } from './tokenize';

/** The embedder as first written (a Map of key strings): the reference its faster accumulation must match exactly. */
function referenceFeatures(text: string, w: LexicalFeatureWeights): Map<string, { weight: number; count: number }> {
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
        if (!isCjkStopChar(cs[i]!)) add('c1:' + cs[i], w.cjkUnigram);
        if (i + 1 < cs.length && !(isCjkStopChar(cs[i]!) && isCjkStopChar(cs[i + 1]!))) add('c2:' + cs[i] + cs[i + 1], w.cjkBigram);
        if (i + 2 < cs.length) add('c3:' + cs[i] + cs[i + 1] + cs[i + 2], w.cjkTrigram);
      }
      continue;
    }
    const word = seg.text;
    if (isStopWord(word)) continue;
    const stem = stemWord(word);
    add('w:' + stem, seg.capitalized ? w.word * w.capitalizedWord : w.word);
    if (prevStem !== null) add('b:' + prevStem + ' ' + stem, w.wordBigram);
    prevStem = stem;
    if (word.length >= 4) {
      const padded = '^' + word + '$';
      for (let i = 0; i + 3 <= padded.length; i++) add('g:' + padded.slice(i, i + 3), w.charGram);
    }
  }
  return feats;
}

function referenceVector(text: string, dim: number, w: LexicalFeatureWeights): Float32Array {
  const v = new Float32Array(dim);
  for (const [f, { weight, count }] of referenceFeatures(text, w)) {
    const h = hash32(f);
    v[h & (dim - 1)] += (h & 0x80000000 ? -1 : 1) * weight * (1 + Math.log(count));
  }
  return l2normalize(v);
}

const emb = new LexicalEmbedder();
const sim = (a: string, b: string): number => cosine(emb.embedOne(a), emb.embedOne(b));

describe('LexicalEmbedder', () => {
  it('returns unit vectors of the configured dimension', async () => {
    const [v] = await emb.embed(['Redis connection timed out during startup']);
    expect(v).toHaveLength(256);
    const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
    expect(norm).toBeCloseTo(1, 5);
  });

  it('is deterministic across instances', async () => {
    const other = new LexicalEmbedder();
    const [a] = await emb.embed(['圣诞节晚会上跳舞']);
    const [b] = await other.embed(['圣诞节晚会上跳舞']);
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(other.id).toBe(emb.id);
  });

  it('maps text without features to the zero vector', () => {
    expect(Array.from(emb.embedOne('  ... the and of !!')).every((x) => x === 0)).toBe(true);
  });

  it('rejects a dimension that is not a power of two in range', () => {
    expect(() => new LexicalEmbedder({ dimension: 300 })).toThrow(RangeError);
    expect(() => new LexicalEmbedder({ dimension: 32 })).toThrow(RangeError);
  });

  it('weighs a capitalised word (a name) above an ordinary one', () => {
    const withName = emb.features('Bart likes pizza');
    expect(withName.get('w:bart')?.weight).toBe(2);
    expect(withName.get('w:like')?.weight).toBe(1);
    expect(sim('Bart went home', 'Bart stayed out')).toBeGreaterThan(sim('bart went home', 'bart stayed out'));
  });

  it('changes its id when weights change', () => {
    expect(new LexicalEmbedder({ weights: { charGram: 0.5 } }).id).not.toBe(emb.id);
    expect(new LexicalEmbedder({ dimension: 256 }).id).toBe('lexical-v1-d256');
  });

  it('computes exactly the reference features and vectors (keys, weights, counts, first-occurrence order, float sums)', () => {
    const weights = { ...DEFAULT_LEXICAL_WEIGHTS, charGram: 0.5, cjkTrigram: 0 };
    const custom = new LexicalEmbedder({ dimension: 64, weights: { charGram: 0.5, cjkTrigram: 0 } });
    const unit = fc.constantFrom('Harbour', 'harbour', 'pilots', 'piloting', ' ', ' ', '. ', '港', '口', '港口', '的', '𠀀', 'the ', 'Ünïcödé', 'x', '-');
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), (parts) => {
        const text = parts.join('');
        expect([...emb.features(text)]).toEqual([...referenceFeatures(text, DEFAULT_LEXICAL_WEIGHTS)]);
        expect([...emb.embedOne(text)]).toEqual([...referenceVector(text, 256, DEFAULT_LEXICAL_WEIGHTS)]);
        expect([...custom.features(text)]).toEqual([...referenceFeatures(text, weights)]);
        expect([...custom.embedOne(text)]).toEqual([...referenceVector(text, 64, weights)]);
      }),
      { numRuns: 300 },
    );
  });

  it('rebuilds itself from its options, with the same id and vectors', () => {
    for (const original of [new LexicalEmbedder(), new LexicalEmbedder({ dimension: 512, weights: { charGram: 0.5 } })]) {
      const copy = new LexicalEmbedder(structuredClone(original.options));
      expect(copy.id).toBe(original.id);
      expect(copy.dimension).toBe(original.dimension);
      expect(copy.embedOne('The Harbour pilot boards at dawn, 港口引航员')).toEqual(original.embedOne('The Harbour pilot boards at dawn, 港口引航员'));
    }
  });

  describe('cosine calibration around the 0.35 client threshold', () => {
    const cases: Array<[string, string, string]> = [
      [
        'English',
        'The deployment pipeline failed because the Redis connection timed out during startup.',
        'The deploy pipeline fails when the Redis connection times out at startup.',
      ],
      ['English', 'Bart danced at the Christmas party and felt very happy.', 'Bart danced at the Christmas party, feeling very happy.'],
      ['Chinese', '部署流水线因为启动时Redis连接超时而失败。', '部署流水线失败了，因为启动时Redis连接超时。'],
      ['Chinese', 'Bart在圣诞节晚会上跳舞，感觉非常开心。', 'Bart在圣诞晚会上跳舞，感到很开心。'],
    ];
    it.each(cases)('scores a near-verbatim %s match well above 0.35', (_lang, a, b) => {
      expect(sim(a, b)).toBeGreaterThan(0.6);
    });

    const unrelated: Array<[string, string, string]> = [
      ['English', 'The deployment pipeline failed because the Redis connection timed out during startup.', 'My grandmother bakes an apple pie every Sunday afternoon.'],
      ['English', 'Lisa practised the piano for two hours before her recital.', 'Quarterly revenue grew thanks to the new pricing model.'],
      ['Chinese', '部署流水线因为启动时Redis连接超时而失败。', '我奶奶每个星期天下午都会烤苹果派。'],
      ['Chinese', 'Lisa在钢琴独奏会前练习了两个小时。', '由于新的定价模式，季度收入有所增长。'],
    ];
    it.each(unrelated)('scores an unrelated %s text well below 0.35', (_lang, a, b) => {
      expect(Math.abs(sim(a, b))).toBeLessThan(0.25);
    });

    it('keeps every pair of unrelated sentences below 0.35 and near 0 on average', () => {
      const texts = [
        ...unrelated.flatMap(([, a, b]) => [a, b]),
        'The museum extended its opening hours for the summer exhibition.',
        'Our team migrated the billing service to a new database cluster.',
        'He forgot his umbrella and got soaked on the way home.',
        'The recipe calls for two cups of flour and a pinch of salt.',
        '图书馆周末延长了开放时间。',
        '我们团队把计费服务迁移到了新的数据库集群。',
        '他忘了带伞，回家路上全身湿透了。',
        '这个食谱需要两杯面粉和一小撮盐。',
      ];
      const sims: number[] = [];
      for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) sims.push(sim(texts[i], texts[j]));
      expect(Math.max(...sims)).toBeLessThan(0.35);
      expect(sims.reduce((s, x) => s + x, 0) / sims.length).toBeLessThan(0.05);
    });
  });

  it('gives partial credit to inflections through stems and character n-grams', () => {
    expect(sim('parties', 'party')).toBeGreaterThan(0.3);
    expect(sim('configuration', 'configure')).toBeGreaterThan(0.12);
    expect(sim('configuration', 'banana')).toBeLessThan(0.1);
  });

  it('ranks a Chinese two-character word match above a miss', () => {
    expect(sim('魔术', '元旦晚会我要表演魔术')).toBeGreaterThan(sim('魔术', '元旦晚会我要表演跳舞'));
  });
});
