import { countTokens } from '@ctxmesh/kernel';
import type { ListHit } from './evidence';
import { baselineServed, goldTokensFound, offTopicFigures, scoreLongmem, servedFromContext, sessionUri, shapeAccount, shapeWrites, spanRecall, turnUri, type LongmemReport, type LongmemRow, type LongmemServed } from './longmem';
import { generateLongmem, turnLines, turnsOf, type LongmemQuestion } from './longmem-data';
import { longmemOffTopicRows, longmemRows, markdownSummary, type BenchReport } from './report';

const question = (id: string, kind: LongmemQuestion['kind'], spans: string[], staleSpans: string[] = []): LongmemQuestion => ({
  id,
  user: 'u',
  lang: 'en',
  kind,
  fact: 'f',
  query: 'q',
  gold: ['t001'],
  spans,
  stale: staleSpans.length ? ['t000'] : [],
  staleSpans,
  split: 'train',
});

describe('spanRecall', () => {
  it('is the share of spans found, case-insensitive and whitespace-normalised, at word boundaries', () => {
    expect(spanRecall(['Porto', '$349'], 'moving to porto,\nit cost $3490')).toBe(0.5);
    expect(spanRecall(['Blue Fig Bistro'], 'at blue   fig\nbistro tonight')).toBe(1);
    expect(spanRecall(['10月', '桂林'], '我订了10月的旅行')).toBe(0.5);
    expect(spanRecall([], 'anything')).toBe(0);
  });
});

describe('goldTokensFound', () => {
  it('counts the estimated tokens of each gold line found, once however often it is served', () => {
    // 'User: Lena is in Porto' is 22 characters (6 tokens), 'Assistant: nice' 15 (4).
    const served = 'User: Lena is in Porto\nAssistant: nice\n\nUser: Lena is in Porto';
    expect(goldTokensFound(['User: Lena is in Porto', 'Assistant: nice'], served)).toBe(10);
    expect(goldTokensFound(['User: Lena is in Porto', 'Assistant: nice', 'User: Lena is in Porto'], served)).toBe(10);
    expect(goldTokensFound(['User: not served at all'], served)).toBe(0);
  });
});

describe('scoreLongmem', () => {
  const questions = [question('a', 'single', ['Porto', 'Kyoto']), question('b', 'corrected', ['Thursday'], ['Monday']), question('c', 'two-turn', ['May'])];
  const gold: Record<string, string[]> = { a: ['User: Lena is in Porto', 'Assistant: nice'], b: ['User: moved to Thursday', 'Assistant: ok'], c: ['User: in May'] };
  const served = new Map<string, LongmemServed>([
    // 38 + 22 characters of text: 10 + 6 tokens; 40 used, so 24 of markup.
    ['a', { texts: ['User: Lena is in Porto\nAssistant: nice', 'User: filler text here'], entries: 2, usedTokens: 40, ms: 4 }],
    // 15 characters (4 tokens) with the stale value; 20 used.
    ['b', { texts: ['User: on Monday'], entries: 1, usedTokens: 20, ms: 6 }],
    // c failed: scored as an empty block.
  ]);

  it('scores recall by span, precision by gold-line tokens, markup and stale share by text', () => {
    const s = scoreLongmem(questions, served, (q) => gold[q.id]!);
    expect(s.questions).toBe(3);
    expect(s.recall).toBeCloseTo((0.5 + 0 + 0) / 3, 12);
    expect(s.recallByKind).toEqual({ single: 0.5, 'two-turn': 0, corrected: 0 });
    // Gold lines found: 6 + 4 tokens, of 10 + 6 + 4 served.
    expect(s.precision).toBe(0.5);
    // (40 + 20 − 20) / (40 + 20).
    expect(s.markupShare).toBeCloseTo(2 / 3, 12);
    expect(s.staleShare).toBe(1);
    expect(s.staleQuestions).toBe(1);
    expect(s.tokens).toBe(20);
    expect(s.entries).toBe(1);
    expect(s.p50Ms).toBe(5);
  });

  it('has no stale share without corrected facts and no precision without served text', () => {
    const s = scoreLongmem([questions[0]!], new Map(), (q) => gold[q.id]!);
    expect([s.recall, s.precision, s.markupShare, s.staleShare, s.recallByKind.corrected]).toEqual([0, 0, 0, null, null]);
  });
});

describe('baselineServed', () => {
  it('keeps the abstracts packList packed, in rank order, and a bare URI as empty text', () => {
    const hit = (i: number, abstract: string): ListHit => ({ uri: `viking://user/u/memories/events/2026-01-01/t00${i}.md`, score: 1 - i / 10, abstract });
    const hits = [hit(1, ' first turn '), hit(2, ''), hit(3, 'x'.repeat(8000))];
    const s = baselineServed(hits, 1600, 3);
    expect(s.texts).toEqual(['first turn', '']);
    expect(s.entries).toBe(2);
    expect(s.usedTokens).toBeGreaterThan(countTokens('first turn'));
    expect(s.ms).toBe(3);
  });
});

