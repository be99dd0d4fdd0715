/**
 * The relevance score's fit and its calibration (issue 19): what `score` estimates, measured.
 *
 * Data: MADial-Bench (MIT), both languages, the per-user pools. Each memory is applied through
 * the indexer's own apply path to an embedded index (the records `npm start` would store), and
 * each test dialogue is searched through the index's own hybrid search, so every hit carries
 * the {@link RelevanceFeatures} the shared ranking computed for it. Two query forms per dialogue:
 * the dialogue before its test turn (the `madial` section's protocol) and the user's last line
 * alone, without its speaker tag (what a harness's prompt hook sends). Each is asked on-topic
 * (against its own user's memories: the gold ids are relevant) and off-topic (against the other
 * user's memories: nothing is relevant).
 *
 * Split: dialogues whose index is a multiple of 3 are held out; the rest train. The logistic
 * model is fitted on the training split only (Newton's method with a small ridge), and the
 * noise floor is the lowest probability at which, on the training split's dialogues (both
 * languages together), off-topic questions are served at most {@link FLOOR_OFF_VOLUME} of the
 * on-topic hits and at least {@link FLOOR_OFF_EMPTY} of them get nothing; the intercept is then shifted so that floor
 * scores {@link NOISE_FLOOR_SCORE}. Everything reported is on the held-out split.
 *
 * The logistic fit is written here (about forty lines) rather than taken from a package: the
 * model has seven inputs and a few thousand rows, Newton's method converges in a handful of
 * steps and is deterministic, and the fit runs only in the bench.
 */
import { LexicalEmbedder } from '@ctxmesh/embedder';
import { Applier, validateWrite } from '@ctxmesh/indexer';
import { indexer } from '@ctxmesh/proto';
import { EVIDENCE_FLOOR, estimateTokens } from '@ctxmesh/kernel';
import { DEFAULT_TUNING, EmbeddedVectorIndex, openEmbeddedDb, ranking, type Visibility } from '@ctxmesh/stores';
import { idOfUri, poolAccount, poolUser } from './madial';
import { loadMadial, type MadialLang } from './madial-data';

const { NOISE_FLOOR_SCORE, RELEVANCE_INPUTS, relevanceInputs, relevanceScore, sigmoid } = ranking;
type RelevanceFeatures = ranking.RelevanceFeatures;
type RelevanceModel = ranking.RelevanceModel;

/** Hits asked for per search (what the evidence packing asks for at 1600 tokens, and more). */
export const CALIBRATION_DEPTH = 50;
/** Off-topic hits above the floor, as a share of on-topic hits above it, at most. */
export const FLOOR_OFF_VOLUME = 0.08;
/** Share of off-topic questions with no hit above the floor, at least. */
export const FLOOR_OFF_EMPTY = 0.85;
/** Ridge penalty of the fit (on the weights, not the intercept). */
export const RIDGE = 1e-3;

/** A query form: the whole dialogue before the test turn, or the user's last line alone. */
export type QueryForm = 'dialogue' | 'prompt';
/** A split. */
export type Split = 'train' | 'heldout';

/** One scored hit of one search. */
export interface CalibrationHit {
  features: RelevanceFeatures;
  relevant: boolean;
  /** Estimated tokens of the hit as a compact block entry would serve it (its abstract and ~10 of markup). */
  tokens?: number;
}

/** One search: a (question, form, on/off-topic) triple. */
export interface CalibrationSearch {
  lang: MadialLang;
  split: Split;
  form: QueryForm;
  offTopic: boolean;
  /** Gold ids (empty off-topic). */
  gold: number;
  hits: CalibrationHit[];
}

/** The split of a dialogue. */
export function splitOf(index: number): Split {
  return index % 3 === 0 ? 'heldout' : 'train';
}

const TAG = /^\s*<[^>]+>:\s*/;

/** The user's last line of a dialogue query, without its speaker tag and quotes. */
export function promptOf(query: string): string {
  const lines = query.split('\n').filter((l) => l.trim() !== '' && !/^\s*<Assistant>:/i.test(l) && !/^\s*<助手>/.test(l));
  const last = lines[lines.length - 1] ?? query;
  return last.replace(TAG, '').replace(/^["“「]|["”」]\s*$/g, '').trim();
}

