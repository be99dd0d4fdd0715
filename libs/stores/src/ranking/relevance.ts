/**
 * The relevance score both engines give a hit: what `score` means (docs/context-contract.md,
 * "What a score means").
 *
 * A hit's score is a logistic model of the evidence the ranking already has about it — its
 * dense cosine, the share of the query's IDF-weighted terms it holds (coverage) and its TF-IDF
 * relevance against the search's best — fitted to estimate the probability that the hit is
 * evidence rather than noise, then shifted in log-odds so that the server's noise floor sits at
 * {@link NOISE_FLOOR_SCORE} (0.35, the threshold the OpenViking plugins send by default):
 *
 *   score = σ(b₀ + Σ bᵢ·xᵢ),  P(relevant) ≈ σ(logit(score) + shift)
 *
 * A score at or above 0.35 is evidence; below it, noise. The fit is `bench/src/calibration.ts`
 * on MADial-Bench's training split (both languages, on-topic and off-topic questions); the
 * bench prints the held-out calibration curve (score bucket → share relevant).
 *
 * Every feature is a function of the query, the hit, the search's best hit and the account's
 * statistics only — not of the hit's place in the fused order: equal evidence, equal score —
 * and the engines compute them through this one module, so a hit scores the same on the
 * embedded index and Qdrant. The features are normalised by the lengths of both texts
 * (cosines, a share, a ratio), so a two-word question and a whole dialogue land on one scale.
 */
import { NOISE_FLOOR } from '@ctxmesh/kernel';

/** The evidence the ranking has about one hit (the model's inputs). */
export interface RelevanceFeatures {
  /** Dense cosine with the query (the lexical set cosine when the search has no dense leg), in [-1, 1]. */
  cosine: number;
  /** Share of the query's IDF-weighted terms (those the account holds) the hit holds, in [0, 1]. */
  coverage: number;
  /** TF-IDF relevance of the hit's terms to the query's (`TfIdfScorer.score`, cosine-like, ≥ 0). */
  tfidf: number;
  /**
   * `tfidf` over the best `tfidf` among the search's hits (0 when that is 0): relative, because
   * the absolute value moves with the account's IDFs (a term every row of a small store holds
   * weighs almost nothing), which would make the score depend on the store's size.
   */
  tfidfRel: number;
  /** Position in the fused order, from 0 (reported, not scored: two hits of equal evidence score alike wherever fusion put them). */
  rank: number;
}

/** Names of the model's inputs, in the order of {@link RelevanceModel.weights}. */
export const RELEVANCE_INPUTS = ['cosine', 'coverage', 'logTfidfRel'] as const;

/** Smallest relative TF-IDF relevance the model's `logTfidfRel` input tells apart (a hit without a shared term). */
export const TFIDF_EPSILON = 1e-3;

/** A logistic relevance model: `σ(intercept + Σ weights[i] · input[i])` over {@link RELEVANCE_INPUTS}. */
export interface RelevanceModel {
  intercept: number;
  /** One weight per {@link RELEVANCE_INPUTS} entry. */
  weights: readonly number[];
}

/** The score at the server's noise floor (the kernel's, where the evidence packing applies it): the plugins' default `score_threshold`. */
export const NOISE_FLOOR_SCORE: number = NOISE_FLOOR;

/** The model's input vector of a hit's features (see {@link RELEVANCE_INPUTS}). */
export function relevanceInputs(f: RelevanceFeatures): number[] {
  return [f.cosine, f.coverage, Math.log(TFIDF_EPSILON + Math.max(0, f.tfidfRel))];
}

/** Logistic function. */
export function sigmoid(z: number): number {
  return z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
}

/** A hit's relevance score in (0, 1): the model's logistic of its inputs. */
export function relevanceScore(f: RelevanceFeatures, model: RelevanceModel): number {
  const x = relevanceInputs(f);
  let z = model.intercept;
  for (let i = 0; i < x.length; i++) {
    const v = x[i]!;
    if (Number.isFinite(v)) z += (model.weights[i] ?? 0) * v;
  }
  return sigmoid(z);
}
