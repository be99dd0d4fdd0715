/**
 * Evidence recall on MADial-Bench (issue 11): how much of a test dialogue's gold evidence a
 * context block delivers, per packing, beside a plain list packed into the same budget.
 *
 * Both archives are written through the gateway as in the `madial` section (per-user pools, and
 * the whole archive as one user). Every test dialogue is then asked through
 * `/api/v1/search/search` in context mode at 400, 1600 and 4000 tokens, with two bodies — the
 * Claude Code plugin's own (`plugin-client.md` §1.1: `purpose:"coding"`, `score_threshold:0.35`,
 * a session and `dedup_turns:5`) and the bare default `{query, mode:"context", max_tokens}` —
 * and both packings, compat and evidence in turn (alternating which goes first), so their
 * latencies are measured side by side. The baseline packs the same search as a list: list
 * mode's top 50 (`/find`, with the body's score threshold), in rank order, as §6.1 fragments at
 * tier `abstract`, until the next would not fit.
 */
import { categoryOfUri, countTokens, renderFragment } from '@ctxmesh/kernel';
import type { JsonClient } from './http';
import { idOfUri, poolAccount, poolUser, writeMadialArchives, type ArchiveWrites, type Pool } from './madial';
import { loadMadial, type MadialCase, type MadialLang, type MadialSet } from './madial-data';
import { summarize } from './stats';

/** Budgets measured. */
export const EVIDENCE_BUDGETS = [400, 1600, 4000] as const;
/** Request bodies measured. */
export const EVIDENCE_BODIES = ['plugin', 'bare'] as const;
/** A request body. */
export type EvidenceBody = (typeof EVIDENCE_BODIES)[number];
/** What a row packs with: a packing, the server's default (the body names none), or the list baseline. */
export type EvidenceArm = 'compat' | 'evidence' | 'default' | 'baseline';
/** Which dialogues a row scores: all of them, or the held-out split the relevance score was not fitted on (index % 3 == 0). */
export type EvidenceSplit = 'all' | 'heldout';
/** The budget of the `default` arm and of the off-topic runs. */
export const OFF_TOPIC_BUDGET = 1600;

/** Whether a dialogue is in the held-out split of the relevance fit (bench/src/calibration.ts). */
export function isHeldOut(index: number): boolean {
  return index % 3 === 0;
}
/** Rows of list mode the baseline packs from. */
export const BASELINE_LIST = 50;
/** The plugin's default score threshold (`OPENVIKING_SCORE_THRESHOLD`). */
export const PLUGIN_THRESHOLD = 0.35;

/** One served entry as scored. */
export interface ServedEntry {
  uri: string;
  detail: string;
  /** Its text as served (`entries[].text`; the abstract the baseline packed). */
  text: string;
}

/** What one request served, with its cost and time. */
export interface Served {
  entries: ServedEntry[];
  usedTokens: number;
  ms: number;
}

/** One row of the table: a (language, pool, body, budget, arm) over every test dialogue. */
export interface EvidenceRow {
  lang: MadialLang;
  pool: Pool;
  split: EvidenceSplit;
  body: EvidenceBody;
  budget: number;
  arm: EvidenceArm;
  /** Dialogues scored. */
  cases: number;
  /** Mean share of a dialogue's gold memories served with text (detail ≠ uri). */
  recall: number;
  /** Share of all served entries that are gold memories served with text. */
  precision: number;
  /** Tokens of the gold entries' texts over tokens of all served texts (issue 20's precision). */
  tokenPrecision: number;
  /** Share of used tokens that are not entry text (tags, attributes, group lines, separators). */
  markupShare: number;
  /** Mean per dialogue of the same share, over dialogues with at least one entry. */
  precisionPerCase: number | null;
  /** Mean tokens used (stats.used_tokens; the baseline's own count). */
  tokens: number;
  /** Mean entries served. */
  entries: number;
  /** Share of served entries that are bare URIs. */
  uriShare: number;
  /** Median round trip through the gateway, ms. */
  p50Ms: number | null;
  /** Requests that failed. */
  errors: number;
}

