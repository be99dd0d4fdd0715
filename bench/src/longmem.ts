/**
 * Long-memory context quality (`longmem` section): how much of a planted fact's answer a
 * context block delivers when the memory store is months of chit-chat, beside a plain list
 * packed into the same budget. The second context-quality section next to `evidence` (MADial):
 * there the queries are whole dialogues and the gold is a memory id; here the queries are short
 * questions worded unlike the fact, and the gold is text — the answer's words must be in what
 * was served, whatever URI or tier carried them.
 *
 * The conversations (`longmem-data.ts`) are written through the gateway in two shapes, each in
 * accounts of its own: `turns`, one events memory per turn
 * (`viking://user/<u>/memories/events/<date>/t<NNN>.md`, the user line and the assistant's
 * reply), and `sessions`, one memory per session (`…/events/sessions/<date>.md`, a `## <date>`
 * header and every turn). Every question is then asked through `/api/v1/search/search` in
 * context mode at 400, 1600 and 4000 tokens with the evidence section's two bodies
 * ({@link requestBody}), compat and evidence in turn (order alternating per question), beside
 * the list baseline ({@link packList} over `/find`'s top 50).
 */
import { countTokens } from '@ctxmesh/kernel';
import { BASELINE_LIST, EVIDENCE_BODIES, EVIDENCE_BUDGETS, OFF_TOPIC_BUDGET, PLUGIN_THRESHOLD, packList, requestBody, type EvidenceBody, type ListHit } from './evidence';
import type { JsonClient } from './http';
import {
  LONGMEM_LANGS,
  containsSpan,
  generateLongmem,
  normalizeText,
  sessionText,
  turnLines,
  turnText,
  turnsOf,
  type LongmemLang,
  type LongmemQuestion,
  type LongmemSet,
  type LongmemTurn,
  type QuestionKind,
} from './longmem-data';
import { pool } from './madial';
import { summarize } from './stats';

/** How the conversations are stored: a memory per turn, or a memory per session. */
export type LongmemShape = 'turns' | 'sessions';
/** The shapes, in run order. */
export const LONGMEM_SHAPES: readonly LongmemShape[] = ['turns', 'sessions'];
/** What a row packs with: a packing, or the list baseline. */
export type LongmemArm = 'baseline' | 'compat' | 'evidence';
/** Which questions a row scores: all, or the held-out third (`hashSeed(id) % 3 === 0`). */
export type LongmemRowSplit = 'all' | 'heldout';
/** Question kinds, for the per-kind recall. */
export const QUESTION_KINDS: readonly QuestionKind[] = ['single', 'two-turn', 'corrected'];

/** The account a (shape, language) is written to: shapes never share a corpus, nor do languages. */
export function shapeAccount(shape: LongmemShape, lang: LongmemLang): string {
  return `longmem-${shape}-${lang}`;
}

/** URI of a turn's memory (`turns` shape). */
export function turnUri(user: string, t: Pick<LongmemTurn, 'id' | 'session'>): string {
  return `viking://user/${user}/memories/events/${t.session}/${t.id}.md`;
}

/** URI of a session's memory (`sessions` shape). */
export function sessionUri(user: string, date: string): string {
  return `viking://user/${user}/memories/events/sessions/${date}.md`;
}

/** What one request served, as scored: the entries' texts, their count, the tokens used and the time. */
export interface LongmemServed {
  /** Text of every served entry (`entries[].text`; the packed abstracts for the baseline), `""` for a bare URI. */
  texts: string[];
  entries: number;
  /** `stats.used_tokens` (the baseline's own count, separators included). */
  usedTokens: number;
  /** Round trip, ms (0: not timed). */
  ms: number;
}

/** One row: a (shape, language, split, body, budget, arm) over its questions. */
export interface LongmemRow {
  shape: LongmemShape;
  lang: LongmemLang;
  split: LongmemRowSplit;
  body: EvidenceBody;
  budget: number;
  arm: LongmemArm;
  /** Questions scored. */
  questions: number;
  /** Mean over questions of the share of its answer spans found in the served text. */
  recall: number;
  /** The same mean per question kind (null: no question of the kind). */
  recallByKind: Record<QuestionKind, number | null>;
  /** Tokens of gold-turn lines found in the served text (each once) / tokens of all served text, summed over questions. */
  precision: number;
  /** (used tokens − tokens of the entries' text) / used tokens, summed over questions: the fragments' tags and separators. */
  markupShare: number;
  /** Share of corrected-fact questions whose stale value was served (null: none). */
  staleShare: number | null;
  /** Corrected-fact questions scored. */
  staleQuestions: number;
  /** Mean tokens used. */
  tokens: number;
  /** Mean entries served. */
  entries: number;
  /** Median round trip, ms. */
  p50Ms: number | null;
  /** Requests that failed. */
  errors: number;
}

