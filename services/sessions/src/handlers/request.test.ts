import { Code, CtxError } from '@ctxmesh/rpc';
import { AlreadyExistsError, ConflictError, CorruptLogError, InvalidFieldError, NotFoundError, PermissionDeniedError } from '../domain';
import { callerOf, domainCall, toCtxError } from './request';

describe('toCtxError', () => {
  it.each([
    [new InvalidFieldError('ranges[0].summary', 'must be a non-blank summary'), Code.INVALID_ARGUMENT, 'INVALID_FIELD', { field: 'ranges[0].summary' }],
    [new NotFoundError('SESSION_NOT_FOUND', 'session s not found', { sessionId: 's' }), Code.NOT_FOUND, 'SESSION_NOT_FOUND', { sessionId: 's' }],
    [new ConflictError('STALE_EXPECTED_HEAD', 'stale', 7, 2), Code.ABORTED, 'STALE_EXPECTED_HEAD', { head: '7', generation: '2' }],
    [new PermissionDeniedError('WORKSPACE_FOREIGN', 'foreign', { workspace: 'w' }), Code.PERMISSION_DENIED, 'WORKSPACE_FOREIGN', { workspace: 'w' }],
    [new AlreadyExistsError('WORKSPACE_TAKEN', 'taken'), Code.ALREADY_EXISTS, 'WORKSPACE_TAKEN', {}],
    [new CorruptLogError(3, 'not JSON'), Code.INTERNAL, 'CORRUPT_LOG', { seq: '3' }],
  ])('keeps the code, reason, message and metadata of %s', (err, code, reason, metadata) => {
    const out = toCtxError(err) as CtxError;
    expect(out).toBeInstanceOf(CtxError);
    expect(out).toMatchObject({ code, reason, message: err.message, metadata });
    expect(out.cause).toBe(err);
  });

  it('passes anything else through untouched', () => {
    const e = new TypeError('boom');
    expect(toCtxError(e)).toBe(e);
  });
});

describe('domainCall', () => {
  it('translates a domain rejection and returns a value unchanged', async () => {
    await expect(domainCall(async () => 5)).resolves.toBe(5);
    await expect(domainCall(async () => Promise.reject(new NotFoundError('BLOCK_NOT_FOUND', 'no')))).rejects.toMatchObject({ code: Code.NOT_FOUND });
  });
});

describe('callerOf', () => {
  it('requires an account and a user, and carries the workspace hint', () => {
    expect(() => callerOf(undefined)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' }));
    const id = { accountId: 'a', userId: '', role: 0, actorPeerId: '', workspace: '', requestId: '' };
    expect(() => callerOf(id)).toThrow(expect.objectContaining({ reason: 'MISSING_IDENTITY' }));
    expect(callerOf({ ...id, userId: 'u', workspace: 'proj' })).toEqual({ account: 'a', user: 'u', hint: 'proj' });
  });
});
