/**
 * Budget honesty (issue 8, item 5): over the query set and budgets 64…8000, context mode with
 * the default estimator and with the exact `o200k_base` tokenizer, side by side:
 * - the largest `used_tokens / max_tokens` (must never exceed 1);
 * - with `o200k_base`, the exact token count of the returned block against `max_tokens`;
 * - the estimator's error against exact `o200k_base` counts of the returned text, for English
 *   and for Chinese (per entry, classified by script, and per rendered block by query language);
 * - the latency of exact counting relative to the estimate.
 */
import { countTokens, estimateTokens } from '@ctxmesh/kernel';
import type { BenchQuery } from './corpus';
import type { JsonClient } from './http';
import { quantile, ratio, summarize, type Summary } from './stats';

/** Budgets swept. */
export const BUDGETS: readonly number[] = [64, 128, 256, 512, 1024, 1600, 2000, 4000, 8000];

/** Relative error of the estimate against exact counts: (estimate − exact) / exact. */
export interface EstimatorError {
  /** Texts compared. */
  samples: number;
  /** Mean signed error (negative = the estimate undercounts). */
  meanSigned: number;
  /** Median absolute error. */
  medianAbs: number;
  /** 95th percentile of the absolute error. */
  p95Abs: number;
  /** Largest absolute error. */
  maxAbs: number;
  /** Share of texts the estimate undercounts (where a budget could be exceeded in real tokens). */
  underestimateShare: number;
}

/** The section's outcome. */
export interface BudgetHonesty {
  budgets: readonly number[];
  /** Requests per tokenizer. */
  requests: number;
  /** Non-200 answers. */
  errors: number;
  /** Largest used_tokens / max_tokens per tokenizer. */
  maxUsedRatio: { estimate: number | null; o200k_base: number | null };
  /** Responses with used_tokens > max_tokens per tokenizer (must be 0). */
  violations: { estimate: number; o200k_base: number };
  /** With `o200k_base`: the largest exact count of `rendered` / max_tokens. */
  maxExactRenderedRatio: number | null;
  /** With `o200k_base`: responses whose rendered block exceeds max_tokens in exact tokens. */
  exactRenderedViolations: number;
  /** With the estimate: responses whose rendered block exceeds max_tokens in exact o200k tokens. */
  estimateExactOverruns: number;
  /** Latency of the same requests, ms. */
  latency: { estimate: Summary; o200k_base: Summary; ratioP50: number };
  /** Estimator error per returned entry, by the entry's script. */
  entryError: { en: EstimatorError; zh: EstimatorError };
  /** Estimator error per rendered block, by the query's language. */
  renderedError: { en: EstimatorError; zh: EstimatorError };
  /** First failure, if any. */
  firstError?: string;
}

const HAN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uff00-\uffef\u3000-\u303f]/g;
const LETTER = /[A-Za-z]/g;

/** `zh` when CJK characters make up at least 30% of the letters of `text`, else `en`. */
export function scriptOf(text: string): 'en' | 'zh' {
  const han = text.match(HAN)?.length ?? 0;
  const latin = text.match(LETTER)?.length ?? 0;
  return han > 0 && han >= 0.3 * (han + latin) ? 'zh' : 'en';
}

/** Aggregate relative errors (est − exact) / exact; texts with 0 exact tokens are skipped. */
export function estimatorError(pairs: ReadonlyArray<{ estimate: number; exact: number }>): EstimatorError {
  const rel = pairs.filter((p) => p.exact > 0).map((p) => (p.estimate - p.exact) / p.exact);
  const abs = rel.map(Math.abs);
  return {
    samples: rel.length,
    meanSigned: rel.length ? rel.reduce((s, v) => s + v, 0) / rel.length : Number.NaN,
    medianAbs: quantile(abs, 0.5),
    p95Abs: quantile(abs, 0.95),
    maxAbs: abs.length ? Math.max(...abs) : Number.NaN,
    underestimateShare: rel.length ? rel.filter((v) => v < 0).length / rel.length : Number.NaN,
  };
}

