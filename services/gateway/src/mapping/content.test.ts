import { indexer } from '@ctxmesh/proto';
import { DomainError, validateWriteBody, type Caller } from '../domain';
import { deleteOp, writeOp, writeOutcome } from './content';

const user = { userId: 'alice', role: 'user' as const };
const caller: Caller = { accountId: 'acme', userId: 'alice', role: 'user', actorPeerId: 'p1', requestId: 'r-1', workspace: 'proj' };

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
