/**
 * What the inspector's budget bar relies on (issue 14): the served fates are exactly the
 * entries; in compat, their costs at the served tier plus one separator per entry after the
 * first add up to `used_tokens`; in evidence, where entries of one directory may share a group
 * (compact.ts), that sum is what they would cost written apart, at least `used_tokens`, and the
 * block's own token account adds up to it.
 */
import fc from 'fast-check';
import { CATEGORIES } from '../uri';
import { compactTokenAccount } from './compact';
import { planEvidence } from './evidence';
import { type PlanItem, planAndRender } from './plan';

const text = fc.oneof(
  fc.constant(''),
  fc.string({ maxLength: 80 }),
  fc.string({ unit: fc.constantFrom(...'中文日本語 a\n<>&'), maxLength: 120 }),
  fc.constantFrom('same body', '# Summary\nshared'),
  fc.integer({ min: 100, max: 3000 }).map((n) => 'word '.repeat(n)),
);
const item: fc.Arbitrary<PlanItem> = fc.record({
  candidate: fc.record({
    uri: fc.string({ unit: fc.constantFrom(...'abcdef'), minLength: 1, maxLength: 3 }).map((s) => `viking://resources/docs/${s}.md`),
    category: fc.constantFrom(...CATEGORIES),
    score: fc.double({ min: 0, max: 1, noNaN: true }),
    abstract: text,
    is_directory: fc.boolean(),
    origin: fc.constantFrom('self', 'actor_peer', 'other_peer'),
  }),
  texts: fc.record({ overview: text, full: text }),
});

describe('fates and the budget', () => {
  it.each([
    ['compat', (items: PlanItem[], max: number, detail: string | null, tok: string) => planAndRender(items, max, detail, tok, { fates: true })],
    ['evidence', (items: PlanItem[], max: number, detail: string | null, tok: string) => planEvidence(items, max, detail, tok, { fates: true })],
  ] as const)('%s: served costs plus separators equal used_tokens', (_name, plan) => {
    fc.assert(
      fc.property(
        // Gather answers each URI once.
        fc.uniqueArray(item, { maxLength: 14, selector: (i) => i.candidate.uri }),
        fc.integer({ min: 64, max: 3000 }),
        fc.constantFrom(null, 'abstract', 'overview', 'full'),
        fc.constantFrom('estimate', 'o200k_base'),
        (items, maxTokens, detail, tokenizer) => {
          const r = plan(items, maxTokens, detail, tokenizer);
          const served = (r.fates ?? []).filter((f) => f.fate === 'served');
          expect(served.map((f) => [f.uri, f.tier])).toEqual(r.entries.map((e) => [e.uri, e.detail]));
          const sum = served.reduce((n, f) => n + (f.costs![f.tier!] as number), 0) + Math.max(0, served.length - 1);
          if (_name === 'compat') expect(sum).toBe(r.stats.used_tokens);
          else {
            expect(sum).toBeGreaterThanOrEqual(r.stats.used_tokens);
            expect(compactTokenAccount(r.rendered, tokenizer).used).toBe(r.stats.used_tokens);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
