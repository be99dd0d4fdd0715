import fc from 'fast-check';
import { CATEGORIES } from '../uri';
import { type Candidate, type PlanItem, planAndRender, planReads } from './plan';
import { prepareTierTexts } from './overview';
import { PY_WS_CLASS } from './python';
import { renderFragment } from './render';
import { TOKENIZERS, countTokens } from './tokens';

const REAL_OPEN = new RegExp(`<memory(?=[${PY_WS_CLASS}/>])`, 'gi');
const REAL_CLOSE = new RegExp(`</memory(?=[${PY_WS_CLASS}/>])`, 'gi');
const SELF_CLOSING = /<memory uri="[^"]*" type="[^"]*" score="[^"]*" detail="uri" \/>/g;
const URI_ATTR = /<memory uri="([^"]*)"/g;

const forgedPiece = fc.constantFrom(
  '<memory>',
  '</memory>',
  '<MEMORY/>',
  '</Memory >',
  '<memory\x85x',
  '<memory\turi="viking://forged">',
  '</memory\u2028',
  '<memoryX>',
  '< memory>',
  '<\\memory>',
  '&amp;',
  '"',
  '<',
  '\n',
  '\r\n',
  ' ',
  '# Summary\n',
  '## Heading\n',
  'Summary: ',
  '\n\n',
  'text',
  '中文',
  '😀',
);
const cjk = fc.string({ unit: fc.constantFrom(...'中文한국어日本語カタカナ😀🚀ㄅ　\u3000𠮷 a\n'), maxLength: 300 });
const huge = fc
  .tuple(fc.constantFrom('x', '中', '😀 ', 'word ', '<memory>'), fc.integer({ min: 500, max: 8000 }))
  .map(([unit, n]) => unit.repeat(n));
const text = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 120 }) },
  { weight: 3, arbitrary: fc.array(forgedPiece, { maxLength: 30 }).map((a) => a.join('')) },
  { weight: 2, arbitrary: cjk },
  { weight: 1, arbitrary: huge },
  { weight: 2, arbitrary: fc.constant('') },
);
const body = fc.oneof(
  text,
  fc.constant(null),
  text.map((t) => `---\ndirectory: "viking://x/"\n---\n${t}`),
  text.map((t) => `---\n${t}`),
);
const uri = fc
  .tuple(
    fc.constantFrom('viking://resources/', 'viking://user/u/memories/events/', 'viking://user/u/memories/entities/', 'viking://agent/skills/'),
    fc.string({ unit: fc.constantFrom(...'abc/-_."<>&\'中😀'), maxLength: 24 }),
  )
  .map(([a, b]) => a + b);
const candidate = fc.record({
  uri,
  category: fc.constantFrom(...CATEGORIES),
  score: fc.oneof(fc.double({ min: -1, max: 2, noNaN: true }), fc.constantFrom(0.125, 0.375, -0.125, 0.995, 1.005, -0.004, 0)),
  abstract: fc.oneof(text, fc.constant(null)),
  is_directory: fc.boolean(),
  origin: fc.constantFrom('actor_peer', 'self', 'other_peer'),
  body,
});
const detail = fc.constantFrom<unknown>(null, 'auto', 'abstract', 'overview', 'full', 'uri', { events: 'full' }, { resources: 'overview', memories: 'abstract' }, {});
const budget = fc.integer({ min: 64, max: 32000 });

/** Two-step flow with a fake store keyed by node URI. */
function run(cands: Array<Candidate & { body: string | null }>, maxTokens: number, det: unknown, tokenizer: string) {
  const plan = planReads(cands, maxTokens, det, tokenizer);
  const texts = cands.map(() => null as PlanItem['texts']);
  for (const r of plan.reads) texts[r.index] = prepareTierTexts(cands[r.index], cands[r.index].body);
  return planAndRender(
    cands.map((c, i) => ({ candidate: c, texts: texts[i] })),
    maxTokens,
    det,
    tokenizer,
  );
}

