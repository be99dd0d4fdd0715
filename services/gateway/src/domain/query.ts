/**
 * Query-string parameters, validated like body fields at `["query", name]` (FastAPI's rules: a
 * repeated parameter is its last value).
 */
import { RequestValidationError } from './errors';
import { bool, int32, isPlainObject, type Validator } from './schema';

/**
 * The last value of a parameter, or undefined when absent. The HTTP server hands each
 * parameter over as a string, or a list of strings when it was repeated.
 */
function last(query: unknown, name: string): string | undefined {
  const v = isPlainObject(query) ? query[name] : undefined;
  const value: unknown = Array.isArray(v) ? v[v.length - 1] : v;
  return typeof value === 'string' ? value : undefined;
}

/**
 * A required query parameter (FastAPI: missing → 400 `["query", name]` "Field required").
 * @throws RequestValidationError
 */
export function requiredQuery(query: unknown, name: string): string {
  const value = last(query, name);
  if (value === undefined) throw new RequestValidationError([{ loc: ['query', name], msg: 'Field required', type: 'missing' }]);
  return value;
}

/**
 * An optional boolean query parameter, lax like pydantic (`true/1/yes/on`, `false/0/no/off`).
 * @throws RequestValidationError for anything else
 */
export function boolQuery(query: unknown, name: string, fallback: boolean): boolean {
  const value = last(query, name);
  if (value === undefined) return fallback;
  const r = bool.check(value, ['query', name], false);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.value;
}

/**
 * An optional integer query parameter within [min, max].
 * @throws RequestValidationError naming the parameter and the range
 */
export function intQuery(query: unknown, name: string, fallback: number, min: number, max: number): number {
  const value = last(query, name);
  if (value === undefined) return fallback;
  const n = /^\d{1,10}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!(n >= min && n <= max)) {
    throw new RequestValidationError([{ loc: ['query', name], msg: `Input should be an integer from ${min} to ${max}`, type: 'int_range' }]);
  }
  return n;
}

/**
 * An optional integer query parameter validated by `type` as a body field would be (lax:
 * integer strings convert).
 * @param type the field's validator @default int32
 * @returns the value, or undefined when absent
 * @throws RequestValidationError at `["query", name]`
 */
export function validatedIntQuery(query: unknown, name: string, type: Validator<number> = int32): number | undefined {
  const value = last(query, name);
  if (value === undefined) return undefined;
  const r = type.check(value, ['query', name], false);
  if (!r.ok) throw new RequestValidationError(r.issues);
  return r.value;
}

/**
 * A paging number (never an error, overflow-recovery §3.6: clamp, not reject). Non-numeric →
 * undefined (the default); fractions truncate; the magnitude is capped so it fits an int64.
 */
export function pagingQuery(query: unknown, name: string): number | undefined {
  const raw = last(query, name);
  const n = raw !== undefined && raw.trim() !== '' ? Number(raw) : NaN;
  if (!Number.isFinite(n)) return undefined;
  return Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.trunc(n)));
}
