/**
 * JSON in and out of the gateway: where a malformed body fails (for the §1.7 `json_invalid`
 * location, which FastAPI reports as Python's `JSONDecodeError.pos`), which bodies are parsed
 * as JSON at all (others are a 415), and the `Infinity`/`NaN` → `0.0` rule of §1.6.
 */
import { JsonBodyError, UnsupportedMediaTypeError } from '../domain/errors';

export { JsonBodyError, UnsupportedMediaTypeError };

/** Python `json` whitespace. */
const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

class Fail {
  constructor(readonly pos: number) {}
}

/**
 * Offset of the first error in `text`, as Python's `json.loads` reports it (`e.pos`, in
 * UTF-16 code units, which equal Python's code points for BMP text): "Expecting value",
 * "Expecting property name", "Expecting ',' delimiter", "Extra data", an unterminated string
 * (its opening quote), a bad escape or control character (its position).
 * @returns the offset, or null when `text` is valid JSON
 */
export function jsonErrorPosition(text: string): number | null {
  let i = 0;
  const ws = () => {
    while (i < text.length && WS.has(text[i])) i++;
  };
  const str = () => {
    const start = i;
    i++;
    for (;;) {
      if (i >= text.length) throw new Fail(start);
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c < ' ') throw new Fail(i);
      if (c === '\\') {
        const n = text[i + 1];
        if (n === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Fail(i + 1);
          i += 6;
        } else if (n !== undefined && '"\\/bfnrt'.includes(n)) i += 2;
        else throw new Fail(i);
        continue;
      }
      i++;
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return str();
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fail(i);
        str();
        ws();
        if (text[i] !== ':') throw new Fail(i);
        i++;
        value();
        ws();
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] !== ',') throw new Fail(i);
        i++;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ']') {
          i++;
          return;
        }
        if (text[i] !== ',') throw new Fail(i);
        i++;
      }
    }
    for (const lit of ['true', 'false', 'null']) {
      if (text.startsWith(lit, i)) {
        i += lit.length;
        return;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m) {
      i += m[0].length;
      return;
    }
    throw new Fail(i);
  };
  try {
    value();
    ws();
    if (i < text.length) throw new Fail(i);
    return null;
  } catch (e) {
    if (e instanceof Fail) return e.pos;
    throw e;
  }
}


/**
 * True when a request with this `Content-Type` carries JSON, as FastAPI decides it: no
 * content type at all, `application/json`, or any `…/…+json` / `…/json` media type.
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined || contentType.trim() === '') return true;
  const media = contentType.split(';')[0].trim().toLowerCase();
  const sub = media.split('/')[1] ?? '';
  return sub === 'json' || sub.endsWith('+json');
}


/**
 * Parse a request body. An empty body is absent (`undefined`, FastAPI's "Field required" at
 * `["body"]`), whatever its content type.
 * @throws JsonBodyError for malformed JSON
 * @throws UnsupportedMediaTypeError for a non-empty body whose content type is not JSON
 */
export function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (!isJsonContentType(contentType)) throw new UnsupportedMediaTypeError(contentType ?? '');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new JsonBodyError(jsonErrorPosition(text) ?? 0);
  }
}

/**
 * Copy of `value` with every non-finite number (`Infinity`, `-Infinity`, `NaN`) replaced by 0
 * (§1.6: the reference serialises them as `0.0`; `JSON.stringify` would write `null`).
 * Key order is kept.
 */
export function finiteJson<T>(value: T): T {
  if (typeof value === 'number') return (Number.isFinite(value) ? value : 0) as T;
  if (Array.isArray(value)) return value.map((v) => finiteJson(v)) as T;
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: finiteJson(v), enumerable: true, writable: true, configurable: true });
    }
    return out as T;
  }
  return value;
}
