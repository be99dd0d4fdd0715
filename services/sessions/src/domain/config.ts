/**
 * Recovery configuration (§1.8 "Config", §3.6 last row). `maxOverflowRetries` is a deployment
 * setting, validated at startup: a non-negative integer, unset means 1 (the host's own
 * default; an unset value must never read as 0, which would silently disable recovery).
 */
import { ConfigError } from './errors';

/** Default overflow retry budget per agent. */
export const DEFAULT_MAX_OVERFLOW_RETRIES = 1;

/**
 * Resolve `maxOverflowRetries`.
 * @param raw a number, a decimal string (from the environment), or undefined/null/'' for the default
 * @returns the budget maximum (0 disables recovery)
 * @throws ConfigError `maxOverflowRetries must be a non-negative integer` for -1, 1.5, 'abc', …
 */
export function resolveMaxOverflowRetries(raw: unknown): number {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return DEFAULT_MAX_OVERFLOW_RETRIES;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < 0) {
    throw new ConfigError([`maxOverflowRetries must be a non-negative integer (got ${JSON.stringify(raw)})`]);
  }
  return n;
}
