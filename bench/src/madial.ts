/**
 * Retrieval quality on MADial-Bench (issue 8, item 6), measured through the mesh: each
 * memory is written through the gateway under `viking://user/<u>/memories/events/…`, and each
 * test dialogue is a `/api/v1/search/find` as that user, so the ranking is gather's (embedder,
 * hybrid search, fusion, calibration) exactly as an agent would get it. The published
 * baselines' top-20 ids are scored with the same formulas in the same run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonClient } from './http';
import { loadBaselines, loadMadial, scoreRankings, type MadialLang, type MadialSet, type RankingScores } from './madial-data';
import { summarize, type Summary } from './stats';

/** Candidate pools: each dialogue's user's memories (the baselines' protocol), or the whole archive as one user. */
export type Pool = 'user' | 'all';

/** The section's outcome. */
export interface MadialReport {
  /** How queries and candidates were built. */
  protocol: string;
  /** Our scores per pool and language. */
  ctxmesh: Record<Pool, Partial<Record<MadialLang, RankingScores>>>;
  /** Published baselines, same formulas, same cases. */
  baselines: Array<{ name: string; lang: MadialLang; file: string; scores: RankingScores; relevanceMismatches: number }>;
  /** Memories written and failures. */
  writes: { docs: number; errors: number };
  /** Searches that failed. */
  searchErrors: number;
  /** Latency of one search through the gateway, ms. */
  searchMs: Summary;
  /** First failure, if any. */
  firstError?: string;
}

/** The user a pool's memories are written under. */
export function poolUser(lang: MadialLang, pool: Pool, user: string): string {
  return pool === 'user' ? `madial-${lang}-u${user}` : `madial-${lang}-all`;
}

/**
 * The account a (language, pool) is written to: each archive is its own corpus, as in the
 * published protocol, so one archive's document frequencies never weigh another's terms.
 */
export function poolAccount(lang: MadialLang, pool: Pool): string {
  return `madial-${lang}-${pool}`;
}

/** Memory id from a written URI (`…/madial-<id>.md`), or null. */
export function idOfUri(uri: string): number | null {
  const m = /\/madial-(\d+)\.md$/.exec(uri);
  return m ? Number(m[1]) : null;
}

/** Run `fn` over `items` with at most `concurrency` in flight. */
export async function pool<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.max(1, concurrency) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/** Outcome of {@link writeMadialArchives}. */
export interface ArchiveWrites {
  docs: number;
  errors: number;
  firstError?: string;
}

/**
 * Write both languages' archives through the gateway, once per pool: each memory as
 * `viking://user/<u>/memories/events/madial-<id>.md` (text = the event) in the (language, pool)
 * account, `wait: true`.
 */
export async function writeMadialArchives(client: JsonClient, sets: Record<MadialLang, MadialSet>, pools: readonly Pool[], concurrency: number): Promise<ArchiveWrites> {
  let errors = 0;
  let docs = 0;
  let firstError: string | undefined;
  const writes = (['en', 'zh'] as const).flatMap((lang) =>
    pools.flatMap((p) => sets[lang].memories.map((m) => ({ account: poolAccount(lang, p), user: poolUser(lang, p, m.user), uri: `viking://user/${poolUser(lang, p, m.user)}/memories/events/madial-${m.id}.md`, content: m.text }))),
  );
  await pool(writes, concurrency, async (w) => {
    const r = await client.post('/api/v1/content/write', { uri: w.uri, content: w.content, mode: 'replace', wait: true }, { 'X-OpenViking-Account': w.account, 'X-OpenViking-User': w.user });
    docs++;
    if (r.status !== 200) {
      errors++;
      firstError ??= `write ${w.uri}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
    }
  });
  return { docs, errors, ...(firstError ? { firstError } : {}) };
}

/** Whether the dataset is present. */
export function madialAvailable(dir: string): boolean {
  return existsSync(join(dir, 'en', 'dialogue.json')) && existsSync(join(dir, 'zh', 'dialogue.json'));
}

/** Ingest both languages in both pools, run every test dialogue, score ours and the baselines. */
export async function measureMadial(client: JsonClient, dir: string, opts: { concurrency?: number; pools?: readonly Pool[] } = {}): Promise<MadialReport> {
  const sets: Record<MadialLang, MadialSet> = { en: loadMadial(dir, 'en'), zh: loadMadial(dir, 'zh') };
  const pools = opts.pools ?? (['user', 'all'] as const);
  const concurrency = opts.concurrency ?? 8;
  const w = await writeMadialArchives(client, sets, pools, concurrency);
  let firstError = w.firstError;
  const written = w.docs;
  const writeErrors = w.errors;

  const lat: number[] = [];
  let searchErrors = 0;
  const ctxmesh: MadialReport['ctxmesh'] = { user: {}, all: {} };
  for (const p of pools) {
    for (const lang of ['en', 'zh'] as const) {
      const ranked = new Map<number, number[]>();
      await pool(sets[lang].cases, 2, async (c) => {
        const r = await client.post('/api/v1/search/find', { query: c.query, limit: 10 }, { 'X-OpenViking-Account': poolAccount(lang, p), 'X-OpenViking-User': poolUser(lang, p, c.user) });
        if (r.status !== 200) {
          searchErrors++;
          firstError ??= `find (${lang}, case ${c.index}): HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return;
        }
        lat.push(r.ms);
        const hits = ((r.body as { result?: { memories?: Array<{ uri: string }> } }).result?.memories ?? []).map((h) => idOfUri(h.uri));
        ranked.set(c.index, hits.filter((id): id is number => id !== null));
      });
      ctxmesh[p][lang] = scoreRankings(sets[lang].cases, (c) => ranked.get(c.index));
    }
  }

  const baselines = loadBaselines(dir, sets).map((b) => ({
    name: b.name,
    lang: b.lang,
    file: b.file,
    scores: scoreRankings(sets[b.lang].cases, (c) => b.ranked.get(c.index)),
    relevanceMismatches: b.relevanceMismatches,
  }));

  return {
    protocol:
      'query = dialogue[:test-turn[0]] joined as is, <BOD>/<EOD> lines dropped; memories written through /api/v1/content/write as viking://user/<u>/memories/events/madial-<id>.md (text = event), one account per (language, pool); ' +
      'ranking = /api/v1/search/find {query, limit: 10} as user <u>; pool "user" = the dialogue user\'s memories (the baselines\' protocol; the English archive takes each id\'s user from zh/memory.json), ' +
      'pool "all" = the whole archive as one user; recall@k = |relevant ∩ top k| / |relevant|; nDCG@5 binary gains, ideal = min(|relevant|, 5) hits',
    ctxmesh,
    baselines,
    writes: { docs: written, errors: writeErrors },
    searchErrors,
    searchMs: summarize(lat),
    ...(firstError ? { firstError } : {}),
  };
}
