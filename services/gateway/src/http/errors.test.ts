import { InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';
import { Code, CtxError } from '@ctxmesh/rpc';
import { AwaitDoneAbortedError } from '@ctxmesh/stores';
import { DomainError, RequestValidationError, unsupportedMediaType } from '../domain';
import { renderCtxError, renderError } from './errors';

describe('renderCtxError', () => {
  // wanted/got table: downstream code → HTTP status and error.code.
  it.each<[Code, number, string]>([
    [Code.DEADLINE_EXCEEDED, 504, 'DEADLINE_EXCEEDED'],
    [Code.UNAVAILABLE, 503, 'UNAVAILABLE'],
    [Code.CANCELLED, 499, 'CANCELLED'],
    [Code.NOT_FOUND, 404, 'NOT_FOUND'],
    [Code.PERMISSION_DENIED, 403, 'PERMISSION_DENIED'],
    [Code.ALREADY_EXISTS, 409, 'ALREADY_EXISTS'],
    [Code.RESOURCE_EXHAUSTED, 429, 'RESOURCE_EXHAUSTED'],
    [Code.FAILED_PRECONDITION, 412, 'FAILED_PRECONDITION'],
    [Code.UNIMPLEMENTED, 501, 'UNIMPLEMENTED'],
    [Code.INTERNAL, 500, 'INTERNAL'],
  ])('code %p → HTTP %p %p with reason, domain and request id', (code, status, name) => {
    const r = renderCtxError(new CtxError(code, 'SOME_REASON', 'downstream said so', { domain: 'orchestrator', metadata: { k: 'v' } }), 'req-1');
    expect(r.status).toBe(status);
    expect(r.body).toEqual({
      status: 'error',
      result: null,
      error: {
        code: name,
        message: code === Code.INTERNAL ? 'internal error' : 'downstream said so',
        details: { reason: 'SOME_REASON', domain: 'orchestrator', request_id: 'req-1', metadata: { k: 'v' } },
      },
      telemetry: null,
      profile: null,
    });
  });

  it('renders a downstream INVALID_ARGUMENT as the contract domain error with empty details', () => {
    const r = renderCtxError(new CtxError(Code.INVALID_ARGUMENT, 'EMPTY_QUERY', 'Search query or image_url must not be empty.', { domain: 'gather' }), 'r');
    expect(r).toEqual({
      status: 400,
      fault: false,
      body: { status: 'error', result: null, error: { code: 'INVALID_ARGUMENT', message: 'Search query or image_url must not be empty.', details: {} }, telemetry: null, profile: null },
    });
  });

  it('renders a downstream INVALID_URI reason as INVALID_URI with uri and reason', () => {
    const e = new CtxError(Code.INVALID_ARGUMENT, 'INVALID_URI', 'Invalid URI: viking://x (bad)', { metadata: { uri: 'viking://x', reason: 'bad' } });
    const r = renderCtxError(e, 'r');
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: 'INVALID_URI', message: 'Invalid URI: viking://x (bad)', details: { uri: 'viking://x', reason: 'bad' } });
  });

  it('marks only unexpected 5xx as faults', () => {
    expect(renderCtxError(new CtxError(Code.INTERNAL, 'INTERNAL', 'x'), 'r').fault).toBe(true);
    expect(renderCtxError(new CtxError(Code.UNAVAILABLE, 'UNAVAILABLE', 'x'), 'r').fault).toBe(false);
    expect(renderCtxError(new CtxError(Code.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'x'), 'r').fault).toBe(false);
  });
});

