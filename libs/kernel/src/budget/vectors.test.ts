import * as fs from 'node:fs';
import * as path from 'node:path';
import { type Candidate, type PlanItem, contentUriOf, planAndRender, planReads } from './plan';
import { normalizeDetail, pinFor } from './tiers';
import { renderFragment } from './render';
import { countTokens } from './tokens';
import { type TierTexts, prepareTierTexts } from './overview';

/**
 * The reference kernel's answers (shared/data/kernel-vectors, see its README): every case is
 * run through the two-step service flow (planReads → fake reads → prepareTierTexts →
 * planAndRender) with the code outliner off, and compared byte for byte.
 */
const VECTORS = path.resolve(__dirname, '../../../../../shared/data/kernel-vectors');

interface VectorCandidate extends Candidate {
  body: string | null;
}
interface VectorCase {
  id: string;
  tags: string[];
  candidates: VectorCandidate[];
  max_tokens: number;
  detail: unknown;
}
interface VectorAnswer {
  id: string;
  entries?: unknown[];
  rendered?: string;
  stats?: Record<string, unknown>;
  skeleton_stubbed?: number;
  error?: string;
}

function readJsonl<T>(file: string): T[] {
  const full = path.join(VECTORS, file);
  if (!fs.existsSync(full)) {
    throw new Error(`kernel vectors missing: ${full} (expected the shared/ checkout beside the repository)`);
  }
  return fs
    .readFileSync(full, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);
}

const cases = readJsonl<VectorCase>('cases.jsonl');
const answers = new Map(readJsonl<VectorAnswer>('expected.jsonl').map((a) => [a.id, a]));

/**
 * Runs one case. The fake store knows a node's file as the first non-null `body` among the
 * candidates sharing its URI, and it refuses reads the §5.4 plan did not ask for.
 */
function runCase(c: VectorCase, tokenizer = 'estimate') {
  const files = new Map<string, string | null>();
  for (const cand of c.candidates) if (files.get(cand.uri) == null) files.set(cand.uri, cand.body);
  const plan = planReads(c.candidates, c.max_tokens, c.detail, tokenizer);
  const readLog: string[] = [];
  const texts: Array<TierTexts | null> = c.candidates.map(() => null);
  for (const r of plan.reads) {
    const cand = c.candidates[r.index];
    readLog.push(r.contentUri);
    texts[r.index] = prepareTierTexts(cand, files.get(cand.uri) ?? null, { outliner: null });
  }
  const items: PlanItem[] = c.candidates.map((candidate, i) => ({ candidate, texts: texts[i] }));
  return { plan, readLog, texts, result: planAndRender(items, c.max_tokens, c.detail, tokenizer) };
}

describe('kernel vectors', () => {
  it('has all 300 cases and an answer for each', () => {
    expect(cases).toHaveLength(300);
    for (const c of cases) expect(answers.has(c.id)).toBe(true);
  });

  const comparable = cases.filter((c) => !answers.get(c.id)?.error);
  const refused = cases.filter((c) => answers.get(c.id)?.error);

  it('holds 297 comparable cases and 3 refused front matters', () => {
    expect(comparable).toHaveLength(297);
    expect(refused).toHaveLength(3);
  });

  it.each(comparable.map((c) => [c.id, c] as const))('%s matches the reference answer', (_id, c) => {
    const want = answers.get(c.id)!;
    const { result } = runCase(c);
    expect(result.rendered).toBe(want.rendered);
    expect(result.entries).toEqual(want.entries);
    expect(result.stats).toEqual(want.stats);
    // toEqual ignores key order; the wire order of tier_counts and of stats matters.
    expect(Object.keys(result.stats.tier_counts)).toEqual(Object.keys(want.stats!.tier_counts as object));
    expect(Object.keys(result.stats)).toEqual(Object.keys(want.stats!));
    expect(JSON.stringify(result.entries)).toBe(JSON.stringify(want.entries));
  });

  it.each(refused.map((c) => [c.id, c] as const))('%s serves the refused directory without failing', (_id, c) => {
    const { plan, texts, result } = runCase(c);
    const flagged = plan.reads.filter((r) => texts[r.index]?.overviewError);
    expect(flagged.length).toBeGreaterThan(0);
    for (const r of flagged) {
      expect(texts[r.index]!.overview).toBe('');
      const entry = result.entries.find((e) => e.uri === r.uri);
      // A refused directory is never served at overview: abstract, uri, dropped or deduped.
      if (entry) expect(['abstract', 'uri']).toContain(entry.detail);
    }
    expect(result.stats.used_tokens).toBeLessThanOrEqual(result.stats.max_tokens);
  });

  it('reads events and directories, never unpinned resources or skills (§5.4)', () => {
    let events = 0;
    let shared = 0;
    for (const c of comparable) {
      const { plan, readLog } = runCase(c);
      expect(readLog).toHaveLength(plan.reads.length);
      const spec = normalizeDetail(c.detail);
      c.candidates.forEach((cand, i) => {
        const pin = pinFor(spec, cand.category);
        if (cand.is_directory || (cand.category === 'events' && pin === null)) {
          expect(plan.needsBody[i]).toBe(true);
          expect(readLog).toContain(contentUriOf(cand));
          events++;
        } else if ((cand.category === 'resources' || cand.category === 'skills') && (pin === null || pin === 'abstract')) {
          expect(plan.needsBody[i]).toBe(false);
          shared++;
        }
      });
    }
    expect(events).toBeGreaterThan(100);
    expect(shared).toBeGreaterThan(100);
  });

  it.each(['o200k_base', 'cl100k_base'])('keeps every case within budget with %s', (tokenizer) => {
    for (const c of cases) {
      const { result } = runCase(c, tokenizer);
      expect(result.stats.used_tokens).toBeLessThanOrEqual(result.stats.max_tokens);
      expect(result.entries).toHaveLength(result.stats.returned);
      const fragments = result.entries.map(renderFragment);
      expect(fragments.join('\n')).toBe(result.rendered);
      const recount = fragments.reduce((n, f) => n + countTokens(f, tokenizer), 0) + Math.max(0, fragments.length - 1);
      expect(result.stats.used_tokens).toBe(recount);
    }
  });
});
