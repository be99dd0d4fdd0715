import { countTokens, renderFragment } from '@ctxmesh/kernel';
import { packList, requestBody, scoreArm, type EvidenceReport, type EvidenceRow, type OffTopicRow, type Served } from './evidence';
import type { MadialCase } from './madial-data';
import { evidenceTargets } from './report';

const uri = (id: number) => `viking://user/madial-en-u1/memories/events/madial-${id}.md`;
const hit = (id: number, abstract = `memory number ${id} with some words`) => ({ uri: uri(id), score: 1 - id / 100, abstract });

describe('requestBody', () => {
  it('sends the plugin\'s own body (plugin-client §1.1) with the budget, a session and the packing', () => {
    expect(requestBody('plugin', 'q', 400, 'evidence', 's1')).toEqual({
      query: 'q',
      mode: 'context',
      purpose: 'coding',
      score_threshold: 0.35,
      max_tokens: 400,
      session_id: 'cc-s1',
      dedup_turns: 5,
      packing: 'evidence',
    });
    expect(requestBody('bare', 'q', 1600, 'compat', 's1')).toEqual({ query: 'q', mode: 'context', max_tokens: 1600, packing: 'compat' });
  });
});

describe('packList (the list-packing baseline)', () => {
  it('packs abstract fragments in rank order with one separator each after the first, until the next would not fit', () => {
    const hits = [hit(1), hit(2), hit(3, 'x'.repeat(400)), hit(4)];
    const f = (h: (typeof hits)[number]) => countTokens(renderFragment({ uri: h.uri, category: 'events', score: h.score, detail: 'abstract', text: h.abstract }));
    const two = f(hits[0]) + 1 + f(hits[1]);
    const r = packList(hits, two + 1 + f(hits[2]) - 1);
    // The third does not fit, so the list stops there: the fourth is never tried.
    expect(r.entries.map((e) => e.uri)).toEqual([uri(1), uri(2)]);
    expect(r.usedTokens).toBe(two);
    expect(packList(hits, f(hits[0]) - 1).entries).toEqual([]);
  });

  it('packs a hit without an abstract as its bare URI', () => {
    expect(packList([hit(1, '  ')], 1600).entries).toEqual([{ uri: uri(1), detail: 'uri', text: '' }]);
  });
});

describe('scoreArm', () => {
  const cases: MadialCase[] = [
    { index: 0, query: 'a', relevant: [1, 2], user: '1' },
    { index: 1, query: 'b', relevant: [3], user: '1' },
    { index: 2, query: 'c', relevant: [4], user: '1' },
  ];
  it('counts gold served with text for recall, gold with text over all entries for precision, and bare URIs apart', () => {
    const served = new Map<number, Served>([
      // Texts of 8 and 24 estimated tokens (4 characters a token).
      [0, { entries: [{ uri: uri(1), detail: 'overview', text: 'x'.repeat(32) }, { uri: uri(2), detail: 'uri', text: '' }, { uri: uri(9), detail: 'abstract', text: 'y'.repeat(96) }], usedTokens: 100, ms: 5 }],
      [1, { entries: [], usedTokens: 0, ms: 7 }],
      // case 2 failed: no answer, scored as an empty block.
    ]);
    const s = scoreArm(cases, served);
    expect(s.cases).toBe(3);
    expect(s.recall).toBeCloseTo((1 / 2 + 0 + 0) / 3);
    expect(s.precision).toBeCloseTo(1 / 3);
    expect(s.precisionPerCase).toBeCloseTo(1 / 3);
    expect(s.entries).toBeCloseTo(1);
    expect(s.uriShare).toBeCloseTo(1 / 3);
    expect(s.tokens).toBeCloseTo(100 / 3);
    expect(s.p50Ms).toBe(6);
    // Token precision: the gold entry's 8 text tokens over all 32; markup: 100 used, 32 of them text.
    expect(s.tokenPrecision).toBeCloseTo(8 / 32);
    expect(s.markupShare).toBeCloseTo(68 / 100);
  });
});

