/**
 * Filter values as both VectorIndex adapters read them, so a filter means the same on SQLite
 * and on Qdrant.
 */
import { UnsupportedFilterError } from './ports/errors';

/**
 * A time bound: a number is ms since the epoch, a string is ISO-8601.
 * @throws UnsupportedFilterError naming `what` otherwise
 */
export function filterTime(v: unknown, what: string): number {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string') {
    const t = Date.parse(v);
    if (!Number.isNaN(t)) return t;
  }
  throw new UnsupportedFilterError(`${what}: not a time: ${JSON.stringify(v)}`);
}

/**
 * A number bound: a finite number, or a non-blank numeric string.
 * @throws UnsupportedFilterError naming `what` otherwise
 */
export function filterNumber(v: unknown, what: string): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n)) throw new UnsupportedFilterError(`${what}: not a number: ${JSON.stringify(v)}`);
  return n;
}