describe('servedFromContext', () => {
  it('reads entries[].text and stats.used_tokens', () => {
    const body = { result: { entries: [{ uri: 'a', text: 'one' }, { uri: 'b', text: '' }], stats: { used_tokens: 42 } } };
    expect(servedFromContext(body, 7)).toEqual({ texts: ['one', ''], entries: 2, usedTokens: 42, ms: 7 });
    expect(servedFromContext({}, 1)).toEqual({ texts: [], entries: 0, usedTokens: 0, ms: 1 });
  });
});

describe('offTopicFigures', () => {
  it('gives mean tokens and empty shares off- and on-topic', () => {
    const qs = [question('a', 'single', ['x']), question('b', 'single', ['y'])];
    const s = (usedTokens: number, entries: number): LongmemServed => ({ texts: [], entries, usedTokens, ms: 1 });
    const f = offTopicFigures(qs, new Map([['a', s(0, 0)], ['b', s(100, 2)]]), new Map([['a', s(400, 4)], ['b', s(600, 6)]]));
    expect(f).toEqual({ questions: 2, tokens: 50, onTokens: 500, ratio: 0.1, empty: 0.5, onEmpty: 0 });
  });
});

describe('shapeWrites', () => {
  const set = generateLongmem('en', { users: 1, sessions: 3, questions: 3 });
  const u = set.users[0]!;

  it('writes a memory per turn with its two speaker-tagged lines', () => {
    const w = shapeWrites('turns', set);
    const turns = turnsOf(u);
    expect(w).toHaveLength(turns.length);
    expect(w[0]).toEqual({ account: 'longmem-turns-en', user: u.id, uri: turnUri(u.id, turns[0]!), content: turnLines('en', turns[0]!).join('\n') });
    expect(w[0]!.uri).toBe(`viking://user/${u.id}/memories/events/${turns[0]!.session}/t001.md`);
    expect(w[0]!.content).toMatch(/^User: .*\nAssistant: .*$/);
  });

  it('writes a memory per session, in another account, with a date header and every turn', () => {
    const w = shapeWrites('sessions', set);
    expect(w).toHaveLength(3);
    expect(shapeAccount('sessions', 'en')).not.toBe(shapeAccount('turns', 'en'));
    expect(w[1]!.uri).toBe(sessionUri(u.id, u.sessions[1]!.date));
    expect(w[1]!.uri).toBe(`viking://user/${u.id}/memories/events/sessions/${u.sessions[1]!.date}.md`);
    expect(w[1]!.content.startsWith(`## ${u.sessions[1]!.date}\n\n`)).toBe(true);
    for (const t of u.sessions[1]!.turns) for (const line of turnLines('en', t)) expect(w[1]!.content).toContain(line);
  });
});

describe('longmemRows', () => {
  const row = (split: LongmemRow['split'], arm: LongmemRow['arm'], recall: number): LongmemRow => ({
    shape: 'turns',
    lang: 'en',
    split,
    body: 'bare',
    budget: 1600,
    arm,
    questions: 10,
    recall,
    recallByKind: { single: recall, 'two-turn': 0.25, corrected: null },
    precision: 0.125,
    markupShare: 0.4,
    staleShare: 0.5,
    staleQuestions: 2,
    tokens: 600,
    entries: 8,
    p50Ms: 5.5,
    errors: 0,
  });
  const longmem: LongmemReport = {
    protocol: 'p',
    data: { seed: 1, users: 8, turns: 2560, questions: 200, heldout: 66, writes: 2624, writeErrors: 0 },
    rows: [row('all', 'baseline', 0.9), row('heldout', 'baseline', 0.5), row('heldout', 'evidence', 0.75)],
    offTopic: [{ shape: 'turns', lang: 'en', split: 'heldout', body: 'bare', arm: 'evidence', questions: 10, tokens: 30, onTokens: 600, ratio: 0.05, empty: 0.9, onEmpty: 0, errors: 0 }],
    latency: { compatP50: 5, evidenceP50: 5, ratio: 1 },
  };
  const report = { meta: { mode: 'quick', startedAt: 'x', node: 'v20', cpus: 2, loadAvgStart: [1, 1, 1], gitCommit: 'abc', sizes: [], queries: 0, argv: [] }, corpus: { seed: 1 }, sizes: {}, notes: [], failures: {}, longmem } as BenchReport;

  it('shows the held-out rows with recall per kind, stale share, precision and markup share', () => {
    const rows = longmemRows(report);
    expect(rows).toHaveLength(3);
    expect(rows[1]).toEqual(['turns', 'en', 'heldout', 'bare', '1600', 'list baseline', '0.500', '0.250', '–', '50 %', '0.125', '0.400', '600', '8', '5.50']);
    expect(rows[2]![5]).toBe('evidence');
    expect(longmemOffTopicRows(report)[1]).toEqual(['turns', 'en', 'heldout', 'bare', 'evidence', '30', '600', '0.050', '90 %', '0 %']);
    expect(markdownSummary(report)).toContain('| turns | en | heldout | bare | 1600 | evidence | 0.750 |');
  });
});