/**
 * One off-topic row: every dialogue asked against the other user's memories (nothing there is
 * relevant), beside the same configuration on-topic.
 */
export interface OffTopicRow {
  lang: MadialLang;
  split: EvidenceSplit;
  body: EvidenceBody;
  arm: EvidenceArm;
  cases: number;
  /** Mean tokens served off-topic, and on-topic in the same configuration. */
  tokens: number;
  onTokens: number;
  /** `tokens / onTokens` (null when on-topic served nothing). */
  ratio: number | null;
  /** Share of off-topic blocks with no entry, and of on-topic ones. */
  empty: number;
  onEmpty: number;
  /** Mean entries served off-topic. */
  entries: number;
  errors: number;
}

/** The section's outcome. */
export interface EvidenceReport {
  protocol: string;
  rows: EvidenceRow[];
  /** Off-topic questions (per-user pool, {@link OFF_TOPIC_BUDGET} tokens). */
  offTopic: OffTopicRow[];
  writes: ArchiveWrites;
  /** Median round trip of every compat and every evidence request, and their ratio. */
  latency: { compatP50: number | null; evidenceP50: number | null; ratio: number | null };
  firstError?: string;
}

/** A request body of the measured kinds (`packing` null: the body names none, as the plugins send it). */
export function requestBody(body: EvidenceBody, query: string, budget: number, packing: 'compat' | 'evidence' | null, session: string): Record<string, unknown> {
  const p = packing === null ? {} : { packing };
  if (body === 'bare') return { query, mode: 'context', max_tokens: budget, ...p };
  return { query, mode: 'context', purpose: 'coding', score_threshold: PLUGIN_THRESHOLD, max_tokens: budget, session_id: `cc-${session}`, dedup_turns: 5, ...p };
}

/** A list hit as the baseline packs it. */
export interface ListHit {
  uri: string;
  score: number;
  abstract: string;
}

/**
 * The list-packing baseline: hits in rank order as §6.1 fragments at tier `abstract` (a hit
 * without an abstract as its bare URI), each after the first costing one separator token,
 * until the next would not fit (estimated tokens, as the contract counts them).
 */
export function packList(hits: readonly ListHit[], maxTokens: number): Served & { ms: 0 } {
  const entries: ServedEntry[] = [];
  let used = 0;
  for (const h of hits) {
    const detail = h.abstract.trim() === '' ? 'uri' : 'abstract';
    const text = detail === 'uri' ? '' : h.abstract.trim();
    const cost = countTokens(renderFragment({ uri: h.uri, category: categoryOfUri(h.uri), score: h.score, detail, text })) + (entries.length > 0 ? 1 : 0);
    if (used + cost > maxTokens) break;
    used += cost;
    entries.push({ uri: h.uri, detail, text });
  }
  return { entries, usedTokens: used, ms: 0 };
}

