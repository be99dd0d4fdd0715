import { InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';
import { DomainError, httpStatusOf, invalidArgument, invalidUri, permissionDenied, RequestValidationError, toDomainError, unauthenticated } from './errors';

describe('httpStatusOf', () => {
  it.each([
    ['INVALID_ARGUMENT', 400],
    ['INVALID_URI', 400],
    ['PERMISSION_DENIED', 403],
    ['UNAUTHENTICATED', 401],
    ['NOT_FOUND', 404],
    ['FAILED_PRECONDITION', 412],
    ['INTERNAL', 500],
    ['SOMETHING_NEW', 500],
    // The mesh's codes, by the same table (connect's).
    ['ALREADY_EXISTS', 409],
    ['ABORTED', 409],
    ['RESOURCE_EXHAUSTED', 429],
    ['CANCELLED', 499],
    ['UNIMPLEMENTED', 501],
    ['UNAVAILABLE', 503],
    ['DEADLINE_EXCEEDED', 504],
    ['OK', 200],
    ['0', 500],
  ])('%s → %p', (code, status) => {
    expect(httpStatusOf(code)).toBe(status);
  });

  it.each<[string, string, number]>([
    ['RESOURCE_EXHAUSTED', 'BODY_TOO_LARGE', 413],
    ['RESOURCE_EXHAUSTED', 'TOO_LARGE', 413],
    ['INVALID_ARGUMENT', 'UNSUPPORTED_MEDIA_TYPE', 415],
    ['RESOURCE_EXHAUSTED', 'QUOTA', 429],
    ['NOT_FOUND', 'WRITE_NOT_FOUND', 404],
  ])('%s with reason %s → %p (HTTP statuses gRPC has no code for)', (code, reason, status) => {
    expect(httpStatusOf(code, reason)).toBe(status);
    expect(new DomainError(code as 'NOT_FOUND', 'm', { reason }).status).toBe(status);
  });
});

describe('RequestValidationError', () => {
  it('builds the message from the first issue and keeps every issue', () => {
    const e = new RequestValidationError([
      { loc: ['body', 'tags', 0], msg: 'Input should be a valid string', type: 'string_type' },
      { loc: ['body', 'unexpected'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
    ]);
    expect(e.name).toBe('RequestValidationError');
    expect(e.status).toBe(400);
    expect(e.message).toBe('Invalid request parameters: body.tags.0: Input should be a valid string');
    expect(e.issues).toHaveLength(2);
  });

  it('refuses to be built without an issue', () => {
    expect(() => new RequestValidationError([])).toThrow(RangeError);
  });
});

describe('DomainError', () => {
  it('has the status of its code', () => {
    const e = invalidArgument('Search query or image_url must not be empty.');
    expect(e.status).toBe(400);
    expect([e.code, e.message, e.details]).toEqual(['INVALID_ARGUMENT', 'Search query or image_url must not be empty.', {}]);
  });

  it.each<[string, DomainError, string, number, Record<string, unknown>]>([
    ['invalidUri', invalidUri('viking://x', 'bad'), 'INVALID_URI', 400, { uri: 'viking://x', reason: 'bad' }],
    ['unauthenticated', unauthenticated('Missing API key'), 'UNAUTHENTICATED', 401, {}],
    ['permissionDenied', permissionDenied('Access denied for viking://user/b'), 'PERMISSION_DENIED', 403, {}],
  ])('%s', (_name, e, code, status, details) => {
    expect([e.name, e.code, e.status, e.details]).toEqual(['DomainError', code, status, details]);
  });

  it('formats INVALID_URI messages', () => {
    expect(invalidUri('viking://nope', 'unknown scope').message).toBe('Invalid URI: viking://nope (unknown scope)');
  });
});

describe('toDomainError', () => {
  it('maps kernel rejections and passes domain errors through', () => {
    const uriErr = toDomainError(new InvalidUriError('viking://user/memories', 'removed'));
    expect([uriErr?.code, uriErr?.message, uriErr?.details]).toEqual([
      'INVALID_URI',
      'Invalid URI: viking://user/memories (removed)',
      { uri: 'viking://user/memories', reason: 'removed' },
    ]);
    const argErr = toDomainError(new InvalidArgumentError('Search query or image_url must not be empty.'));
    expect([argErr?.code, argErr?.message, argErr?.status]).toEqual(['INVALID_ARGUMENT', 'Search query or image_url must not be empty.', 400]);
    const d = unauthenticated('x');
    expect(toDomainError(d)).toBe(d);
  });

  it('returns null for anything else', () => {
    expect(toDomainError(new Error('boom'))).toBeNull();
    expect(toDomainError('boom')).toBeNull();
  });
});
