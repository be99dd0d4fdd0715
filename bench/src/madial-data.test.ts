import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadBaselines, loadMadial, ndcgAt, queryOf, readJsonl, recallAt, scoreRankings, type MadialCase } from './madial-data';
import { idOfUri, poolUser } from './madial';

describe('queryOf', () => {
  it('keeps only the dialogue before the first test turn, without the marker lines', () => {
    const dialogue = ['<BOD>\n', '<A>: "hi"\n', '<B>: "hello"\n', '<A>: "remember the party?"\n', '<EOD>\n'];
    expect(queryOf(dialogue, [3])).toBe('<A>: "hi"\n<B>: "hello"\n');
    // Several test turns: the earliest one bounds the history.
    expect(queryOf(dialogue, [3, 2])).toBe('<A>: "hi"\n');
  });

  it('never includes the test turn itself', () => {
    const dialogue = ['<BOD>\n', 'a\n', 'SECRET\n'];
    expect(queryOf(dialogue, [2])).not.toContain('SECRET');
  });

  it('rejects a dialogue without test turns', () => {
    expect(() => queryOf(['a'], [])).toThrow(RangeError);
  });
});

describe('recallAt and ndcgAt', () => {
  it('computes recall as the share of relevant ids in the top k', () => {
    expect(recallAt([1, 2, 3, 4, 5, 6], [2, 6, 9], 5)).toBeCloseTo(1 / 3, 10);
    expect(recallAt([1, 2, 3, 4, 5, 6], [2, 6, 9], 10)).toBeCloseTo(2 / 3, 10);
    expect(recallAt([1], [], 5)).toBe(0);
  });

  it('normalises nDCG by the ideal ranking of min(|relevant|, k) hits', () => {
    expect(ndcgAt([7, 8], [7, 8], 5)).toBeCloseTo(1, 10);
    // One relevant item at rank 2 of two relevant: (1/log2 3) / (1 + 1/log2 3).
    const expected = 1 / Math.log2(3) / (1 + 1 / Math.log2(3));
    expect(ndcgAt([1, 7], [7, 8], 5)).toBeCloseTo(expected, 10);
    expect(ndcgAt([1, 2, 3], [9], 5)).toBe(0);
  });

  it('averages over cases, a missing ranking scoring 0', () => {
    const cases: MadialCase[] = [
      { index: 0, query: 'q', relevant: [1], user: '1' },
      { index: 1, query: 'q', relevant: [2], user: '1' },
    ];
    const s = scoreRankings(cases, (c) => (c.index === 0 ? [1] : undefined));
    expect(s).toEqual({ cases: 2, recall5: 0.5, recall10: 0.5, ndcg5: 0.5 });
  });
});

