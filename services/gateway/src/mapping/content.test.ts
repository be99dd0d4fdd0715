import { indexer } from '@ctxmesh/proto';
import { DomainError, RequestValidationError } from '../domain';
import { boolQuery, deleteOp, parseValidTime, requiredQuery, validateWriteBody, workspaceOf, writableUri, writeOp, writeOutcome } from './content';
import type { Caller } from './search';

const user = { userId: 'alice', role: 'user' as const };
const caller: Caller = { accountId: 'acme', userId: 'alice', role: 'user', actorPeerId: 'p1', requestId: 'r-1', workspace: 'proj' };

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

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
    const e = thrown(() => validateWriteBody(body, user));
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
    const e = thrown(() => validateWriteBody(body, user)) as DomainError;
    expect(e).toBeInstanceOf(DomainError);
    expect([e.code, e.status]).toEqual([code, status]);
  });

  it('names the rule a refused interval and a refused URI break, in the gateway\'s words', () => {
    const interval = thrown(() => validateWriteBody({ uri: 'viking://resources/a', content: 'x', valid_from: '2026-03-01', valid_to: '2026-03-01' }, user)) as DomainError;
    expect([interval.message, interval.details]).toEqual(['valid_from must be earlier than valid_to', {}]);
    const root = thrown(() => writableUri(' viking://~ ', user)) as DomainError;
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
    expect((thrown(() => parseValidTime('2026-02-30', 'valid_to')) as DomainError).message).toContain('valid_to');
  });
});

describe('workspaceOf', () => {
  it('prefers the body, then X-Workspace, then the default', () => {
    expect(workspaceOf({ 'X-Workspace': 'team-a' }, 'proj')).toBe('proj');
    expect(workspaceOf({ 'x-workspace': ' team-a ' }, null)).toBe('team-a');
    expect(workspaceOf({})).toBe('');
  });

  it('rejects a value that is not a slug', () => {
    expect((thrown(() => workspaceOf({ 'x-workspace': '../x' })) as DomainError).code).toBe('INVALID_ARGUMENT');
  });
});

describe('requiredQuery and boolQuery', () => {
  it('reports a missing parameter at ["query", name]', () => {
    const e = thrown(() => requiredQuery({}, 'uri')) as RequestValidationError;
    expect(e.toEnvelope().error.details.validation_errors).toEqual([{ loc: ['query', 'uri'], message: 'Field required', type: 'missing' }]);
    expect(requiredQuery({ uri: ['a', 'b'] }, 'uri')).toBe('b');
  });

  it('reads booleans laxly', () => {
    expect(boolQuery({ wait: 'true' }, 'wait', false)).toBe(true);
    expect(boolQuery({ wait: '0' }, 'wait', true)).toBe(false);
    expect(boolQuery({}, 'wait', true)).toBe(true);
    expect(thrown(() => boolQuery({ wait: 'maybe' }, 'wait', false))).toBeInstanceOf(RequestValidationError);
  });
});

describe('writeOp and deleteOp', () => {
  it('encode a write that the indexer decodes unchanged', () => {
    const p = validateWriteBody({ uri: 'viking://resources/a.md', content: 'body', mode: 'append', tags: ['k=v'], valid_from: '2026-01-01' }, user);
    const op = writeOp(p, caller, 'w-1', 1_700_000_000_000);
    const back = indexer.WriteOp.decode(indexer.WriteOp.encode(op).finish());
    expect(back).toEqual({
      writeId: 'w-1',
      identity: { accountId: 'acme', userId: 'alice', role: 1, actorPeerId: 'p1', workspace: 'proj', requestId: 'r-1' },
      uri: 'viking://resources/a.md',
      content: 'body',
      mode: indexer.WriteMode.WRITE_MODE_APPEND,
      validFromMs: Date.parse('2026-01-01T00:00:00.000Z'),
      validToMs: undefined,
      tags: ['k=v'],
      publishedAtMs: 1_700_000_000_000,
      subject: '',
    });
  });

  it('maps create and replace, and deletes with mode DELETE and no content', () => {
    const p = validateWriteBody({ uri: 'viking://resources/a.md', content: 'x', mode: 'create' }, user);
    expect(writeOp(p, caller, 'w', 0).mode).toBe(indexer.WriteMode.WRITE_MODE_CREATE);
    expect(writeOp({ ...p, mode: 'replace' }, caller, 'w', 0).mode).toBe(indexer.WriteMode.WRITE_MODE_REPLACE);
    expect(deleteOp('viking://resources/d', caller, 'w-2', 5)).toMatchObject({ writeId: 'w-2', uri: 'viking://resources/d', content: '', mode: indexer.WriteMode.WRITE_MODE_DELETE });
  });
});

describe('writeOutcome', () => {
  it('answers an applied notice with the result', () => {
    expect(writeOutcome({ id: 'w', status: 'applied', contentHash: 'h1' }, 'viking://resources/a', 'r')).toEqual({ uri: 'viking://resources/a', write_id: 'w', status: 'applied', content_hash: 'h1' });
  });

  it.each<[string | undefined, number, string]>([
    ['ALREADY_EXISTS', 409, 'ALREADY_EXISTS'],
    ['INVALID_URI', 400, 'INVALID_URI'],
    ['INVALID_CONTENT', 400, 'INVALID_ARGUMENT'],
    ['NOT_FOUND', 404, 'NOT_FOUND'],
    ['PERMISSION_DENIED', 403, 'PERMISSION_DENIED'],
    ['UNAVAILABLE', 503, 'UNAVAILABLE'],
    ['TOO_LARGE', 413, 'RESOURCE_EXHAUSTED'],
    ['RESOURCE_EXHAUSTED', 429, 'RESOURCE_EXHAUSTED'],
    ['DEADLINE_EXCEEDED', 504, 'DEADLINE_EXCEEDED'],
    ['ABORTED', 500, 'INTERNAL'],
    ['EMBEDDER_CRASHED', 500, 'INTERNAL'],
    [undefined, 500, 'INTERNAL'],
  ])('answers a failure with reason %p as %p %p', (reason, status, code) => {
    const out = writeOutcome({ id: 'w', status: 'failed', reason, message: reason === 'ALREADY_EXISTS' ? '' : 'indexer says no' }, 'viking://resources/a', 'r');
    expect(out).toBeInstanceOf(DomainError);
    const e = out as DomainError;
    expect([e.status, e.code]).toEqual([status, code]);
    expect(e.details).toMatchObject({ reason: reason ?? 'INTERNAL', uri: 'viking://resources/a', write_id: 'w', request_id: 'r' });
    expect(e.message).toBe(reason === 'ALREADY_EXISTS' ? 'URI already exists: viking://resources/a' : 'indexer says no');
  });
});