describe('renderError', () => {
  it('renders validation errors as envelope variant 1: status and error, no null members', () => {
    const r = renderError(new RequestValidationError([{ loc: ['body', 'x'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' }]), 'r');
    expect(r.status).toBe(400);
    expect(r.body).toStrictEqual({
      status: 'error',
      error: {
        code: 'INVALID_ARGUMENT',
        message: 'Invalid request parameters: body.x: Extra inputs are not permitted',
        details: { validation_errors: [{ loc: ['body', 'x'], message: 'Extra inputs are not permitted', type: 'extra_forbidden' }] },
      },
    });
  });

  it('renders domain errors and kernel rejections as envelope variant 2', () => {
    expect(renderError(new DomainError('NOT_FOUND', 'no such node'), 'r')).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
    expect(renderError(new InvalidUriError('viking://q', 'why'), 'r')).toMatchObject({
      status: 400,
      body: { error: { code: 'INVALID_URI', details: { uri: 'viking://q', reason: 'why' } } },
    });
    expect(renderError(new InvalidArgumentError('bad'), 'r')).toMatchObject({ status: 400, body: { error: { code: 'INVALID_ARGUMENT', message: 'bad' } } });
  });

  it('renders a mesh-side DomainError with the status of its code and its own details', () => {
    const r = renderError(new DomainError('ALREADY_EXISTS', 'URI already exists: viking://resources/a', { uri: 'viking://resources/a' }), 'r');
    expect(r).toEqual({
      status: 409,
      fault: false,
      body: { status: 'error', result: null, error: { code: 'ALREADY_EXISTS', message: 'URI already exists: viking://resources/a', details: { uri: 'viking://resources/a' } }, telemetry: null, profile: null },
    });
  });

  it.each<[DomainError, number, boolean]>([
    [new DomainError('UNAVAILABLE', 'the event bus did not answer; try again', { reason: 'BUS_UNAVAILABLE' }), 503, false],
    [new DomainError('DEADLINE_EXCEEDED', 'write w is queued', { reason: 'WRITE_PENDING' }), 504, false],
    [new DomainError('RESOURCE_EXHAUSTED', 'Request body is larger than the limit of 8 bytes', { reason: 'BODY_TOO_LARGE' }), 413, false],
    [new DomainError('INTERNAL', 'write w failed (EMBEDDER_CRASHED)', { reason: 'EMBEDDER_CRASHED' }), 500, true],
  ])('renders %p with status %p (fault %p)', (e, status, fault) => {
    expect(renderError(e, 'r')).toMatchObject({ status, fault, body: { error: { code: e.code, message: e.message, details: e.details } } });
  });

  it('renders an unreadable media type as a 415 naming application/json', () => {
    expect(renderError(unsupportedMediaType('text/plain', 'r-7'), 'r-7')).toEqual({
      status: 415,
      fault: false,
      body: {
        status: 'error',
        result: null,
        error: {
          code: 'INVALID_ARGUMENT',
          message: "Unsupported Content-Type 'text/plain': send the body as application/json",
          details: { reason: 'UNSUPPORTED_MEDIA_TYPE', domain: 'gateway', request_id: 'r-7', content_type: 'text/plain', accepted: ['application/json'] },
        },
        telemetry: null,
        profile: null,
      },
    });
  });

  it('unwraps the budget error behind an aborted done-notice wait', () => {
    const e = new AwaitDoneAbortedError('w1', new CtxError(Code.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'deadline exceeded'));
    expect(renderError(e, 'r')).toMatchObject({ status: 504, body: { error: { code: 'DEADLINE_EXCEEDED' } } });
  });

  it("keeps Fastify's own 4xx status", () => {
    const e = Object.assign(new Error('Request body is too large'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' });
    expect(renderError(e, 'r')).toMatchObject({
      status: 413,
      fault: false,
      body: { status: 'error', error: { code: 'RESOURCE_EXHAUSTED', details: { reason: 'FST_ERR_CTP_BODY_TOO_LARGE', request_id: 'r' } } },
    });
  });

  it('hides anything else behind a generic 500', () => {
    const r = renderError(new TypeError('secret detail'), 'req-9');
    expect(r.status).toBe(500);
    expect(r.fault).toBe(true);
    expect(r.body.error).toEqual({ code: 'INTERNAL', message: 'internal error', details: { reason: 'INTERNAL', domain: 'gateway', request_id: 'req-9' } });
    expect(JSON.stringify(r.body)).not.toContain('secret');
  });
});
