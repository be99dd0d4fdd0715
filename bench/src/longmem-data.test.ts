import {
  FACT_KINDS,
  LONGMEM_LANGS,
  LONGMEM_TURNS,
  containsSpan,
  generateLongmem,
  isHeldOutQuestion,
  normalizeText,
  sessionText,
  turnText,
  turnsOf,
  type LongmemLang,
  type LongmemSet,
} from './longmem-data';
import { hashSeed } from './rng';

const sets: Record<LongmemLang, LongmemSet> = { en: generateLongmem('en'), zh: generateLongmem('zh') };

/** Every (language, question, its user's turns) triple. */
function eachQuestion() {
  return LONGMEM_LANGS.flatMap((lang) =>
    sets[lang].questions.map((q) => {
      const turns = turnsOf(sets[lang].users.find((u) => u.id === q.user)!);
      return { lang, q, turns, byId: new Map(turns.map((t) => [t.id, t])) };
    }),
  );
}

describe('generateLongmem', () => {
  it('gives the same bytes for the same seed and different ones for another seed', () => {
    const a = generateLongmem('en', { seed: 7, users: 2 });
    const b = generateLongmem('en', { seed: 7, users: 2 });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    const c = generateLongmem('en', { seed: 8, users: 2 });
    expect(JSON.stringify(c)).not.toBe(JSON.stringify(a));
    expect(turnText('en', turnsOf(c.users[0]!)[0]!)).not.toBe(turnText('en', turnsOf(a.users[0]!)[0]!));
    expect(JSON.stringify(generateLongmem('zh', { seed: 7, users: 2 }))).toBe(JSON.stringify(generateLongmem('zh', { seed: 7, users: 2 })));
  });

  it('builds 4 users per language with 8 dated sessions of 36–44 turns and 25 questions each', () => {
    for (const lang of LONGMEM_LANGS) {
      const s = sets[lang];
      expect(s.users).toHaveLength(4);
      for (const u of s.users) {
        expect(u.sessions).toHaveLength(8);
        const dates = u.sessions.map((x) => x.date);
        expect([...dates].sort()).toEqual(dates);
        expect(new Set(dates).size).toBe(dates.length);
        for (const x of u.sessions) {
          expect(x.date).toMatch(/^2026-\d\d-\d\d$/);
          expect(x.turns.length).toBeGreaterThanOrEqual(LONGMEM_TURNS[0]);
          expect(x.turns.length).toBeLessThanOrEqual(LONGMEM_TURNS[1]);
          expect(sessionText(lang, x).startsWith(`## ${x.date}\n`)).toBe(true);
        }
        const turns = turnsOf(u);
        expect(turns.map((t) => t.id)).toEqual(turns.map((_, i) => `t${String(i + 1).padStart(3, '0')}`));
        expect(s.questions.filter((q) => q.user === u.id)).toHaveLength(FACT_KINDS.length);
      }
    }
  });

  it('puts every answer span in its gold turns, and no span of a question in the question', () => {
    for (const { lang, q, byId } of eachQuestion()) {
      const gold = q.gold.map((id) => turnText(lang, byId.get(id)!)).join('\n');
      for (const span of q.spans) {
        expect(containsSpan(gold, span)).toBe(true);
        expect(containsSpan(q.query, span)).toBe(false);
      }
      for (const span of q.staleSpans) expect(containsSpan(q.query, span)).toBe(false);
    }
  });

  it('puts a span in no turn but its gold ones, and a stale value in no turn but the stale one', () => {
    for (const { lang, q, turns } of eachQuestion()) {
      for (const t of turns) {
        const text = turnText(lang, t);
        if (!q.gold.includes(t.id)) for (const span of q.spans) expect([q.id, t.id, span, containsSpan(text, span)]).toEqual([q.id, t.id, span, false]);
        if (!q.stale.includes(t.id)) for (const span of q.staleSpans) expect([q.id, t.id, span, containsSpan(text, span)]).toEqual([q.id, t.id, span, false]);
      }
    }
  });

  it('gives two-turn questions two adjacent gold turns of one session, each holding part of the answer', () => {
    const two = eachQuestion().filter((x) => x.q.kind === 'two-turn');
    expect(two.length).toBeGreaterThan(0);
    for (const { lang, q, byId } of two) {
      const [a, b] = q.gold.map((id) => byId.get(id)!);
      expect(q.gold).toHaveLength(2);
      expect(b!.index - a!.index).toBe(1);
      expect(b!.session).toBe(a!.session);
      for (const t of [a!, b!]) expect(q.spans.some((s) => containsSpan(turnText(lang, t), s))).toBe(true);
    }
  });

  it('records a corrected fact\'s stale turn in an earlier session than its correction', () => {
    const corrected = eachQuestion().filter((x) => x.q.kind === 'corrected');
    expect(corrected.length).toBeGreaterThan(0);
    for (const { lang, q, byId } of corrected) {
      expect(q.gold).toHaveLength(1);
      expect(q.stale).toHaveLength(1);
      const gold = byId.get(q.gold[0]!)!;
      const stale = byId.get(q.stale[0]!)!;
      expect(stale.index).toBeLessThan(gold.index);
      expect(stale.session < gold.session).toBe(true);
      expect(q.staleSpans.every((s) => containsSpan(turnText(lang, stale), s))).toBe(true);
    }
    for (const { q } of eachQuestion().filter((x) => x.q.kind !== 'corrected')) expect([q.stale, q.staleSpans]).toEqual([[], []]);
  });

  it('words a question differently from its fact (no 3-word run in English, no 4-character run in Chinese)', () => {
    for (const { lang, q, byId } of eachQuestion()) {
      const gold = normalizeText(q.gold.map((id) => turnText(lang, byId.get(id)!)).join(' '));
      const query = normalizeText(q.query);
      if (lang === 'en') {
        const words = (s: string) => s.replace(/[^a-z0-9' ]/g, ' ').split(' ').filter(Boolean);
        const g = ` ${words(gold).join(' ')} `;
        const w = words(query);
        for (let i = 0; i + 3 <= w.length; i++) expect([q.id, g.includes(` ${w.slice(i, i + 3).join(' ')} `)]).toEqual([q.id, false]);
      } else {
        const c = [...query.replace(/[？，。！]/g, '')];
        for (let i = 0; i + 4 <= c.length; i++) expect([q.id, gold.includes(c.slice(i, i + 4).join(''))]).toEqual([q.id, false]);
      }
    }
  });

  it('holds out about a third of the questions, by hashSeed of the id', () => {
    const all = LONGMEM_LANGS.flatMap((l) => sets[l].questions);
    for (const q of all) expect(q.split).toBe(hashSeed(q.id) % 3 === 0 ? 'heldout' : 'train');
    for (const q of all) expect(isHeldOutQuestion(q.id)).toBe(q.split === 'heldout');
    const share = all.filter((q) => q.split === 'heldout').length / all.length;
    expect(share).toBeGreaterThan(0.25);
    expect(share).toBeLessThan(0.42);
  });

  it('honours the user and question counts, and rejects what it cannot build', () => {
    const s = generateLongmem('zh', { users: 1, questions: 5, sessions: 3 });
    expect(s.users).toHaveLength(1);
    expect(s.users[0]!.sessions).toHaveLength(3);
    expect(s.questions).toHaveLength(5);
    expect(() => generateLongmem('en', { sessions: 2 })).toThrow(RangeError);
    expect(() => generateLongmem('en', { questions: FACT_KINDS.length + 1 })).toThrow(RangeError);
  });
});

describe('containsSpan', () => {
  it('matches case-insensitively across whitespace, at ASCII word boundaries', () => {
    expect(containsSpan('We are moving to PORTO soon', 'porto')).toBe(true);
    expect(containsSpan('dinner at Blue  Fig\nBistro', 'Blue Fig Bistro')).toBe(true);
    expect(containsSpan('a walk in Portobello', 'Porto')).toBe(false);
    expect(containsSpan('it cost $3490', '$349')).toBe(false);
    expect(containsSpan('it cost $349.', '$349')).toBe(true);
    expect(containsSpan('ends in 14471', '4471')).toBe(false);
    expect(containsSpan('11月出发', '1月')).toBe(false);
    expect(containsSpan('我们秋天要搬去厦门。', '厦门')).toBe(true);
    expect(containsSpan('anything', '')).toBe(false);
  });
});