describe('loadMadial and loadBaselines', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'madial-test-'));
    for (const d of ['en', 'zh', 'baselines']) mkdirSync(join(dir, d));
    const jl = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
    writeFileSync(join(dir, 'zh', 'memory.json'), jl([{ '1': { event: '甲', 'user-id': 1 } }, { '2': { event: '乙', 'user-id': 2 } }]));
    writeFileSync(join(dir, 'en', 'memory.json'), jl([{ '1': { event: 'one' } }, { '2': { event: 'two' } }]));
    const dlg = { dialogue: ['<BOD>\n', 'x\n', 'y\n'], 'test-turn': [2], 'relevant-id': [1], 'user-id': 1 };
    writeFileSync(join(dir, 'en', 'dialogue.json'), jl([dlg, { ...dlg, 'relevant-id': [2], 'user-id': 2 }]));
    writeFileSync(join(dir, 'zh', 'dialogue.json'), jl([dlg, { ...dlg, 'relevant-id': [2], 'user-id': 2 }]));
    // English layout: aligned by line; Chinese layout: `id` and `relevant_id`, in any order.
    writeFileSync(join(dir, 'baselines', 'gte_top_20.json'), jl([{ 'relevant-id': [1], 'top-20-ids': [1, 2] }, { 'relevant-id': [2], 'top-20-ids': [1, 2] }]));
    writeFileSync(join(dir, 'baselines', 'openai_zh_top_20_ids.json'), jl([{ id: 1, relevant_id: [2], top_20_ids: [2] }, { id: 0, relevant_id: [9], top_20_ids: [2] }]));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes each English memory\'s user from the Chinese archive and builds honest queries', () => {
    const en = loadMadial(dir, 'en');
    expect(en.memories).toEqual([
      { id: 1, text: 'one', user: '1' },
      { id: 2, text: 'two', user: '2' },
    ]);
    expect(en.cases[0]).toEqual({ index: 0, query: 'x\n', relevant: [1], user: '1' });
  });

  it('reads both baseline layouts, names the model and counts gold-id mismatches', () => {
    const sets = { en: loadMadial(dir, 'en'), zh: loadMadial(dir, 'zh') };
    const b = loadBaselines(dir, sets);
    const gte = b.find((x) => x.name === 'GTE')!;
    expect(gte.lang).toBe('en');
    expect(gte.ranked.get(1)).toEqual([1, 2]);
    expect(gte.relevanceMismatches).toBe(0);
    const openai = b.find((x) => x.name === 'OpenAI')!;
    expect(openai.lang).toBe('zh');
    expect(openai.ranked.get(1)).toEqual([2]);
    expect(openai.relevanceMismatches).toBe(1);
    expect(scoreRankings(sets.zh.cases, (c) => openai.ranked.get(c.index)).recall5).toBe(0.5);
  });
});

describe('the shipped MADial-Bench files', () => {
  const dir = join(__dirname, '..', '..', '..', 'shared', 'data', 'madial-bench');
  const present = existsSync(join(dir, 'zh', 'dialogue.json'));

  it('load with 160 cases per language and baselines whose gold ids match the dialogues', () => {
    // The dataset lives beside the repository on every engineer's machine and in CI.
    expect(present).toBe(true);
    const sets = { en: loadMadial(dir, 'en'), zh: loadMadial(dir, 'zh') };
    expect(sets.en.cases).toHaveLength(160);
    expect(sets.zh.cases).toHaveLength(160);
    const baselines = loadBaselines(dir, sets);
    expect(baselines.map((b) => `${b.name}/${b.lang}`).sort()).toEqual(['BGE-M3/en', 'BGE-M3/zh', 'GTE/en', 'Jina/en', 'OpenAI/zh']);
    for (const b of baselines) expect(b.relevanceMismatches).toBe(0);
    // The Chinese baseline files carry the history they embedded: up to whitespace, the <BOD>
    // marker and a short heading some rows start with, it is exactly our query, so both sides
    // answer the same question (and the test turn is in neither).
    const squash = (t: string) => t.replace(/<BOD>/g, '').replace(/\s+/g, '');
    const rows = readJsonl(join(dir, 'baselines', 'openai_zh_top_20_ids.json')) as Array<{ id: number; dialog_history: string }>;
    expect(rows).toHaveLength(160);
    for (const r of rows) {
      const ours = squash(sets.zh.cases[r.id]!.query);
      const theirs = squash(r.dialog_history);
      expect(theirs.endsWith(ours)).toBe(true);
      expect(theirs.length - ours.length).toBeLessThan(12);
    }
  });
});

describe('pool users and URIs', () => {
  it('separates pools and languages by user and parses memory ids back', () => {
    expect(poolUser('en', 'user', '2')).toBe('madial-en-u2');
    expect(poolUser('zh', 'all', '2')).toBe('madial-zh-all');
    expect(idOfUri('viking://user/madial-en-u2/memories/events/madial-105.md')).toBe(105);
    expect(idOfUri('viking://user/x/memories/events/other.md')).toBeNull();
  });
});
