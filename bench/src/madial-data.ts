/**
 * MADial-Bench (MIT, `../shared/data/madial-bench`): loading, the honest query construction,
 * and the ranking metrics, shared by our run and the published baselines so both are scored
 * by the same formulas in the same process.
 *
 * Protocol (the one the baselines were computed with):
 * - query: the dialogue strictly before its first test turn, `dialogue[:test-turn[0]]`, lines
 *   joined as they are (speaker tags kept), the `<BOD>`/`<EOD>` marker lines dropped. Nothing
 *   from the test turn, the gold ids or the memory archive reaches the query;
 * - candidates: the memories of the dialogue's user (every id in every baseline's top 20
 *   belongs to that user); the whole archive as one user's memories is reported beside it;
 * - relevance: `relevant-id`, binary.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** A MADial language. */
export type MadialLang = 'en' | 'zh';

/** One memory of the archive. */
export interface MadialMemory {
  id: number;
  /** The memory text (`event`). */
  text: string;
  /** The user it belongs to (`user-id`; the English file borrows the Chinese file's, ids are shared). */
  user: string;
}

/** One test dialogue. */
export interface MadialCase {
  /** Position in `dialogue.json` (what the baseline files index by). */
  index: number;
  /** The query: the dialogue before the first test turn. */
  query: string;
  /** Gold memory ids. */
  relevant: number[];
  /** The dialogue's user. */
  user: string;
}

/** A language's archive and test cases. */
export interface MadialSet {
  lang: MadialLang;
  memories: MadialMemory[];
  cases: MadialCase[];
}

/** A published baseline's ranked ids per test case. */
export interface Baseline {
  /** Model name, e.g. `BGE-M3`. */
  name: string;
  lang: MadialLang;
  /** Source file name. */
  file: string;
  /** Top-20 ids per case index. */
  ranked: Map<number, number[]>;
  /** Cases whose gold ids in the baseline file differ from `dialogue.json` (expected 0). */
  relevanceMismatches: number;
}

/** Read a JSON-lines file. */
export function readJsonl(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as unknown);
}

const MARKER = /^\s*<(BOD|EOD)>\s*$/;

/**
 * The query of a test dialogue: every line before the first test turn, joined as is, without
 * the `<BOD>`/`<EOD>` marker lines.
 * @throws RangeError when the dialogue has no test turn
 */
export function queryOf(dialogue: readonly string[], testTurns: readonly number[]): string {
  if (testTurns.length === 0) throw new RangeError('a test dialogue needs at least one test turn');
  const first = Math.min(...testTurns);
  return dialogue
    .slice(0, first)
    .filter((line) => !MARKER.test(line))
    .join('');
}

/** Load one language (`<dir>/<lang>/memory.json`, `dialogue.json`). */
export function loadMadial(dir: string, lang: MadialLang): MadialSet {
  // Only the Chinese archive records each memory's user; the ids are shared by both archives.
  const userOf = new Map<number, string>();
  for (const row of readJsonl(join(dir, 'zh', 'memory.json'))) {
    const [id, m] = Object.entries(row as Record<string, { 'user-id'?: number | string }>)[0]!;
    if (m['user-id'] !== undefined) userOf.set(Number(id), String(m['user-id']));
  }
  const memories = readJsonl(join(dir, lang, 'memory.json')).map((row) => {
    const [id, m] = Object.entries(row as Record<string, { event: string }>)[0]!;
    const user = userOf.get(Number(id));
    if (user === undefined) throw new Error(`${lang} memory ${id} has no user-id in zh/memory.json`);
    return { id: Number(id), text: m.event, user };
  });
  const cases = readJsonl(join(dir, lang, 'dialogue.json')).map((row, index) => {
    const d = row as { dialogue: string[]; 'test-turn': number[]; 'relevant-id': number[]; 'user-id': number };
    return { index, query: queryOf(d.dialogue, d['test-turn']), relevant: d['relevant-id'], user: String(d['user-id']) };
  });
  return { lang, memories, cases };
}