/**
 * Build both languages' per-user stores in memory and run every search. Features do not depend
 * on the model (only the order of the returned hits does), so one run serves the fit and any
 * model's evaluation.
 */
export async function collectSearches(madialDir: string): Promise<CalibrationSearch[]> {
  const embedder = new LexicalEmbedder({ dimension: 256 });
  const db = openEmbeddedDb(':memory:');
  const index = new EmbeddedVectorIndex(db, { dimension: embedder.dimension });
  const applier = new Applier({ index, embedder, outliner: null });
  const out: CalibrationSearch[] = [];
  try {
    for (const lang of ['en', 'zh'] as const) {
      const set = loadMadial(madialDir, lang);
      const account = poolAccount(lang, 'user');
      for (const m of set.memories) {
        const user = poolUser(lang, 'user', m.user);
        const op = indexer.WriteOp.fromPartial({
          identity: { accountId: account, userId: user },
          uri: `viking://user/${user}/memories/events/madial-${m.id}.md`,
          content: m.text,
          mode: indexer.WriteMode.WRITE_MODE_REPLACE,
        });
        const r = await applier.apply(validateWrite(op));
        if (r.status !== 'applied') throw new Error(`calibration: memory ${m.id} was refused: ${r.reason ?? ''}`);
      }
      const users = [...new Set(set.memories.map((m) => m.user))].sort();
      const otherOf = (u: string) => users[(users.indexOf(u) + 1) % users.length]!;
      const search = async (text: string, user: string) => {
        const visibility: Visibility = { account, user: poolUser(lang, 'user', user), actorPeer: null, openPeers: false, allUsers: false, workspace: null };
        const [vector] = await embedder.embed([text]);
        const [hits] = await index.search([{ visibility, vector: vector!, text, targets: [], filter: null, limit: CALIBRATION_DEPTH }]);
        return hits ?? [];
      };
      for (const c of set.cases) {
        const gold = new Set(c.relevant);
        for (const form of ['dialogue', 'prompt'] as const) {
          const text = form === 'dialogue' ? c.query : promptOf(c.query);
          for (const offTopic of [false, true]) {
            const hits = await search(text, offTopic ? otherOf(c.user) : c.user);
            out.push({
              lang,
              split: splitOf(c.index),
              form,
              offTopic,
              gold: offTopic ? 0 : gold.size,
              hits: hits.map((h) => {
                const id = idOfUri(h.node.uri);
                if (!h.features) throw new Error('calibration: the index returned a hit without features');
                return { features: h.features, relevant: !offTopic && id !== null && gold.has(id), tokens: estimateTokens(h.node.abstract ?? '') + ENTRY_MARKUP_TOKENS };
              }),
            });
          }
        }
      }
    }
  } finally {
    await index.close();
    db.close();
  }
  return out;
}

/** Solve `A x = b` (A symmetric positive definite, small) by Gaussian elimination with pivoting. */
function solve(a: number[][], b: number[]): number[] {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(m[r]![c]!) > Math.abs(m[p]![c]!)) p = r;
    [m[c], m[p]] = [m[p]!, m[c]!];
    const piv = m[c]![c]!;
    if (Math.abs(piv) < 1e-12) continue;
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = m[r]![c]! / piv;
      for (let k = c; k <= n; k++) m[r]![k]! -= f * m[c]![k]!;
    }
  }
  return m.map((row, i) => (Math.abs(row[i]!) < 1e-12 ? 0 : row[n]! / row[i]!));
}