/** One off-topic row: every question asked as another user of its language, beside the same configuration on-topic. */
export interface LongmemOffTopicRow {
  shape: LongmemShape;
  lang: LongmemLang;
  split: LongmemRowSplit;
  body: EvidenceBody;
  arm: LongmemArm;
  questions: number;
  /** Mean tokens used off-topic, and on-topic in the same configuration. */
  tokens: number;
  onTokens: number;
  /** `tokens / onTokens` (null when on-topic served nothing). */
  ratio: number | null;
  /** Share of off-topic blocks with no entry, and of on-topic ones. */
  empty: number;
  onEmpty: number;
  errors: number;
}

/** The section's outcome. */
export interface LongmemReport {
  protocol: string;
  /** What was generated and written. */
  data: { seed: number; users: number; turns: number; questions: number; heldout: number; writes: number; writeErrors: number };
  rows: LongmemRow[];
  /** Off-topic questions at {@link OFF_TOPIC_BUDGET} tokens. */
  offTopic: LongmemOffTopicRow[];
  /** Median round trip of every compat and every evidence request, and their ratio. */
  latency: { compatP50: number | null; evidenceP50: number | null; ratio: number | null };
  firstError?: string;
}

/** Share of a question's answer spans found in the served text ({@link containsSpan}). */
export function spanRecall(spans: readonly string[], servedText: string): number {
  if (spans.length === 0) return 0;
  const h = normalizeText(servedText);
  return spans.filter((s) => containsSpan(h, s, true)).length / spans.length;
}

/**
 * Tokens (`countTokens`) of the gold lines found in the served text, each distinct line once.
 * Lines, not whole turns, so a tier that serves a turn's user line without the reply still
 * counts what it served.
 */
export function goldTokensFound(goldLines: readonly string[], servedText: string): number {
  const h = normalizeText(servedText);
  let n = 0;
  for (const line of new Set(goldLines)) if (normalizeText(line) !== '' && h.includes(normalizeText(line))) n += countTokens(line);
  return n;
}

/** Tokens of the served entries' own text (no tags, no separators). */
export function textTokens(s: LongmemServed): number {
  return s.texts.reduce((a, t) => a + (t === '' ? 0 : countTokens(t)), 0);
}

/** A context response as scored. */
export function servedFromContext(body: unknown, ms: number): LongmemServed {
  const res = (body as { result?: { entries?: Array<{ text?: string }>; stats?: { used_tokens?: number } } }).result ?? {};
  const entries = res.entries ?? [];
  return { texts: entries.map((e) => e.text ?? ''), entries: entries.length, usedTokens: res.stats?.used_tokens ?? 0, ms };
}

/** The list baseline as scored: {@link packList}'s packing of the hits, with the texts it packed. */
export function baselineServed(hits: readonly ListHit[], budget: number, ms: number): LongmemServed {
  const packed = packList(hits, budget);
  return { texts: packed.entries.map((e) => e.text), entries: packed.entries.length, usedTokens: packed.usedTokens, ms };
}

/**
 * Score one arm over its questions (a failed request counts as an empty block).
 * @param goldLinesOf the stored lines of a question's gold turns
 */