/** Score one arm over the dialogues (a missing answer counts as a failed, empty block). */
export function scoreArm(cases: readonly MadialCase[], served: ReadonlyMap<number, Served>): Omit<EvidenceRow, 'lang' | 'pool' | 'split' | 'body' | 'budget' | 'arm' | 'errors'> {
  let goldTextTokens = 0;
  let textTokens = 0;
  let usedTokens = 0;
  let recall = 0;
  let goldServed = 0;
  let entries = 0;
  let uris = 0;
  let tokens = 0;
  let perCase = 0;
  let nonEmpty = 0;
  const ms: number[] = [];
  for (const c of cases) {
    const s = served.get(c.index);
    if (!s) continue;
    const gold = new Set(c.relevant);
    const withText = new Set(s.entries.filter((e) => e.detail !== 'uri').map((e) => idOfUri(e.uri)).filter((id): id is number => id !== null && gold.has(id)));
    recall += gold.size > 0 ? withText.size / gold.size : 0;
    for (const e of s.entries) {
      if (e.detail === 'uri') continue;
      const n = countTokens(e.text);
      textTokens += n;
      const id = idOfUri(e.uri);
      if (id !== null && gold.has(id)) goldTextTokens += n;
    }
    usedTokens += s.usedTokens;
    goldServed += withText.size;
    entries += s.entries.length;
    uris += s.entries.filter((e) => e.detail === 'uri').length;
    tokens += s.usedTokens;
    if (s.entries.length > 0) {
      perCase += withText.size / s.entries.length;
      nonEmpty++;
    }
    if (s.ms > 0) ms.push(s.ms);
  }
  const n = cases.length;
  return {
    cases: n,
    recall: n ? recall / n : Number.NaN,
    precision: entries ? goldServed / entries : 0,
    tokenPrecision: textTokens ? goldTextTokens / textTokens : 0,
    markupShare: usedTokens ? Math.max(0, usedTokens - textTokens) / usedTokens : 0,
    precisionPerCase: nonEmpty ? perCase / nonEmpty : null,
    tokens: n ? tokens / n : Number.NaN,
    entries: n ? entries / n : Number.NaN,
    uriShare: entries ? uris / entries : 0,
    p50Ms: ms.length ? summarize(ms).p50 : null,
  };
}

/** Off-topic figures of one configuration, beside its on-topic answers. */
export function offTopicFigures(cases: readonly MadialCase[], off: ReadonlyMap<number, Served>, on: ReadonlyMap<number, Served>): Pick<OffTopicRow, 'cases' | 'tokens' | 'onTokens' | 'ratio' | 'empty' | 'onEmpty' | 'entries'> {
  const mean = (m: ReadonlyMap<number, Served>, f: (s: Served) => number) => {
    const v = cases.map((c) => m.get(c.index)).filter((s): s is Served => s !== undefined).map(f);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
  };
  const tokens = mean(off, (s) => s.usedTokens);
  const onTokens = mean(on, (s) => s.usedTokens);
  return {
    cases: cases.length,
    tokens,
    onTokens,
    ratio: onTokens > 0 ? tokens / onTokens : null,
    empty: mean(off, (s) => (s.entries.length === 0 ? 1 : 0)),
    onEmpty: mean(on, (s) => (s.entries.length === 0 ? 1 : 0)),
    entries: mean(off, (s) => s.entries.length),
  };
}

interface ContextBody {
  result?: { entries?: Array<{ uri: string; detail: string; text?: string }>; stats?: { used_tokens?: number } };
}

/** Options of {@link measureEvidence}. */
export interface EvidenceOptions {
  /** Pools measured. @default both */
  pools?: readonly Pool[];
  /** Dialogues per language (the first n). @default all */
  cases?: number;
  /** Concurrent archive writes. @default 8 */
  concurrency?: number;
  /** A tag that keeps this run's session ids apart from another's in the same store. @default Date.now() */
  runId?: string;
  /** Progress lines. */
  log?: (msg: string) => void;
}