const BASELINE_NAMES: ReadonlyArray<[RegExp, string]> = [
  [/bge_m3/i, 'BGE-M3'],
  [/openai/i, 'OpenAI'],
  [/gte/i, 'GTE'],
  [/jina/i, 'Jina'],
];

/**
 * Load every `baselines/*top_20*.json`. Two layouts exist: the Chinese files carry `id` (the
 * dialogue index), `top_20_ids` and `relevant_id`; the English ones are aligned by line with
 * `en/dialogue.json` and carry `top-20-ids` and `relevant-id`.
 * @param sets the loaded languages, to check each file's gold ids against them
 */
export function loadBaselines(dir: string, sets: Readonly<Record<MadialLang, MadialSet>>): Baseline[] {
  const out: Baseline[] = [];
  for (const file of readdirSync(join(dir, 'baselines')).filter((f) => /top_20.*\.json$/i.test(f)).sort()) {
    const lang: MadialLang = /(^|_)zh(_|\.)/i.test(file) ? 'zh' : 'en';
    const name = BASELINE_NAMES.find(([re]) => re.test(file))?.[1] ?? file.replace(/\.json$/, '');
    const ranked = new Map<number, number[]>();
    let mismatches = 0;
    readJsonl(join(dir, 'baselines', file)).forEach((row, line) => {
      const r = row as { id?: number; top_20_ids?: number[]; 'top-20-ids'?: number[]; relevant_id?: number[]; 'relevant-id'?: number[] };
      const index = r.id ?? line;
      const ids = r.top_20_ids ?? r['top-20-ids'] ?? [];
      ranked.set(index, ids);
      const gold = r.relevant_id ?? r['relevant-id'];
      const c = sets[lang].cases[index];
      if (!c || !gold || gold.length !== c.relevant.length || gold.some((g, i) => g !== c.relevant[i])) mismatches++;
    });
    out.push({ name, lang, file, ranked, relevanceMismatches: mismatches });
  }
  return out;
}

/** recall@k = |relevant ∩ top k| / |relevant| (0 when nothing is relevant). */
export function recallAt(ranked: readonly number[], relevant: readonly number[], k: number): number {
  if (relevant.length === 0) return 0;
  const rel = new Set(relevant);
  return ranked.slice(0, k).filter((id) => rel.has(id)).length / rel.size;
}

/**
 * nDCG@k with binary gains, normalised by the ideal ranking of min(|relevant|, k) hits
 * (so a ranking that retrieves fewer relevant items is not rewarded).
 */
export function ndcgAt(ranked: readonly number[], relevant: readonly number[], k: number): number {
  const rel = new Set(relevant);
  let dcg = 0;
  let idcg = 0;
  for (let i = 0; i < k; i++) {
    if (i < ranked.length && rel.has(ranked[i]!)) dcg += 1 / Math.log2(i + 2);
    if (i < rel.size) idcg += 1 / Math.log2(i + 2);
  }
  return idcg === 0 ? 0 : dcg / idcg;
}

/** Mean recall@5, recall@10 and nDCG@5 over cases. */
export interface RankingScores {
  cases: number;
  recall5: number;
  recall10: number;
  ndcg5: number;
}

/**
 * Score rankings against the cases' gold ids with the formulas above.
 * @param rankedOf the ranked ids of a case (missing → an empty ranking, which scores 0)
 */
export function scoreRankings(cases: readonly MadialCase[], rankedOf: (c: MadialCase) => readonly number[] | undefined): RankingScores {
  let r5 = 0;
  let r10 = 0;
  let n5 = 0;
  for (const c of cases) {
    const ranked = rankedOf(c) ?? [];
    r5 += recallAt(ranked, c.relevant, 5);
    r10 += recallAt(ranked, c.relevant, 10);
    n5 += ndcgAt(ranked, c.relevant, 5);
  }
  const n = cases.length;
  return { cases: n, recall5: n ? r5 / n : Number.NaN, recall10: n ? r10 / n : Number.NaN, ndcg5: n ? n5 / n : Number.NaN };
}
