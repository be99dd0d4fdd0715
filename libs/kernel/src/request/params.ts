/**
 * Small normalisations shared by `/search` mode context and the `/recall` folding.
 */
import type { ContextDetail, DetailTier, RewriteMode } from './types';

const PIN_TIERS: readonly string[] = ['abstract', 'overview', 'full'];

/**
 * Normalise an already-validated `detail`: null/undefined/`"auto"` → null; a tier → that tier;
 * an object → a shallow copy (keys and values were checked by the caller).
 */
export function normalizeDetailParam(detail: unknown): ContextDetail {
  if (detail === null || detail === undefined) return null;
  if (typeof detail === 'string') return PIN_TIERS.includes(detail) ? (detail as DetailTier) : null;
  if (typeof detail === 'object' && !Array.isArray(detail)) return { ...(detail as Record<string, DetailTier>) };
  return null;
}

/** `rewrite`: `true` → `"on"`, `"auto"` → `"auto"`, anything else → `"off"`. */
export function rewriteModeOf(rewrite: unknown): RewriteMode {
  if (rewrite === true) return 'on';
  if (rewrite === 'auto') return 'auto';
  return 'off';
}
