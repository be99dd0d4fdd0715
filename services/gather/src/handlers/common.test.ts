import { EmbedderHttpError, EmbedderResponseError } from '@ctxmesh/embedder';
import { EMPTY_QUERY_MESSAGE, InvalidArgumentError, InvalidUriError } from '@ctxmesh/kernel';
import { common } from '@ctxmesh/proto';
import { Code, CtxError } from '@ctxmesh/rpc';
import { imageOnlyRejection } from '../domain/rejections';
import { AccessDeniedError } from '@ctxmesh/stores';
import { asOfMs, filterOf, scopeOf, toWireError } from './common';

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
  it('is now when absent, else the instant the gateway read', () => {
    expect(asOfMs(undefined, () => 42)).toBe(42);
    expect(asOfMs(Date.parse('2026-01-02T03:04:05.000Z'), () => 42)).toBe(Date.parse('2026-01-02T03:04:05.000Z'));
  });
});

describe('filterOf', () => {
  it('is null without a tree, and the stores\' tree for every node kind (times in ms)', () => {
    expect(filterOf(undefined)).toBeNull();
    expect(filterOf({ node: undefined })).toBeNull();
    const tree: common.FilterNode = {
      node: {
        $case: 'allOf',
        value: {
          conds: [
            { node: { $case: 'must', value: { field: 'context_type', values: [{ kind: { $case: 'text', value: 'memory' } }, { kind: { $case: 'flag', value: true } }] } } },
            { node: { $case: 'mustNot', value: { field: 'level', values: [{ kind: { $case: 'number', value: 2 } }] } } },
            { node: { $case: 'anyOf', value: { conds: [{ node: { $case: 'prefix', value: { field: 'uri', prefix: 'viking://resources/' } } }] } } },
            { node: { $case: 'range', value: { field: 'level', gte: 0, gt: undefined, lte: undefined, lt: 2 } } },
            { node: { $case: 'timeRange', value: { field: 'updated_at', gteMs: 1000, gtMs: undefined, lteMs: 2000, ltMs: undefined } } },
          ],
        },
      },
    };
    expect(filterOf(tree)).toEqual({
      op: 'and',
      conds: [
        { op: 'must', field: 'context_type', conds: ['memory', true] },
        { op: 'must_not', field: 'level', conds: [2] },
        { op: 'or', conds: [{ op: 'prefix', field: 'uri', prefix: 'viking://resources/' }] },
        { op: 'range', field: 'level', gte: 0, lt: 2 },
        { op: 'time_range', field: 'updated_at', gte: 1000, lte: 2000 },
      ],
    });
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
