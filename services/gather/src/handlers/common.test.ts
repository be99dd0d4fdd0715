import { EmbedderHttpError, EmbedderResponseError } from '@ctxmesh/embedder';
import { EMPTY_QUERY_MESSAGE, InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';
import { common } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';
import { InvalidFilterError } from '../domain/filter';
import { imageOnlyRejection } from '../domain/rejections';
import { AccessDeniedError } from '@ctxmesh/stores';
import { asOfMs, scopeOf, toWireError } from './common';

const id = (over: Partial<common.Identity> = {}): common.Identity => ({
  accountId: 'acme',
  userId: 'alice',
  role: common.Role.ROLE_USER,
  actorPeerId: '',
  workspace: '',
  requestId: '',
  ...over,
});

function wire(e: unknown): CtxError {
  try {
    toWireError(e);
  } catch (out) {
    return out as CtxError;
  }
  throw new Error('toWireError returned');
}

describe('scopeOf', () => {
  it('builds the caller scope, blank actor peer and workspace meaning none', () => {
    expect(scopeOf(id({ actorPeerId: ' bob ', workspace: '' }))).toEqual({ account: 'acme', user: 'alice', role: 'user', actorPeer: 'bob', workspace: null });
    expect(scopeOf(id({ workspace: 'proj', role: common.Role.ROLE_ROOT }))).toMatchObject({ workspace: 'proj', role: 'root', actorPeer: null });
  });

  it('rejects a missing identity, account or user', () => {
    for (const bad of [undefined, id({ accountId: '' }), id({ userId: ' ' })]) {
      expect(() => scopeOf(bad)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'MISSING_IDENTITY' }));
    }
  });
});

describe('asOfMs', () => {
  it('is now for "", the instant for an ISO time, and INVALID_ARGUMENT otherwise', () => {
    expect(asOfMs('', () => 42)).toBe(42);
    expect(asOfMs('2026-01-02T03:04:05.000Z', () => 42)).toBe(Date.parse('2026-01-02T03:04:05.000Z'));
    expect(() => asOfMs('soon', () => 42)).toThrow(expect.objectContaining({ code: Code.INVALID_ARGUMENT, reason: 'BAD_AS_OF' }));
  });
});

describe('toWireError', () => {
  it('maps rejections to INVALID_ARGUMENT with their reason and message verbatim', () => {
    expect(wire(new InvalidArgumentError(EMPTY_QUERY_MESSAGE))).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'EMPTY_QUERY', message: EMPTY_QUERY_MESSAGE });
    expect(wire(imageOnlyRejection('m'))).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'IMAGE_QUERY_UNSUPPORTED' });
    expect(wire(new InvalidUriError('viking://x', 'bad'))).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'INVALID_URI', message: 'Invalid URI: viking://x (bad)' });
    expect(wire(new InvalidArgumentError('other'))).toMatchObject({ reason: 'INVALID_ARGUMENT' });
  });

  it('maps filter refusals, forbidden targets and an unreachable embedder', () => {
    expect(wire(new InvalidFilterError('nope'))).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_FILTER' });
    expect(wire(Object.assign(new Error('x'), { name: 'UnsupportedFilterError' }))).toMatchObject({ code: Code.INVALID_ARGUMENT, reason: 'BAD_FILTER' });
    expect(wire(new AccessDeniedError('viking://user/carol'))).toMatchObject({ code: Code.PERMISSION_DENIED, reason: 'ACCESS_DENIED', metadata: { uri: 'viking://user/carol' } });
    expect(wire(new EmbedderHttpError(503, ''))).toMatchObject({ code: Code.UNAVAILABLE, reason: 'EMBEDDER_UNAVAILABLE' });
  });

  it('rethrows anything else unchanged (the adapter makes it INTERNAL)', () => {
    const bad = new EmbedderResponseError('garbage');
    expect(wire(bad)).toBe(bad);
    const ctx = new CtxError(Code.NOT_FOUND, 'X', 'y');
    expect(wire(ctx)).toBe(ctx);
  });
});
