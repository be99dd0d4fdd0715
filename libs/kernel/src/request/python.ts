/**
 * Python `int(x)` and `float(x)` over loosely typed JSON values, as the reference server
 * applies them to quotas and penalties. (`round()` is `pyRound` in `../budget/python`.)
 */

const INT_STRING = /^[+-]?\d+(?:_\d+)*$/;
const FLOAT_STRING = /^[+-]?(?:(?:\d+(?:_\d+)*)?\.?\d+(?:_\d+)*(?:[eE][+-]?\d+)?|\d+(?:_\d+)*\.|inf(?:inity)?|nan)$/i;

/**
 * Python `int(value)` for a JSON value: booleans → 0/1, finite numbers truncate toward zero,
 * integer strings (surrounding whitespace and `_` separators allowed) parse.
 * @returns the integer, or null where Python raises (non-finite, `"7.5"`, null, lists, objects)
 */
export function toPythonInt(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) || 0 : null;
  if (typeof value === 'string') {
    const s = value.trim();
    if (!INT_STRING.test(s)) return null;
    return Number.parseInt(s.replace(/_/g, ''), 10);
  }
  return null;
}

/**
 * Python `float(value)` for a JSON value: booleans → 0/1, numbers as they are, numeric strings
 * (incl. `"1e-3"`, `"inf"`) parse.
 * @returns the number, or null where Python raises; NaN results are reported as null because
 *   no caller can rank or clamp them meaningfully
 */
export function toPythonFloat(value: unknown): number | null {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'number') return Number.isNaN(value) ? null : value;
  if (typeof value === 'string') {
    const s = value.trim();
    if (!FLOAT_STRING.test(s)) return null;
    const lower = s.toLowerCase().replace(/_/g, '');
    if (lower.endsWith('nan')) return null;
    if (lower.includes('inf')) return lower.startsWith('-') ? -Infinity : Infinity;
    return Number.parseFloat(lower);
  }
  return null;
}