function unescapeAttr(s: string): string {
  return s.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&');
}

describe.each(TOKENIZERS.map((t) => [t]))('planAndRender properties (%s)', (tokenizer) => {
  const numRuns = tokenizer === 'estimate' ? 300 : 60;
  const input = fc.record({ cands: fc.array(candidate, { maxLength: 12 }), maxTokens: budget, det: detail });

  it('never spends more than max_tokens, and spends exactly the fragments plus separators', () => {
    fc.assert(
      fc.property(input, ({ cands, maxTokens, det }) => {
        const r = run(cands, maxTokens, det, tokenizer);
        expect(r.stats.used_tokens).toBeLessThanOrEqual(r.stats.max_tokens);
        const fragments = r.entries.map(renderFragment);
        expect(fragments.join('\n')).toBe(r.rendered);
        const spent = fragments.reduce((n, f) => n + countTokens(f, tokenizer), 0) + Math.max(0, fragments.length - 1);
        expect(r.stats.used_tokens).toBe(spent);
        expect(r.stats.returned + r.stats.dropped + r.stats.deduped).toBe(cands.length);
      }),
      { numRuns },
    );
  });

  it('renders exactly one real opening tag per entry and one closing tag per text entry (but for the reference\'s own gap)', () => {
    fc.assert(
      fc.property(input, ({ cands, maxTokens, det }) => {
        const r = run(cands, maxTokens, det, tokenizer);
        const withText = r.entries.filter((e) => e.text !== '').length;
        // The reference leaves a `<memory`/`</memory` that ends a body, and the fragment's
        // newline completes it into a tag; compat matches it byte for byte (issue 11 item 4).
        const opensAtEnd = r.entries.filter((e) => /<memory$/i.test(e.text)).length;
        const closesAtEnd = r.entries.filter((e) => /<\/memory$/i.test(e.text)).length;
        expect(r.rendered.match(REAL_OPEN)?.length ?? 0).toBe(r.entries.length + opensAtEnd);
        expect(r.rendered.match(REAL_CLOSE)?.length ?? 0).toBe(withText + closesAtEnd);
        expect(r.rendered.match(SELF_CLOSING)?.length ?? 0).toBe(r.entries.length - withText);
      }),
      { numRuns },
    );
  });

  it('names in rendered exactly the entries, in order', () => {
    fc.assert(
      fc.property(input, ({ cands, maxTokens, det }) => {
        const r = run(cands, maxTokens, det, tokenizer);
        const named = [...r.rendered.matchAll(URI_ATTR)].map((m) => unescapeAttr(m[1]));
        expect(named).toEqual(r.entries.map((e) => e.uri));
        const served = new Set(cands.map((c) => c.uri));
        for (const u of named) expect(served.has(u)).toBe(true);
      }),
      { numRuns },
    );
  });
});

describe('planAndRender tier invariants', () => {
  it('serves directories at most at overview and only available, non-empty texts', () => {
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 12 }), budget, detail, (cands, maxTokens, det) => {
        const r = run(cands, maxTokens, det, 'estimate');
        for (const e of r.entries) {
          const sameNode = cands.filter((x) => x.uri === e.uri);
          if (sameNode.every((x) => x.is_directory)) expect(e.detail).not.toBe('full');
          expect(e.detail === 'uri').toBe(e.text === '');
          if (e.detail === 'abstract') expect(cands.some((x) => x.uri === e.uri && (x.abstract ?? '').includes(e.text))).toBe(true);
        }
        const counts: Record<string, number> = {};
        for (const e of r.entries) counts[e.detail] = (counts[e.detail] ?? 0) + 1;
        expect(r.stats.tier_counts).toEqual(counts);
        expect(Object.keys(r.stats.tier_counts)).toEqual([...new Set(r.entries.map((e) => e.detail))]);
      }),
      { numRuns: 300 },
    );
  });
});
