import { RequestValidationError } from '../domain';
import { assertDocumentSize, assertJsonDepth, assertStringLimits, bodyTooLarge, LONG_STRING_FIELDS, MAX_JSON_DEPTH, MAX_STRING_CHARS } from './limits';

const issuesOf = (fn: () => void) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof RequestValidationError) return e.issues;
    throw e;
  }
  return [];
};

describe('assertJsonDepth', () => {
  it('accepts the limit and refuses one level more, naming the top-level field', () => {
    const nest = (n: number) => '{"filter":' + '['.repeat(n - 1) + ']'.repeat(n - 1) + '}';
    expect(() => assertJsonDepth(nest(MAX_JSON_DEPTH))).not.toThrow();
    expect(issuesOf(() => assertJsonDepth(nest(MAX_JSON_DEPTH + 1)))).toEqual([
      { loc: ['body', 'filter'], msg: `JSON nesting should be at most ${MAX_JSON_DEPTH} levels deep`, type: 'too_deep' },
    ]);
  });

  // Regression (issue 12, item 4): a 50,000-deep body overflowed the stack (a 500).
  it('scans 50,000 levels, valid or malformed, without recursing; brackets inside strings do not count', () => {
    expect(issuesOf(() => assertJsonDepth('{"events":[' + '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000) + ']}'))[0]!.loc).toEqual(['body', 'events']);
    expect(issuesOf(() => assertJsonDepth('['.repeat(50_000)))[0]!.loc).toEqual(['body']);
    expect(() => assertJsonDepth(JSON.stringify({ q: '[[[['.repeat(100), 'k\\"[': '{'.repeat(100) }))).not.toThrow();
  });
});

describe('assertStringLimits', () => {
  it('bounds ids and names, lets queries be longer and document or transcript text longer still', () => {
    expect(issuesOf(() => assertStringLimits({ workspace: 'w'.repeat(MAX_STRING_CHARS + 1) }))).toEqual([
      { loc: ['body', 'workspace'], msg: `String should have at most ${MAX_STRING_CHARS} characters`, type: 'string_too_long' },
    ]);
    expect(() => assertStringLimits({ query: 'q'.repeat(LONG_STRING_FIELDS.query!) })).not.toThrow();
    expect(issuesOf(() => assertStringLimits({ query: 'q'.repeat(1_000_000) }))[0]).toMatchObject({ loc: ['body', 'query'], msg: 'String should have at most 32768 characters' });
    expect(issuesOf(() => assertStringLimits({ exclude_uris: ['ok', 'u'.repeat(5000)] }))[0]!.loc).toEqual(['body', 'exclude_uris', 1]);
    expect(issuesOf(() => assertStringLimits({ filter: { conds: [{ value: 'v'.repeat(5000) }] } }))[0]!.loc).toEqual(['body', 'filter', 'conds', 0, 'value']);
    expect(() => assertStringLimits({ content: 'c'.repeat(100_000), events: [{ text: 't'.repeat(100_000) }] })).not.toThrow();
    expect(issuesOf(() => assertStringLimits({ ['k'.repeat(300)]: 1 }))[0]!.type).toBe('key_too_long');
  });
});

describe('assertDocumentSize', () => {
  it('counts UTF-8 bytes', () => {
    expect(() => assertDocumentSize('中'.repeat(1000), 3000)).not.toThrow();
    expect(issuesOf(() => assertDocumentSize('中'.repeat(1001), 3000))).toEqual([{ loc: ['body', 'content'], msg: 'Document should be at most 3000 bytes (UTF-8)', type: 'too_large' }]);
  });
});

describe('bodyTooLarge', () => {
  it('names the limit of a body that is too large, and nothing else', () => {
    const e = bodyTooLarge({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }, 1024, 'r1');
    expect(e).toMatchObject({ status: 413, code: 'RESOURCE_EXHAUSTED', details: { reason: 'BODY_TOO_LARGE', limit_bytes: 1024 } });
    expect(e!.message).toContain('1024 bytes');
    expect(bodyTooLarge(new Error('x'), 1024, 'r1')).toBeNull();
  });
});
