/**
 * Other-peer penalties (context-contract §2.4): how much an `other_peer` hit's score is
 * lowered for ranking, per category.
 */
import { CATEGORIES, type Category } from '../uri';
import { toPythonFloat } from './python';
import type { Penalties } from './types';

/** Default penalties, in the order `stats.other_peer_penalties` reports them. */
export const DEFAULT_OTHER_PEER_PENALTIES: Readonly<Penalties> = Object.freeze({
  events: 0.1,
  entities: 0.1,
  preferences: 0.02,
  experiences: 0.02,
  resources: 0.02,
  skills: 0.02,
  memories: 0.1,
});

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/**
 * Resolve a request's `other_peer_penalty`.
 *
 * - null/undefined → the defaults;
 * - an object → the defaults overridden per known category (unknown keys ignored; a
 *   non-numeric value keeps that category's default);
 * - anything else is a scalar applied to all seven categories; a non-numeric scalar → 0.0.
 *
 * Every value is clamped to [0, 1]. Numeric strings and booleans convert as Python's
 * `float()` would; NaN counts as non-numeric.
 * @returns all seven categories, in {@link CATEGORIES} order
 */
export function resolvePenalties(otherPeerPenalty: unknown): Penalties {
  const out = { ...DEFAULT_OTHER_PEER_PENALTIES } as Penalties;
  if (otherPeerPenalty === null || otherPeerPenalty === undefined) return out;
  if (typeof otherPeerPenalty === 'object' && !Array.isArray(otherPeerPenalty)) {
    const given = otherPeerPenalty as Record<string, unknown>;
    for (const cat of CATEGORIES) {
      if (!Object.hasOwn(given, cat)) continue;
      const v = toPythonFloat(given[cat]);
      if (v !== null) out[cat as Category] = clamp01(v);
    }
    return out;
  }
  const v = toPythonFloat(otherPeerPenalty);
  const value = v === null ? 0 : clamp01(v);
  for (const cat of CATEGORIES) out[cat] = value;
  return out;
}
