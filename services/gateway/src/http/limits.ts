/**
 * Limits every JSON body meets before any validator or mapping runs (issue 12, items 3–4):
 * nesting depth, and the length of every string and object key, by field. A body over a limit
 * is a 400 naming the field and the limit, in the §1.7 validation envelope. The checks are
 * iterative (no recursion), so no body can overflow the stack on its way in.
 */
import type { ReceiveTimeouts } from '../config';
import { DomainError, RequestValidationError } from '../domain';

/** Largest request body, bytes (`GATEWAY_BODY_LIMIT_BYTES`). */
export const DEFAULT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** Largest document a write may carry, UTF-8 bytes of `content` (`CTXMESH_MAX_DOCUMENT_BYTES`). */
export const DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024;

/** Receive timeouts (`GATEWAY_HEADERS_TIMEOUT_MS`, `GATEWAY_REQUEST_TIMEOUT_MS`). */
export const DEFAULT_RECEIVE: ReceiveTimeouts = Object.freeze({ headersMs: 10_000, requestMs: 30_000 });

/**
 * Fastify's "body too large" (declared or chunked) as a 413 that names the limit; null for
 * any other error.
 */
export function bodyTooLarge(err: unknown, limitBytes: number, requestId: string): DomainError | null {
  if ((err as { code?: unknown } | null)?.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return null;
  return new DomainError('RESOURCE_EXHAUSTED', `Request body is larger than the limit of ${limitBytes} bytes`, {
    reason: 'BODY_TOO_LARGE',
    domain: 'gateway',
    limit_bytes: limitBytes,
    request_id: requestId,
  });
}

/**
 * Refuse a document over the limit (UTF-8 bytes of a write's `content`): a 400 naming the
 * field and the limit.
 * @throws RequestValidationError at `["body", "content"]`
 */
export function assertDocumentSize(content: string, maxBytes: number): void {
  // Cheap bounds first: UTF-8 takes 1–3 bytes per UTF-16 unit.
  if (content.length <= maxBytes / 3) return;
  const bytes = content.length > maxBytes ? Infinity : Buffer.byteLength(content, 'utf8');
  if (bytes > maxBytes) {
    throw new RequestValidationError([{ loc: ['body', 'content'], msg: `Document should be at most ${maxBytes} bytes (UTF-8)`, type: 'too_large' }]);
  }
}

/** Deepest nesting of objects and arrays a body may have (the body object itself is level 1). */
export const MAX_JSON_DEPTH = 32;

/** Longest string (UTF-16 units) in any field not listed in {@link LONG_STRING_FIELDS} or {@link TEXT_FIELDS}: ids, names, URIs, tags, filters. */
export const MAX_STRING_CHARS = 4096;

/** Longest object key (UTF-16 units). */
export const MAX_KEY_CHARS = 256;

/** Fields whose strings may be longer than {@link MAX_STRING_CHARS}, with their own limit. */
export const LONG_STRING_FIELDS: Readonly<Record<string, number>> = Object.freeze({
  /** Search and retrieve queries (a user's prompt). */
  query: 32_768,
  /** Compression summaries and their verified readings. */
  summary: 65_536,
  verified_readings: 65_536,
  /** A provider's error message in overflow recovery. */
  message: 65_536,
});

/**
 * Fields that carry a document or a transcript: their strings (at any depth below them) are
 * bounded by the body size only — and, for a write's `content`, by the largest document.
 */
export const TEXT_FIELDS: ReadonlySet<string> = new Set(['content', 'events', 'messages', 'parts']);

/**
 * Reject a body nested deeper than {@link MAX_JSON_DEPTH}, scanning the raw text (strings
 * skipped, escapes honoured) so that neither the parser nor the error locator recurses into
 * it. Malformed text is left to the parser.
 * @throws RequestValidationError at `["body", <top-level field>]` when too deep
 */
export function assertJsonDepth(text: string, maxDepth = MAX_JSON_DEPTH): void {
  let depth = 0;
  let inString = false;
  let keyStart = -1;
  let lastString = '';
  let field: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped unit
      else if (c === 0x22) {
        inString = false;
        if (depth === 1) lastString = text.slice(keyStart, i);
      }
      continue;
    }
    if (c === 0x22) {
      inString = true;
      keyStart = i + 1;
    } else if (c === 0x3a && depth === 1) {
      field = lastString; // a top-level key just ended
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > maxDepth) {
        const loc: Array<string | number> = field === null ? ['body'] : ['body', unescapeKey(field)];
        throw new RequestValidationError([{ loc, msg: `JSON nesting should be at most ${maxDepth} levels deep`, type: 'too_deep' }]);
      }
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    }
  }
}

function unescapeKey(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}

/** The limit of a string at a path of keys (array indices skipped). */
function stringLimit(path: ReadonlyArray<string | number>): number {
  for (const k of path) if (typeof k === 'string' && TEXT_FIELDS.has(k)) return Infinity;
  for (let i = path.length - 1; i >= 0; i--) {
    const k = path[i];
    if (typeof k === 'string') return LONG_STRING_FIELDS[k] ?? MAX_STRING_CHARS;
  }
  return MAX_STRING_CHARS;
}

/**
 * Reject a parsed body with a string or key over its limit (see {@link MAX_STRING_CHARS},
 * {@link LONG_STRING_FIELDS}, {@link TEXT_FIELDS}). A bare string body is the route's business
 * (it fails validation as "not an object").
 * @throws RequestValidationError listing every field over its limit (at most 10)
 */
export function assertStringLimits(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const issues: Array<{ loc: Array<string | number>; msg: string; type: string }> = [];
  const stack: Array<[unknown, Array<string | number>]> = [[body, []]];
  while (stack.length > 0 && issues.length < 10) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      const max = stringLimit(path);
      if (v.length > max) issues.push({ loc: ['body', ...path], msg: `String should have at most ${max} characters`, type: 'string_too_long' });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], [...path, i]]);
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (k.length > MAX_KEY_CHARS) {
          issues.push({ loc: ['body', ...path, `${k.slice(0, 32)}…`], msg: `Object keys should have at most ${MAX_KEY_CHARS} characters`, type: 'key_too_long' });
          continue;
        }
        stack.push([(v as Record<string, unknown>)[k], [...path, k]]);
      }
    }
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
}