interface ContextBody {
  result?: { entries?: Array<{ text?: string }>; rendered?: string; stats?: { used_tokens?: number; max_tokens?: number } };
}

/** Run the sweep through the gateway. */
export async function measureBudgetHonesty(client: JsonClient, queries: readonly BenchQuery[], budgets: readonly number[] = BUDGETS): Promise<BudgetHonesty> {
  const lat = { estimate: [] as number[], o200k_base: [] as number[] };
  const maxRatio = { estimate: Number.NaN, o200k_base: Number.NaN };
  const violations = { estimate: 0, o200k_base: 0 };
  let maxExact = Number.NaN;
  let exactViolations = 0;
  let estimateOverruns = 0;
  let errors = 0;
  let firstError: string | undefined;
  const entryPairs = { en: [] as Array<{ estimate: number; exact: number }>, zh: [] as Array<{ estimate: number; exact: number }> };
  const renderedPairs = { en: [] as Array<{ estimate: number; exact: number }>, zh: [] as Array<{ estimate: number; exact: number }> };
  const bump = (cur: number, v: number) => (Number.isNaN(cur) || v > cur ? v : cur);
  let n = 0;
  for (const q of queries) {
    for (const b of budgets) {
      // Alternate which tokenizer goes first so neither gets the warmer cache systematically.
      const order = n++ % 2 === 0 ? (['estimate', 'o200k_base'] as const) : (['o200k_base', 'estimate'] as const);
      for (const tok of order) {
        const body: Record<string, unknown> = { query: q.text, mode: 'context', max_tokens: b };
        if (tok !== 'estimate') body.tokenizer = tok;
        const r = await client.post('/api/v1/search/search', body);
        if (r.status !== 200) {
          errors++;
          firstError ??= `HTTP ${r.status}: ${JSON.stringify(r.body).slice(0, 200)}`;
          continue;
        }
        lat[tok].push(r.ms);
        const res = (r.body as ContextBody).result ?? {};
        const used = Number(res.stats?.used_tokens ?? Number.NaN);
        const max = Number(res.stats?.max_tokens ?? b);
        maxRatio[tok] = bump(maxRatio[tok], used / max);
        if (used > max) violations[tok]++;
        const rendered = res.rendered ?? '';
        const exact = countTokens(rendered, 'o200k_base');
        if (tok === 'o200k_base') {
          maxExact = bump(maxExact, exact / max);
          if (exact > max) exactViolations++;
        } else {
          if (exact > max) estimateOverruns++;
          if (rendered !== '') renderedPairs[q.lang].push({ estimate: estimateTokens(rendered), exact });
          for (const e of res.entries ?? []) {
            const text = e.text ?? '';
            if (text !== '') entryPairs[scriptOf(text)].push({ estimate: estimateTokens(text), exact: countTokens(text, 'o200k_base') });
          }
        }
      }
    }
  }
  const est = summarize(lat.estimate);
  const exactLat = summarize(lat.o200k_base);
  return {
    budgets,
    requests: queries.length * budgets.length,
    errors,
    maxUsedRatio: { estimate: Number.isNaN(maxRatio.estimate) ? null : maxRatio.estimate, o200k_base: Number.isNaN(maxRatio.o200k_base) ? null : maxRatio.o200k_base },
    violations,
    maxExactRenderedRatio: Number.isNaN(maxExact) ? null : maxExact,
    exactRenderedViolations: exactViolations,
    estimateExactOverruns: estimateOverruns,
    latency: { estimate: est, o200k_base: exactLat, ratioP50: ratio(exactLat.p50, est.p50) },
    entryError: { en: estimatorError(entryPairs.en), zh: estimatorError(entryPairs.zh) },
    renderedError: { en: estimatorError(renderedPairs.en), zh: estimatorError(renderedPairs.zh) },
    ...(firstError ? { firstError } : {}),
  };
}
