import { DomainError, RequestValidationError } from './errors';
import { parseValidTime, validateWriteBody, writableUri } from './write';
import { thrownBy } from '@ctxmesh/testing';

const user = { userId: 'alice', role: 'user' as const };

describe('validateWriteBody', () => {
  it('applies the defaults and expands the ~ alias', () => {
    expect(validateWriteBody({ uri: 'viking://~/memories/events/a.md', content: 'hello' }, user)).toEqual({
      uri: 'viking://user/alice/memories/events/a.md',
      content: 'hello',
      mode: 'replace',
      wait: false,
      validFromMs: null,
      validToMs: null,
      tags: [],
      workspace: null,
    });
  });

  it('normalises valid times, tags and keeps mode, wait and workspace', () => {
    const p = validateWriteBody(
      { uri: 'viking://resources/docs/a.md', content: 'x', mode: 'create', wait: true, valid_from: '2026-01-02', valid_to: '2026-02-01T10:00:00+01:00', tags: ['Env=Prod', 'team=a'], workspace: 'proj' },
      user,
    );
    expect(p).toMatchObject({ mode: 'create', wait: true, validFromMs: Date.parse('2026-01-02T00:00:00.000Z'), validToMs: Date.parse('2026-02-01T09:00:00.000Z'), tags: ['env=prod', 'team=a'], workspace: 'proj' });
  });

  it.each<[string, unknown, string]>([
    ['missing uri and content', {}, 'Invalid request parameters: body.uri: Field required'],
    ['an unknown field', { uri: 'viking://resources/a', content: 'x', overwrite: true }, 'Invalid request parameters: body.overwrite: Extra inputs are not permitted'],
    ['a bad mode', { uri: 'viking://resources/a', content: 'x', mode: 'upsert' }, "Invalid request parameters: body.mode: Input should be 'replace', 'append' or 'create'"],
    ['non-string content', { uri: 'viking://resources/a', content: 5 }, 'Invalid request parameters: body.content: Input should be a valid string'],
    ['a body that is not an object', ['x'], 'Invalid request parameters: body: Input should be a valid dictionary or object to extract fields from'],
  ])('rejects %s with the validation envelope', (_name, body, message) => {
    const e = thrownBy(() => validateWriteBody(body, user));
    expect(e).toBeInstanceOf(RequestValidationError);
    expect((e as RequestValidationError).message).toBe(message);
  });

  it.each<[string, Record<string, unknown>, string, number]>([
    ['a relative URI', { uri: 'resources/a', content: 'x' }, 'INVALID_URI', 400],
    ['a scope root', { uri: 'viking://resources', content: 'x' }, 'INVALID_URI', 400],
    ['a user root', { uri: 'viking://~', content: 'x' }, 'INVALID_URI', 400],
    ["another user's space", { uri: 'viking://user/bob/memories/events/a.md', content: 'x' }, 'PERMISSION_DENIED', 403],
    ['a relative valid_from', { uri: 'viking://resources/a', content: 'x', valid_from: '7d' }, 'INVALID_ARGUMENT', 400],
    ['valid_from after valid_to', { uri: 'viking://resources/a', content: 'x', valid_from: '2026-03-01', valid_to: '2026-02-01' }, 'INVALID_ARGUMENT', 400],
    ['a tag without =', { uri: 'viking://resources/a', content: 'x', tags: ['nokey'] }, 'INVALID_ARGUMENT', 400],
    ['an empty validity interval (valid_from == valid_to)', { uri: 'viking://resources/a', content: 'x', valid_from: '2026-03-01', valid_to: '2026-03-01T00:00:00Z' }, 'INVALID_ARGUMENT', 400],
    ['a passage URI', { uri: 'viking://resources/a.md#p2', content: 'x' }, 'INVALID_URI', 400],
  ])('rejects %s as a domain error', (_name, body, code, status) => {
    const e = thrownBy(() => validateWriteBody(body, user)) as DomainError;
    expect(e).toBeInstanceOf(DomainError);
    expect([e.code, e.status]).toEqual([code, status]);
  });

  it('names the rule a refused interval and a refused URI break, in the gateway\'s words', () => {
    const interval = thrownBy(() => validateWriteBody({ uri: 'viking://resources/a', content: 'x', valid_from: '2026-03-01', valid_to: '2026-03-01' }, user)) as DomainError;
    expect([interval.message, interval.details]).toEqual(['valid_from must be earlier than valid_to', {}]);
    const root = thrownBy(() => writableUri(' viking://~ ', user)) as DomainError;
    expect([root.message, root.details]).toEqual(['Invalid URI: viking://~ (a write must address a node below a scope root)', { uri: 'viking://~', reason: 'a write must address a node below a scope root' }]);
  });

  it('accepts directory sidecars, which give a directory its abstract and overview', () => {
    expect(writableUri('viking://resources/d/.abstract.md', user)).toBe('viking://resources/d/.abstract.md');
    expect(writableUri('viking://~/resources/d/.overview.md', user)).toBe(`viking://user/${user.userId}/resources/d/.overview.md`);
  });

  it("lets root write into another user's space", () => {
    expect(writableUri('viking://user/bob/resources/a.md', { userId: 'alice', role: 'root' })).toBe('viking://user/bob/resources/a.md');
  });
});

describe('parseValidTime', () => {
  it('reads dates as the start of the day and blank as open', () => {
    expect(parseValidTime('2026-07-14', 'valid_to')).toBe(Date.parse('2026-07-14T00:00:00.000Z'));
    expect(parseValidTime('  ', 'valid_from')).toBeNull();
    expect(parseValidTime(null, 'valid_from')).toBeNull();
    expect((thrownBy(() => parseValidTime('2026-02-30', 'valid_to')) as DomainError).message).toContain('valid_to');
  });
});