export function scoreLongmem(
  questions: readonly LongmemQuestion[],
  served: ReadonlyMap<string, LongmemServed>,
  goldLinesOf: (q: LongmemQuestion) => readonly string[],
): Omit<LongmemRow, 'shape' | 'lang' | 'split' | 'body' | 'budget' | 'arm' | 'errors'> {
  let recall = 0;
  const byKind = new Map<QuestionKind, { sum: number; n: number }>(QUESTION_KINDS.map((k) => [k, { sum: 0, n: 0 }]));
  let goldTok = 0;
  let servedTok = 0;
  let used = 0;
  let entries = 0;
  let staleHits = 0;
  let staleQuestions = 0;
  const ms: number[] = [];
  for (const q of questions) {
    const s = served.get(q.id);
    const text = s ? s.texts.join('\n') : '';
    const r = spanRecall(q.spans, text);
    recall += r;
    const k = byKind.get(q.kind)!;
    k.sum += r;
    k.n++;
    if (q.staleSpans.length > 0) {
      staleQuestions++;
      const h = normalizeText(text);
      if (q.staleSpans.some((x) => containsSpan(h, x, true))) staleHits++;
    }
    if (!s) continue;
    goldTok += goldTokensFound(goldLinesOf(q), text);
    servedTok += textTokens(s);
    used += s.usedTokens;
    entries += s.entries;
    if (s.ms > 0) ms.push(s.ms);
  }
  const n = questions.length;
  const recallByKind = Object.fromEntries(QUESTION_KINDS.map((kind) => [kind, byKind.get(kind)!.n ? byKind.get(kind)!.sum / byKind.get(kind)!.n : null])) as Record<QuestionKind, number | null>;
  return {
    questions: n,
    recall: n ? recall / n : Number.NaN,
    recallByKind,
    precision: servedTok ? goldTok / servedTok : 0,
    markupShare: used ? (used - servedTok) / used : 0,
    staleShare: staleQuestions ? staleHits / staleQuestions : null,
    staleQuestions,
    tokens: n ? used / n : Number.NaN,
    entries: n ? entries / n : Number.NaN,
    p50Ms: ms.length ? summarize(ms).p50 : null,
  };
}

/** Off-topic figures of one configuration beside its on-topic answers (means over the questions answered). */
export function offTopicFigures(questions: readonly LongmemQuestion[], off: ReadonlyMap<string, LongmemServed>, on: ReadonlyMap<string, LongmemServed>): Pick<LongmemOffTopicRow, 'questions' | 'tokens' | 'onTokens' | 'ratio' | 'empty' | 'onEmpty'> {
  const mean = (m: ReadonlyMap<string, LongmemServed>, f: (s: LongmemServed) => number) => {
    const v = questions.map((q) => m.get(q.id)).filter((s): s is LongmemServed => s !== undefined).map(f);
    return v.length ? v.reduce((a, b) => a + b, 0) / v.length : Number.NaN;
  };
  const tokens = mean(off, (s) => s.usedTokens);
  const onTokens = mean(on, (s) => s.usedTokens);
  return { questions: questions.length, tokens, onTokens, ratio: onTokens > 0 ? tokens / onTokens : null, empty: mean(off, (s) => (s.entries === 0 ? 1 : 0)), onEmpty: mean(on, (s) => (s.entries === 0 ? 1 : 0)) };
}

/** One memory to write. */
interface Write {
  account: string;
  user: string;
  uri: string;
  content: string;
}

/** The writes of a shape: a memory per turn, or a memory per session. */
export function shapeWrites(shape: LongmemShape, set: LongmemSet): Write[] {
  const account = shapeAccount(shape, set.lang);
  return set.users.flatMap((u) =>
    shape === 'turns'
      ? turnsOf(u).map((t) => ({ account, user: u.id, uri: turnUri(u.id, t), content: turnText(set.lang, t) }))
      : u.sessions.map((s) => ({ account, user: u.id, uri: sessionUri(u.id, s.date), content: sessionText(set.lang, s) })),
  );
}

/** Options of {@link measureLongmem}. */
export interface MeasureLongmemOptions {
  /** Generator seed. @default LONGMEM_SEED */
  seed?: number;
  /** Users per language. @default 4 */
  users?: number;
  /** Questions per user. @default every fact kind (25) */
  questions?: number;
  /** Shapes measured. @default both */
  shapes?: readonly LongmemShape[];
  /** Concurrent writes. @default 8 */
  concurrency?: number;
  /** A tag that keeps this run's session ids apart from another's in the same store. @default Date.now() */
  runId?: string;
  /** Progress lines. */
  log?: (msg: string) => void;
}

