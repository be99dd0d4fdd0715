/**
 * Quota resolution (context-contract §3.1): flat vs bucketed mode, purpose presets and the
 * v1 `/recall` defaults.
 */
import { QUOTA_KEYS } from '../uri';
import { toPythonInt } from './python';
import type { Purpose, QuotaKey, Quotas } from './types';

/** Purpose presets: absolute per-bucket ceilings (their sum is the candidate width). */
export const PURPOSE_PRESETS: Readonly<Record<Purpose, Readonly<Required<Quotas>>>> = Object.freeze({
  coding: Object.freeze({ events: 1, entities: 2, preferences: 1, experiences: 1, resources: 3, skills: 2 }),
  chat: Object.freeze({ events: 3, entities: 3, preferences: 1, experiences: 1, resources: 1, skills: 1 }),
});

/** v1 `/recall` bucket defaults (`DEFAULT_QUOTAS`), in this key order. */
export const RECALL_DEFAULT_QUOTAS: Readonly<Quotas> = Object.freeze({ events: 10, entities: 10, preferences: 3, experiences: 0 });

/** True for one of the six quota keys. */
export function isQuotaKey(key: string): key is QuotaKey {
  return (QUOTA_KEYS as readonly string[]).includes(key);
}

/**
 * `normalize_quotas(quotas, purpose)`.
 *
 * - `quotas` null/undefined and no purpose → null (flat mode);
 * - `quotas` null/undefined with a purpose → a fresh copy of that purpose's preset;
 * - an object (even `{}`) → only the six known keys, in the object's own order, each
 *   `max(0, int(value))` with unparsable values → 0; `purpose` is then ignored.
 *   A non-object `quotas` (only reachable from untyped callers) counts as `{}`.
 * @returns a new object the caller may own
 */
export function normalizeQuotas(quotas: unknown, purpose: Purpose | null | undefined): Quotas | null {
  if (quotas === null || quotas === undefined) {
    return purpose ? { ...PURPOSE_PRESETS[purpose] } : null;
  }
  const out: Quotas = {};
  if (typeof quotas !== 'object' || Array.isArray(quotas)) return out;
  for (const [key, value] of Object.entries(quotas as Record<string, unknown>)) {
    if (!isQuotaKey(key)) continue;
    out[key] = Math.max(0, toPythonInt(value) ?? 0);
  }
  return out;
}

/**
 * Active buckets of resolved quotas: entries with a value > 0, in the map's order (§3.3).
 */
export function activeBuckets(quotas: Quotas): Array<[QuotaKey, number]> {
  return (Object.entries(quotas) as Array<[QuotaKey, number]>).filter(([, q]) => q > 0);
}