/** Logistic regression by Newton's method (IRLS) with a ridge on the weights. */
export function fitLogistic(rows: ReadonlyArray<{ x: readonly number[]; y: number }>, ridge = RIDGE, iterations = 50): RelevanceModel {
  const d = (rows[0]?.x.length ?? 0) + 1;
  let beta = new Array<number>(d).fill(0);
  for (let it = 0; it < iterations; it++) {
    const g = new Array<number>(d).fill(0);
    const h = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    for (const { x, y } of rows) {
      const v = [1, ...x];
      let z = 0;
      for (let i = 0; i < d; i++) z += beta[i]! * v[i]!;
      const p = sigmoid(z);
      const w = Math.max(1e-9, p * (1 - p));
      for (let i = 0; i < d; i++) {
        g[i]! += (p - y) * v[i]!;
        for (let j = 0; j < d; j++) h[i]![j]! += w * v[i]! * v[j]!;
      }
    }
    for (let i = 1; i < d; i++) {
      g[i]! += ridge * rows.length * beta[i]!;
      h[i]![i]! += ridge * rows.length;
    }
    const step = solve(h, g);
    beta = beta.map((b, i) => b - step[i]!);
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  return { intercept: beta[0]!, weights: beta.slice(1) };
}

/** What the floor serves over a set of searches. */
export interface FloorFigures {
  /** Mean share of an on-topic search's gold ids among its hits at or above the floor. */
  recall: number;
  /** Off-topic hits at or above the floor over on-topic hits at or above it. */
  offVolume: number;
  /** Share of off-topic searches with no hit at or above the floor. */
  offEmpty: number;
}

/** {@link FloorFigures} of searches whose hits are scored by `score`, at floor `t` (the floor as its own gate). */
export function floorFigures(searches: readonly CalibrationSearch[], score: (f: RelevanceFeatures) => number, t: number): FloorFigures {
  return gatedFigures(searches, score, t, t);
}

/** The fitted model, its floor and the training figures at it. */
export interface CalibrationFit {
  /** The model as fitted, shifted so that its floor scores {@link NOISE_FLOOR_SCORE}. */
  model: RelevanceModel;
  /** The unshifted model's probability at the floor. */
  floorProbability: number;
  rows: { train: number; relevant: number };
  train: FloorFigures;
}

/**
 * Fit the model and its floor on the training split. The model tells evidence from noise: its
 * positives are the gold hits of on-topic searches and its negatives every hit of off-topic
 * searches (an on-topic hit that is not gold may still bear on the question, so it teaches
 * neither side); both query forms are fitted, so short prompts and long dialogues share the
 * scale. The floor is set on the searches of the `floorForms` forms.
 */
export function fitRelevance(searches: readonly CalibrationSearch[], floorForms: readonly QueryForm[] = ['dialogue']): CalibrationFit {
  const train = searches.filter((s) => s.split === 'train');
  const rows = train.flatMap((s) => s.hits.filter((h) => s.offTopic || h.relevant).map((h) => ({ x: relevanceInputs(h.features), y: h.relevant ? 1 : 0 })));
  const raw = fitLogistic(rows);
  const p = (f: RelevanceFeatures) => relevanceScore(f, raw);
  const floorSet = train.filter((s) => floorForms.includes(s.form));
  // The floor: the lowest probability meeting both off-topic bounds on the training dialogues
  // of both languages together (probabilities on a log grid).
  let floor = 0.999;
  for (let i = 0; i <= 800; i++) {
    const t = Math.exp(Math.log(1e-6) + (i / 800) * (Math.log(0.999) - Math.log(1e-6)));
    const f = floorFigures(floorSet, p, t);
    const meets = f.offVolume <= FLOOR_OFF_VOLUME && f.offEmpty >= FLOOR_OFF_EMPTY;
    if (meets) {
      floor = t;
      break;
    }
  }
  const logit = (q: number) => Math.log(q / (1 - q));
  const model = { intercept: raw.intercept - logit(floor) + logit(NOISE_FLOOR_SCORE), weights: raw.weights };
  return { model, floorProbability: floor, rows: { train: rows.length, relevant: rows.filter((r) => r.y === 1).length }, train: floorFigures(floorSet, (f) => relevanceScore(f, model), NOISE_FLOOR_SCORE) };
}

/** Markup tokens of a compact entry in a group (`<memory uri="name.md">`, its close, a separator). */
export const ENTRY_MARKUP_TOKENS = 10;
/** The budget the evidence floor is fitted at (the bench's off-topic budget). */
export const FLOOR_BUDGET = 1600;

/**
 * What the evidence packing serves (issue 20): nothing unless the best hit reaches `gate`, then
 * every hit at or above `floor` — the same three figures as {@link floorFigures}, and with
 * `budget`, `offVolume` in served tokens (hits in score order while they fit) instead of hits.
 */
export function gatedFigures(searches: readonly CalibrationSearch[], score: (f: RelevanceFeatures) => number, gate: number, floor: number, budget: number | null = null): FloorFigures {
  let recall = 0;
  let on = 0;
  let onHits = 0;
  let offHits = 0;
  let off = 0;
  let offEmpty = 0;
  for (const s of searches) {
    const scores = s.hits.map((h) => score(h.features));
    const open = scores.some((v) => v >= gate);
    const above = open ? s.hits.map((h, i) => [scores[i]!, h] as const).filter(([v]) => v >= floor) : [];
    let kept = above.map(([, h]) => h);
    let volume = kept.length;
    if (budget !== null) {
      // Served in score order while the block holds them (every hit priced; 40 tokens when unknown).
      const order = [...above].sort((a, b) => b[0] - a[0]);
      let used = 0;
      kept = [];
      for (const [, h] of order) {
        const t = h.tokens ?? 40;
        if (used + t > budget) continue;
        used += t;
        kept.push(h);
      }
      volume = used;
    }
    if (s.offTopic) {
      off++;
      offHits += volume;
      if (kept.length === 0) offEmpty++;
    } else {
      on++;
      onHits += volume;
      recall += s.gold > 0 ? kept.filter((h) => h.relevant).length / s.gold : 0;
    }
  }
  return { recall: on ? recall / on : 0, offVolume: onHits ? offHits / onHits : off ? Infinity : 0, offEmpty: off ? offEmpty / off : 1 };
}

/**
 * The evidence floor, fitted on the training split's dialogues (both languages): with the noise
 * floor as the gate, the lowest score on a 0.01 grid from 0.05 at which off-topic questions are
 * served at most {@link FLOOR_OFF_VOLUME} of the tokens on-topic ones are, in blocks of
 * {@link FLOOR_BUDGET} tokens (the product's target is 10 %: a block about nothing is almost empty).
 */
export function fitEvidenceFloor(searches: readonly CalibrationSearch[], model: RelevanceModel, forms: readonly QueryForm[] = ['dialogue']): { floor: number; train: FloorFigures } {
  const train = searches.filter((s) => s.split === 'train' && forms.includes(s.form));
  const score = (f: RelevanceFeatures) => relevanceScore(f, model);
  for (let k = 5; k <= Math.round(NOISE_FLOOR_SCORE * 100); k++) {
    const floor = k / 100;
    const f = gatedFigures(train, score, NOISE_FLOOR_SCORE, floor, FLOOR_BUDGET);
    if (f.offVolume <= FLOOR_OFF_VOLUME) return { floor, train: f };
  }
  return { floor: NOISE_FLOOR_SCORE, train: gatedFigures(train, score, NOISE_FLOOR_SCORE, NOISE_FLOOR_SCORE, FLOOR_BUDGET) };
}

/** One bucket of the calibration curve. */
export interface CurveBucket {
  /** Scores in `[from, to)`. */
  from: number;
  to: number;
  hits: number;
  /** Share of them that are relevant (null for an empty bucket). */
  relevant: number | null;
}

/** Score bucket → share relevant, over the hits of some searches. */
export function calibrationCurve(searches: readonly CalibrationSearch[], model: RelevanceModel, edges: readonly number[] = [0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.65, 0.8, 1.0001]): CurveBucket[] {
  const buckets = edges.slice(0, -1).map((from, i) => ({ from, to: edges[i + 1]!, hits: 0, rel: 0 }));
  for (const s of searches) {
    for (const h of s.hits) {
      const v = relevanceScore(h.features, model);
      const b = buckets.find((x) => v >= x.from && v < x.to);
      if (!b) continue;
      b.hits++;
      if (h.relevant) b.rel++;
    }
  }
  return buckets.map((b) => ({ from: b.from, to: Math.min(1, b.to), hits: b.hits, relevant: b.hits ? b.rel / b.hits : null }));
}

/** The section's outcome. */
export interface CalibrationReport {
  protocol: string;
  inputs: readonly string[];
  /** The model in force (the tuning's). */
  model: RelevanceModel;
  /** A fresh fit on this run's training split (it should match {@link model}). */
  refit: CalibrationFit;
  /** Held-out figures of the model in force at the noise floor, per language and query form. */
  heldout: Array<{ lang: MadialLang; form: QueryForm } & FloorFigures>;
  /** The evidence floor refitted on this run's training split (it should match the kernel's), and the evidence packing's held-out figures (the gate, then that floor). */
  evidenceFloor: { refit: number; inForce: number; train: FloorFigures; heldout: Array<{ lang: MadialLang; form: QueryForm } & FloorFigures> };
  /** Held-out calibration curve of the model in force, per language. */
  curves: Record<MadialLang, CurveBucket[]>;
}

/** Collect, refit, and evaluate the model in force on the held-out split. */
export async function measureCalibration(madialDir: string, model: RelevanceModel = DEFAULT_TUNING.relevance): Promise<CalibrationReport> {
  const searches = await collectSearches(madialDir);
  const refit = fitRelevance(searches);
  const held = searches.filter((s) => s.split === 'heldout');
  const score = (f: RelevanceFeatures) => relevanceScore(f, model);
  const heldout: CalibrationReport['heldout'] = [];
  for (const lang of ['en', 'zh'] as const) {
    for (const form of ['dialogue', 'prompt'] as const) {
      heldout.push({ lang, form, ...floorFigures(held.filter((s) => s.lang === lang && s.form === form), score, NOISE_FLOOR_SCORE) });
    }
  }
  const refitFloor = fitEvidenceFloor(searches, model);
  const gated: CalibrationReport['evidenceFloor']['heldout'] = [];
  for (const lang of ['en', 'zh'] as const) {
    for (const form of ['dialogue', 'prompt'] as const) {
      gated.push({ lang, form, ...gatedFigures(held.filter((s) => s.lang === lang && s.form === form), score, NOISE_FLOOR_SCORE, EVIDENCE_FLOOR, FLOOR_BUDGET) });
    }
  }
  return {
    evidenceFloor: { refit: refitFloor.floor, inForce: EVIDENCE_FLOOR, train: refitFloor.train, heldout: gated },
    protocol:
      `MADial per-user pools applied to an in-memory embedded index through the indexer's apply path; every test dialogue searched (limit ${CALIBRATION_DEPTH}) as the whole dialogue before its test turn and as the user's last line alone, ` +
      'on-topic (own memories, gold = relevant-id) and off-topic (the other user\'s memories, nothing relevant); dialogues with index % 3 == 0 held out; ' +
      `logistic fit on the training split; noise floor = lowest probability where off-topic hits ≤ ${FLOOR_OFF_VOLUME} × on-topic hits and ≥ ${FLOOR_OFF_EMPTY} of off-topic searches are empty (training dialogues), shifted to score ${NOISE_FLOOR_SCORE}; ` +
      `evidence floor = lowest score (0.01 grid) where, with the noise floor gating each search (nothing kept unless its best hit reaches it), off-topic served tokens ≤ ${FLOOR_OFF_VOLUME} × on-topic ones in ${FLOOR_BUDGET}-token blocks (training dialogues; a hit = its abstract's estimated tokens + ${ENTRY_MARKUP_TOKENS})`,
    inputs: RELEVANCE_INPUTS,
    model,
    refit,
    heldout,
    curves: {
      en: calibrationCurve(
        held.filter((s) => s.lang === 'en'),
        model,
      ),
      zh: calibrationCurve(
        held.filter((s) => s.lang === 'zh'),
        model,
      ),
    },
  };
}