/** Write both shapes, ask every question in every configuration (and off-topic), and score them. */
export async function measureLongmem(client: JsonClient, opts: MeasureLongmemOptions = {}): Promise<LongmemReport> {
  const sets = Object.fromEntries(LONGMEM_LANGS.map((lang) => [lang, generateLongmem(lang, { seed: opts.seed, users: opts.users, questions: opts.questions })])) as Record<LongmemLang, LongmemSet>;
  const shapes = opts.shapes ?? LONGMEM_SHAPES;
  const runId = opts.runId ?? Date.now().toString(36);
  let firstError: string | undefined;
  let writes = 0;
  let writeErrors = 0;
  for (const shape of shapes) {
    const all = LONGMEM_LANGS.flatMap((lang) => shapeWrites(shape, sets[lang]));
    opts.log?.(`longmem: writing ${all.length} memories (shape ${shape})`);
    await pool(all, opts.concurrency ?? 8, async (w) => {
      const r = await client.post('/api/v1/content/write', { uri: w.uri, content: w.content, mode: 'replace', wait: true }, { 'X-OpenViking-Account': w.account, 'X-OpenViking-User': w.user });
      writes++;
      if (r.status !== 200) {
        writeErrors++;
        firstError ??= `write ${w.uri}: HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
      }
    });
  }

  const rows: LongmemRow[] = [];
  const offTopic: LongmemOffTopicRow[] = [];
  const latency: Record<'compat' | 'evidence', number[]> = { compat: [], evidence: [] };
  for (const shape of shapes) {
    for (const lang of LONGMEM_LANGS) {
      const set = sets[lang];
      const questions = set.questions;
      const turns = new Map(set.users.flatMap((u) => turnsOf(u).map((t) => [`${u.id}/${t.id}`, t] as const)));
      const goldLinesOf = (q: LongmemQuestion) => q.gold.flatMap((id) => turnLines(lang, turns.get(`${q.user}/${id}`)!));
      const users = set.users.map((u) => u.id);
      const otherOf = (u: string) => users[(users.indexOf(u) + 1) % users.length]!;
      const headers = (user: string) => ({ 'X-OpenViking-Account': shapeAccount(shape, lang), 'X-OpenViking-User': user });
      opts.log?.(`longmem: ${shape}, ${lang}: ${questions.length} questions × ${EVIDENCE_BUDGETS.length} budgets × 2 bodies × 2 packings, the list baseline, and off-topic`);

      const find = async (q: LongmemQuestion, body: EvidenceBody, user: string): Promise<{ hits: ListHit[]; ms: number } | null> => {
        const r = await client.post('/api/v1/search/find', { query: q.query, limit: BASELINE_LIST, ...(body === 'plugin' ? { score_threshold: PLUGIN_THRESHOLD } : {}) }, headers(user));
        if (r.status !== 200) {
          firstError ??= `find (${shape}, ${q.id}): HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return null;
        }
        const res = (r.body as { result?: { memories?: ListHit[]; resources?: ListHit[]; skills?: ListHit[] } }).result ?? {};
        return { hits: [...(res.memories ?? []), ...(res.resources ?? []), ...(res.skills ?? [])].sort((a, b) => b.score - a.score).slice(0, BASELINE_LIST), ms: r.ms };
      };
      const context = async (q: LongmemQuestion, body: EvidenceBody, budget: number, arm: 'compat' | 'evidence', user: string, tag: string): Promise<LongmemServed | null> => {
        const session = `longmem-${runId}-${shape}-${budget}-${arm}-${tag}-${q.id}`;
        const r = await client.post('/api/v1/search/search', requestBody(body, q.query, budget, arm, session), headers(user));
        if (r.status !== 200) {
          firstError ??= `context ${arm} (${shape}, ${body}, ${budget}, ${q.id}): HTTP ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`;
          return null;
        }
        return servedFromContext(r.body, r.ms);
      };
      const push = (body: EvidenceBody, budget: number, arm: LongmemArm, served: ReadonlyMap<string, LongmemServed>, errors: number) => {
        for (const split of ['all', 'heldout'] as const) {
          const scored = split === 'all' ? questions : questions.filter((q) => q.split === 'heldout');
          rows.push({ shape, lang, split, body, budget, arm, ...scoreLongmem(scored, served, goldLinesOf), errors });
        }
      };

      const onTopic = new Map<string, Map<string, LongmemServed>>();
      for (const body of EVIDENCE_BODIES) {
        const lists = new Map<string, { hits: ListHit[]; ms: number }>();
        let listErrors = 0;
        for (const q of questions) {
          const l = await find(q, body, q.user);
          if (l) lists.set(q.id, l);
          else listErrors++;
        }
        for (const budget of EVIDENCE_BUDGETS) {
          const served = { compat: new Map<string, LongmemServed>(), evidence: new Map<string, LongmemServed>() };
          const errors = { compat: 0, evidence: 0 };
          for (const [i, q] of questions.entries()) {
            const order = i % 2 === 0 ? (['compat', 'evidence'] as const) : (['evidence', 'compat'] as const);
            for (const arm of order) {
              const s = await context(q, body, budget, arm, q.user, 'on');
              if (!s) {
                errors[arm]++;
                continue;
              }
              served[arm].set(q.id, s);
              latency[arm].push(s.ms);
            }
          }
          const base = new Map<string, LongmemServed>();
          for (const [id, l] of lists) base.set(id, baselineServed(l.hits, budget, l.ms));
          push(body, budget, 'baseline', base, listErrors);
          push(body, budget, 'compat', served.compat, errors.compat);
          push(body, budget, 'evidence', served.evidence, errors.evidence);
          if (budget === OFF_TOPIC_BUDGET) {
            onTopic.set(`${body}/baseline`, base);
            onTopic.set(`${body}/compat`, served.compat);
            onTopic.set(`${body}/evidence`, served.evidence);
          }
        }
      }
      if (users.length < 2) continue;
      // Off-topic: each question asked as the next user of its language, whose conversation
      // has other facts of the same kinds (so the topic words match, the answer is not there).
      for (const body of EVIDENCE_BODIES) {
        for (const arm of ['baseline', 'compat', 'evidence'] as const) {
          const served = new Map<string, LongmemServed>();
          let errors = 0;
          for (const q of questions) {
            const other = otherOf(q.user);
            let s: LongmemServed | null;
            if (arm === 'baseline') {
              const l = await find(q, body, other);
              s = l ? baselineServed(l.hits, OFF_TOPIC_BUDGET, l.ms) : null;
            } else s = await context(q, body, OFF_TOPIC_BUDGET, arm, other, 'off');
            if (s) served.set(q.id, s);
            else errors++;
          }
          const on = onTopic.get(`${body}/${arm}`)!;
          for (const split of ['all', 'heldout'] as const) {
            const scored = split === 'all' ? questions : questions.filter((q) => q.split === 'heldout');
            offTopic.push({ shape, lang, split, body, arm, ...offTopicFigures(scored, served, on), errors });
          }
        }
      }
    }
  }
  const compatP50 = latency.compat.length ? summarize(latency.compat).p50 : null;
  const evidenceP50 = latency.evidence.length ? summarize(latency.evidence).p50 : null;
  const all = LONGMEM_LANGS.map((l) => sets[l]);
  return {
    protocol:
      'synthetic multi-session conversations (bench/src/longmem-data.ts: per language 4 users × 8 dated sessions × 36–44 turns, facts planted among chit-chat, questions paraphrased; ' +
      'two-turn answers and facts corrected in a later session); written through /api/v1/content/write wait:true, shape "turns" = one events memory per turn ' +
      '(viking://user/<u>/memories/events/<date>/t<NNN>.md), shape "sessions" = one per session (…/events/sessions/<date>.md), one account per shape and language; ' +
      'every question asked through /api/v1/search/search mode context at 400/1600/4000 tokens with the evidence section\'s plugin and bare bodies, compat and evidence in turn ' +
      '(order alternating per question), sequentially; baseline = /find {query, limit:50} (the body\'s threshold) packed in rank order as §6.1 abstract fragments until the next does not fit; ' +
      'scored by text: recall = mean share of answer spans found (case-insensitive, whitespace-normalised, ASCII word boundaries) in the served entries\' text; ' +
      'precision = tokens of gold-turn lines found in it / tokens of all served text; markup share = (used_tokens − tokens of entry text) / used_tokens; ' +
      'stale = share of corrected-fact questions whose earlier value was served; split "heldout" = questions with hashSeed(id) % 3 == 0; ' +
      `off-topic = every question asked as the next user of its language at ${OFF_TOPIC_BUDGET} tokens`,
    data: {
      seed: all[0]!.seed,
      users: all.reduce((a, s) => a + s.users.length, 0),
      turns: all.reduce((a, s) => a + s.users.reduce((b, u) => b + turnsOf(u).length, 0), 0),
      questions: all.reduce((a, s) => a + s.questions.length, 0),
      heldout: all.reduce((a, s) => a + s.questions.filter((q) => q.split === 'heldout').length, 0),
      writes,
      writeErrors,
    },
    rows,
    offTopic,
    latency: { compatP50, evidenceP50, ratio: compatP50 && evidenceP50 ? evidenceP50 / compatP50 : null },
    ...(firstError ? { firstError } : {}),
  };
}
