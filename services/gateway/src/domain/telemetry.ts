/**
 * `telemetry` (context-contract §1.2, §1.6): `true`, `false` or `{"summary": bool}`.
 */
import { invalidArgument } from './errors';

const TRUE_TEXT = new Set(['1', 'on', 't', 'true', 'y', 'yes']);
const FALSE_TEXT = new Set(['0', 'off', 'f', 'false', 'n', 'no']);

/**
 * Whether the response carries a `telemetry` member. An object may only hold `summary`
 * (a boolean, lax like pydantic); any other key is rejected naming it. The message avoids
 * the words the plugins read as "server without a context face" (plugin-client §1.3).
 * @param value validated as `bool | dict` by the body schema
 * @throws DomainError INVALID_ARGUMENT
 */
export function parseTelemetry(value: boolean | Record<string, unknown> | null | undefined): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value === 'boolean') return value;
  const unknown = Object.keys(value).filter((k) => k !== 'summary');
  if (unknown.length > 0) {
    throw invalidArgument(`Invalid telemetry request: unsupported option(s) ${unknown.sort().join(', ')}; only 'summary' is accepted`);
  }
  if (!Object.hasOwn(value, 'summary')) return false;
  const s = value.summary;
  if (typeof s === 'boolean') return s;
  if (s === 0 || s === 1) return s === 1;
  if (typeof s === 'string' && TRUE_TEXT.has(s.toLowerCase())) return true;
  if (typeof s === 'string' && FALSE_TEXT.has(s.toLowerCase())) return false;
  throw invalidArgument('Invalid telemetry request: summary must be a boolean');
}