/** Write the archives, run every dialogue in every configuration, and score them. */
export async function measureEvidence(client: JsonClient, dir: string, opts: EvidenceOptions = {}): Promise<EvidenceReport> {
  const all: Record<MadialLang, MadialSet> = { en: loadMadial(dir, 'en'), zh: loadMadial(dir, 'zh') };
  const sets: Record<MadialLang, MadialSet> = {
    en: { ...all.en, cases: all.en.cases.slice(0, opts.cases ?? all.en.cases.length) },
    zh: { ...all.zh, cases: all.zh.cases.slice(0, opts.cases ?? all.zh.cases.length) },
  };
  const pools = opts.pools ?? (['user', 'all'] as const);
  const runId = opts.runId ?? Date.now().toString(36);
  const writes = await writeMadialArchives(client, all, pools, opts.concurrency ?? 8);
  let firstError = writes.firstError;
  const rows: EvidenceRow[] = [];
  const latency: Record<'compat' | 'evidence', number[]> = { compat: [], evidence: [] };

  const offTopic: OffTopicRow[] = [];
  const packingOf = (arm: 'compat' | 'evidence' | 'default') => (arm === 'default' ? null : arm);
  for (const p of pools) {
    for (const lang of ['en', 'zh'] as const) {
      const cases = sets[lang].cases;
      const users = [...new Set(all[lang].memories.map((m) => m.user))].sort();
      const otherOf = (u: string) => users[(users.indexOf(u) + 1) % users.length]!;
      const headersOf = (c: MadialCase, user = c.user) => ({ 'X-OpenViking-Account': poolAccount(lang, p), 'X-OpenViking-User': poolUser(lang, p, user) });
      opts.log?.(`evidence: ${lang}, pool ${p}: ${cases.length} dialogues × ${EVIDENCE_BUDGETS.length} budgets × 2 bodies × 2 packings${p === 'user' ? ', and off-topic' : ''}`);
      const find = async (c: MadialCase, body: EvidenceBody, user: string): Promise<{ hits: ListHit[]; ms: number } | null> => {
        const r = await client.post('/api/v1/search/find', { query: c.query, limit: BASELINE_LIST, ...(body === 'plugin' ? { score_threshold: PLUGIN_THRESHOLD } : {}) }, headersOf(c, user));
        if (r.status !== 200) {
          firstError ??= `find (${lang}, case ${c.index}): HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return null;
        }
        const res = (r.body as { result?: { memories?: ListHit[]; resources?: ListHit[]; skills?: ListHit[] } }).result ?? {};
        return { hits: [...(res.memories ?? []), ...(res.resources ?? []), ...(res.skills ?? [])].sort((a, b) => b.score - a.score), ms: r.ms };
      };
      const context = async (c: MadialCase, body: EvidenceBody, budget: number, arm: 'compat' | 'evidence' | 'default', user: string, tag: string): Promise<Served | null> => {
        const session = `madial-${runId}-${lang}-${p}-${budget}-${arm}-${tag}-${c.index}`;
        const r = await client.post('/api/v1/search/search', requestBody(body, c.query, budget, packingOf(arm), session), headersOf(c, user));
        if (r.status !== 200) {
          firstError ??= `context ${arm} (${lang}, ${body}, ${budget}, case ${c.index}): HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return null;
        }
        const res = (r.body as ContextBody).result ?? {};
        return { entries: (res.entries ?? []).map((e) => ({ uri: e.uri, detail: e.detail, text: e.text ?? '' })), usedTokens: res.stats?.used_tokens ?? 0, ms: r.ms };
      };
      const push = (body: EvidenceBody, budget: number, arm: EvidenceArm, served: ReadonlyMap<number, Served>, errors: number) => {
        for (const split of ['all', 'heldout'] as const) {
          const scored = split === 'all' ? cases : cases.filter((c) => isHeldOut(c.index));
          rows.push({ lang, pool: p, split, body, budget, arm, ...scoreArm(scored, served), errors });
        }
      };
      // The baselines: the same search as a list, with and without the plugin's threshold.
      const lists = new Map<EvidenceBody, Map<number, { hits: ListHit[]; ms: number }>>();
      const listErrors = new Map<EvidenceBody, number>();
      for (const body of EVIDENCE_BODIES) {
        const got = new Map<number, { hits: ListHit[]; ms: number }>();
        let errors = 0;
        for (const c of cases) {
          const l = await find(c, body, c.user);
          if (l) got.set(c.index, l);
          else errors++;
        }
        lists.set(body, got);
        listErrors.set(body, errors);
      }
      const onTopic = new Map<string, Map<number, Served>>();
      for (const body of EVIDENCE_BODIES) {
        for (const budget of EVIDENCE_BUDGETS) {
          const arms: Array<'compat' | 'evidence' | 'default'> = budget === OFF_TOPIC_BUDGET ? ['compat', 'evidence', 'default'] : ['compat', 'evidence'];
          const served = new Map(arms.map((a) => [a, new Map<number, Served>()] as const));
          const errors = new Map<string, number>(arms.map((a) => [a, 0]));
          for (const c of cases) {
            const order = c.index % 2 === 0 ? arms : [...arms].reverse();
            for (const arm of order) {
              const s = await context(c, body, budget, arm, c.user, 'on');
              if (!s) {
                errors.set(arm, errors.get(arm)! + 1);
                continue;
              }
              served.get(arm)!.set(c.index, s);
              if (arm !== 'default') latency[arm].push(s.ms);
            }
          }
          const base = new Map<number, Served>();
          for (const [index, l] of lists.get(body)!) base.set(index, { ...packList(l.hits.slice(0, BASELINE_LIST), budget), ms: l.ms });
          push(body, budget, 'baseline', base, listErrors.get(body)!);
          for (const arm of arms) push(body, budget, arm, served.get(arm)!, errors.get(arm)!);
          if (budget === OFF_TOPIC_BUDGET) {
            onTopic.set(`${body}/baseline`, base);
            for (const arm of arms) onTopic.set(`${body}/${arm}`, served.get(arm)!);
          }
        }
      }
      if (p !== 'user' || users.length < 2) continue;
      // Off-topic: each dialogue asked against the other user's memories.
      for (const body of EVIDENCE_BODIES) {
        for (const arm of ['baseline', 'compat', 'evidence', 'default'] as const) {
          const served = new Map<number, Served>();
          let errors = 0;
          for (const c of cases) {
            const other = otherOf(c.user);
            let s: Served | null;
            if (arm === 'baseline') {
              const l = await find(c, body, other);
              s = l ? { ...packList(l.hits.slice(0, BASELINE_LIST), OFF_TOPIC_BUDGET), ms: l.ms } : null;
            } else s = await context(c, body, OFF_TOPIC_BUDGET, arm, other, 'off');
            if (s) served.set(c.index, s);
            else errors++;
          }
          const on = onTopic.get(`${body}/${arm}`)!;
          for (const split of ['all', 'heldout'] as const) {
            const scored = split === 'all' ? cases : cases.filter((c) => isHeldOut(c.index));
            offTopic.push({ lang, split, body, arm, ...offTopicFigures(scored, served, on), errors });
          }
        }
      }
    }
  }
  const compatP50 = latency.compat.length ? summarize(latency.compat).p50 : null;
  const evidenceP50 = latency.evidence.length ? summarize(latency.evidence).p50 : null;
  return {
    protocol:
      'MADial archives written through /api/v1/content/write as in the madial section (events memories, one account per language and pool); ' +
      'every test dialogue asked through /api/v1/search/search mode context at 400/1600/4000 tokens with the plugin body ' +
      `{query, mode, purpose:"coding", score_threshold:${PLUGIN_THRESHOLD}, max_tokens, session_id (new per request), dedup_turns:5} and the bare body {query, mode, max_tokens}, ` +
      'packing compat and evidence in turn (order alternating per dialogue), sequentially; baseline = /find {query, limit:50} with the body\'s threshold, packed in rank order as ' +
      '§6.1 abstract fragments until the next does not fit; recall = mean share of gold ids served with text; precision = gold entries with text / all entries served; ' +
      'token precision = tokens of gold entries\' texts / tokens of all served texts; markup share = (used tokens − text tokens) / used tokens (estimate); ' +
      `arm "default" = the body without packing (the server's default) at ${OFF_TOPIC_BUDGET} tokens; split "heldout" = dialogues with index % 3 == 0 (the relevance score's held-out split); ` +
      `off-topic = every dialogue of the per-user pool asked as the other user (nothing there is relevant) at ${OFF_TOPIC_BUDGET} tokens, tokens and empty blocks beside the same configuration on-topic`,
    rows,
    offTopic,
    writes,
    latency: { compatP50, evidenceP50, ratio: compatP50 && evidenceP50 ? evidenceP50 / compatP50 : null },
    ...(firstError ? { firstError } : {}),
  };
}