describe('evidenceTargets', () => {
  const row = (arm: EvidenceRow['arm'], body: EvidenceRow['body'], budget: number, recall: number, precision: number, uriShare = 0): EvidenceRow => ({
    lang: 'en',
    pool: 'user',
    split: 'heldout',
    body,
    budget,
    arm,
    cases: 160,
    recall,
    precision,
    precisionPerCase: precision,
    tokenPrecision: precision,
    markupShare: 0.1,
    tokens: 0,
    entries: 0,
    uriShare,
    p50Ms: 5,
    errors: 0,
  });
  const report = (rows: EvidenceRow[], ratio = 1.1, offTopic: OffTopicRow[] = []): EvidenceReport => ({ protocol: '', rows, offTopic, writes: { docs: 0, errors: 0 }, latency: { compatP50: 5, evidenceP50: 5 * ratio, ratio } });
  const off = (body: OffTopicRow['body'], ratio: number, empty: number): OffTopicRow => ({ lang: 'en', split: 'heldout', body, arm: 'default', cases: 54, tokens: ratio * 1000, onTokens: 1000, ratio, empty, onEmpty: 0, entries: 1, errors: 0 });

  it('meets every target when evidence beats the baseline and doubles compat', () => {
    const t = evidenceTargets(
      report([row('baseline', 'plugin', 1600, 0.5, 0.2), row('compat', 'plugin', 1600, 0.2, 0.4), row('evidence', 'plugin', 1600, 0.6, 0.25)]),
    );
    expect(Object.fromEntries(t.filter((x) => x.id.startsWith('evidence-')).map((x) => [x.id, x.met]))).toEqual({
      'evidence-recall': true,
      'evidence-plugin-2x': true,
      'evidence-uri-share': true,
      'evidence-precision': true,
      'evidence-p50': true,
    });
  });

  it('reports the worst configuration when one misses, and no measurement without rows', () => {
    const t = evidenceTargets(
      report(
        [row('baseline', 'bare', 400, 0.5, 0.2), row('evidence', 'bare', 400, 0.49, 0.21, 0.06), row('baseline', 'plugin', 1600, 0.3, 0.3), row('compat', 'plugin', 1600, 0.2, 0.3), row('evidence', 'plugin', 1600, 0.3, 0.3)],
        1.3,
      ),
    );
    const by = Object.fromEntries(t.map((x) => [x.id, x]));
    expect(by['evidence-recall']).toMatchObject({ met: false, detail: expect.stringContaining('en/user/bare/400') });
    expect(by['evidence-recall'].measured).toBeCloseTo(-0.01);
    expect(by['evidence-plugin-2x'].met).toBe(false);
    expect(by['evidence-plugin-2x'].measured).toBeCloseTo(1.5);
    expect(by['evidence-uri-share']).toMatchObject({ met: false, measured: 0.06 });
    expect(by['evidence-p50']).toMatchObject({ met: false, measured: 1.3 });
    expect(evidenceTargets(undefined).every((x) => x.met === null && x.measured === null)).toBe(true);
  });

  it('judges the noise floor on the held-out rows: plugin vs bare recall, the default install vs the list, off-topic volume and empty blocks', () => {
    const rows = [
      row('evidence', 'plugin', 1600, 0.5, 0.3),
      row('evidence', 'bare', 1600, 0.52, 0.3),
      row('default', 'plugin', 1600, 0.5, 0.3),
      row('baseline', 'plugin', 1600, 0.45, 0.3),
      // The training split's rows never count.
      { ...row('evidence', 'plugin', 1600, 0.01, 0.3), split: 'all' as const },
    ];
    const met = (t: ReturnType<typeof evidenceTargets>) => Object.fromEntries(t.filter((x) => x.id.startsWith('noise-')).map((x) => [x.id, x.met]));
    expect(met(evidenceTargets(report(rows, 1.1, [off('plugin', 0.05, 0.9), off('bare', 0.08, 0.85)])))).toEqual({
      'noise-plugin-share': true,
      'noise-default-vs-list': true,
      'noise-offtopic-tokens': true,
      'noise-offtopic-empty': true,
    });
    const by = Object.fromEntries(evidenceTargets(report(rows, 1.1, [off('plugin', 0.05, 0.9), off('bare', 0.3, 0.4)])).map((x) => [x.id, x]));
    expect(by['noise-plugin-share']!.measured).toBeCloseTo(0.5 / 0.52);
    expect(by['noise-offtopic-tokens']).toMatchObject({ met: false, measured: 0.3 });
    expect(by['noise-offtopic-empty']).toMatchObject({ met: false, measured: 0.4 });
    expect(by['noise-default-vs-list']!.measured).toBeCloseTo(0.05);
  });
});
