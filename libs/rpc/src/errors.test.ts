import { Metadata, status, type ServiceError } from '@grpc/grpc-js';
import { translate } from './client';
import { CtxError, errorDetailsOf, httpStatusOf, toStatus } from './errors';

function serviceError(code: number, details: string, metadata = new Metadata()): ServiceError {
  return Object.assign(new Error(details), { code, details, metadata });
}

describe('error model', () => {
  it('round-trips reason, domain and metadata through grpc-status-details-bin', () => {
    const st = toStatus(new CtxError(status.INVALID_ARGUMENT, 'EMPTY_QUERY', 'Search query or image_url must not be empty.', { metadata: { field: 'query' } }), 'gather');
    expect(st.code).toBe(status.INVALID_ARGUMENT);
    expect(st.details).toBe('Search query or image_url must not be empty.');
    const details = errorDetailsOf({ metadata: st.metadata! });
    expect(details).toEqual({ reason: 'EMPTY_QUERY', domain: 'gather', metadata: { field: 'query' } });
  });

  it('returns null details when the trailer is absent or garbage', () => {
    expect(errorDetailsOf({ metadata: new Metadata() })).toBeNull();
    const md = new Metadata();
    md.set('grpc-status-details-bin', Buffer.from([0xff, 0xff, 0xff]));
    expect(errorDetailsOf({ metadata: md })).toBeNull();
  });

  it.each([
    [status.INVALID_ARGUMENT, 400],
    [status.UNAUTHENTICATED, 401],
    [status.PERMISSION_DENIED, 403],
    [status.NOT_FOUND, 404],
    [status.ALREADY_EXISTS, 409],
    [status.ABORTED, 409],
    [status.FAILED_PRECONDITION, 412],
    [status.RESOURCE_EXHAUSTED, 429],
    [status.CANCELLED, 499],
    [status.INTERNAL, 500],
    [status.UNIMPLEMENTED, 501],
    [status.UNAVAILABLE, 503],
    [status.DEADLINE_EXCEEDED, 504],
  ])('maps gRPC code %i to HTTP %i', (code, http) => {
    expect(httpStatusOf(code)).toBe(http);
  });

  it('passes DEADLINE_EXCEEDED, CANCELLED and UNAVAILABLE through a client', () => {
    for (const code of [status.DEADLINE_EXCEEDED, status.CANCELLED, status.UNAVAILABLE]) {
      expect(translate(serviceError(code, 'x'), { domain: 'gather' }).code).toBe(code);
    }
  });

  it('turns a downstream INVALID_ARGUMENT into INTERNAL unless the caller lists it', () => {
    const st = toStatus(new CtxError(status.INVALID_ARGUMENT, 'EMPTY_QUERY', 'empty'), 'gather');
    const err = serviceError(status.INVALID_ARGUMENT, 'empty', st.metadata);
    const hidden = translate(err, { domain: 'gather' });
    expect(hidden.code).toBe(status.INTERNAL);
    expect(hidden.message).toBe('gather failed');
    expect(hidden.metadata.downstream_reason).toBe('EMPTY_QUERY');
    const passed = translate(err, { domain: 'gather', pass: [status.INVALID_ARGUMENT] });
    expect(passed.code).toBe(status.INVALID_ARGUMENT);
    expect(passed.reason).toBe('EMPTY_QUERY');
    expect(passed.message).toBe('empty');
  });
});
