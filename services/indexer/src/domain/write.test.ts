import { common, indexer } from '@ctxmesh/proto';
import { MalformedWriteError, decodeWriteOp, validateWrite } from './write';

function op(over: Partial<indexer.WriteOp> = {}): indexer.WriteOp {
  return {
    writeId: 'w1',
    identity: { accountId: 'acme', userId: 'alice', role: common.Role.ROLE_USER, actorPeerId: '', workspace: '', requestId: '' },
    uri: 'viking://resources/docs/a.md',
    content: 'hello',
    mode: indexer.WriteMode.WRITE_MODE_REPLACE,
    validFromMs: undefined,
    validToMs: undefined,
    tags: [],
    publishedAtMs: 0,
    subject: '',
    ...over,
  };
}

function malformed(o: indexer.WriteOp): MalformedWriteError {
  try {
    validateWrite(o);
  } catch (err) {
    if (err instanceof MalformedWriteError) return err;
    throw err;
  }
  throw new Error('expected MalformedWriteError');
}

describe('validateWrite', () => {
  it('normalises a write: unset mode is replace, default workspace, URI trimmed', () => {
    expect(validateWrite(op({ mode: indexer.WriteMode.WRITE_MODE_UNSPECIFIED, uri: ' viking://resources/docs/a.md/ ' }))).toEqual({
      writeId: 'w1',
      kind: 'replace',
      uri: 'viking://resources/docs/a.md',
      content: 'hello',
      account: 'acme',
      user: 'alice',
      workspace: 'default',
      subject: '',
      tags: [],
      validFrom: null,
      validTo: null,
    });
  });

  it('expands the ~ alias with the writer and derives a memory subject from the URI', () => {
    const w = validateWrite(op({ uri: 'viking://~/memories/events/e.md' }));
    expect(w.uri).toBe('viking://user/alice/memories/events/e.md');
    expect(w.subject).toBe('alice');
    expect(validateWrite(op({ uri: 'viking://~/memories/events/e.md', subject: 'carol' })).subject).toBe('carol');
  });

  it('maps every mode and drops the content of a delete', () => {
    expect(validateWrite(op({ mode: indexer.WriteMode.WRITE_MODE_APPEND })).kind).toBe('append');
    expect(validateWrite(op({ mode: indexer.WriteMode.WRITE_MODE_CREATE })).kind).toBe('create');
    expect(validateWrite(op({ mode: indexer.WriteMode.WRITE_MODE_DELETE }))).toMatchObject({ kind: 'delete', content: '' });
    expect(malformed(op({ mode: 42 as indexer.WriteMode })).field).toBe('mode');
  });

  it('uses the transport id when the op has none', () => {
    expect(validateWrite(op({ writeId: '' }), 'msg-7').writeId).toBe('msg-7');
  });

  it('refuses a missing account, bad URIs and scope roots', () => {
    expect(malformed(op({ identity: undefined })).field).toBe('identity');
    expect(malformed(op({ uri: 'https://example.com/a' })).field).toBe('uri');
    expect(malformed(op({ uri: 'viking://nope/a.md' })).field).toBe('uri');
    expect(malformed(op({ uri: 'viking://resources/a.md#p1' })).field).toBe('uri');
    expect(malformed(op({ uri: 'viking://resources' })).field).toBe('uri');
    expect(malformed(op({ uri: 'viking://user/alice', mode: indexer.WriteMode.WRITE_MODE_DELETE })).field).toBe('uri');
    expect(malformed(op({ uri: 'viking://resources/../x' })).field).toBe('uri');
  });

  it('carries validity bounds (ms) and refuses reversed ones', () => {
    const w = validateWrite(op({ validFromMs: Date.parse('2025-01-01T00:00:00Z'), validToMs: Date.parse('2025-02-01T10:30:00Z') }));
    expect(w.validFrom).toBe(Date.parse('2025-01-01T00:00:00Z'));
    expect(w.validTo).toBe(Date.parse('2025-02-01T10:30:00Z'));
    expect(malformed(op({ validFromMs: Date.parse('2025-03-01'), validToMs: Date.parse('2025-02-01') })).field).toBe('valid_to');
  });

  // The gateway answers 400 for the same interval: one rule (the kernel's), one outcome.
  it('refuses an empty validity interval (valid_from == valid_to: valid at no instant)', () => {
    const e = malformed(op({ validFromMs: Date.parse('2025-02-01'), validToMs: Date.parse('2025-02-01') }));
    expect([e.field, e.message]).toEqual(['valid_to', 'valid_from must be earlier than valid_to']);
  });

  it('normalises tags: trimmed, lower-cased, a later value wins at the first position', () => {
    expect(validateWrite(op({ tags: ['Env=Prod', ' env=prod ', 'team=Search', 'env=dev'] })).tags).toEqual(['env=dev', 'team=search']);
  });

  // Dropping them silently stored a node without the tags its writer filters by; the gateway
  // refuses the same tags with a 400.
  it.each(['bad', 'a=b=c', '=x', 'y='])('refuses a write with the tag %p, which is not strict k=v', (tag) => {
    const e = malformed(op({ tags: ['team=search', tag] }));
    expect(e.field).toBe('tags');
    expect(e.message).toContain(`'${tag}'`);
  });

  it('refuses a passage URI and a user root with the reason the gateway gives', () => {
    expect(malformed(op({ uri: 'viking://resources/a.md#p1' })).message).toBe("Invalid URI: viking://resources/a.md#p1 ('#' is reserved for passage URIs)");
    expect(malformed(op({ uri: 'viking://~' })).message).toBe('Invalid URI: viking://user/alice (a write must address a node below a scope root)');
  });
});

describe('decodeWriteOp', () => {
  it('round-trips an encoded op and refuses bytes that are not one', () => {
    const o = op({ tags: ['k=v'] });
    expect(decodeWriteOp(indexer.WriteOp.encode(o).finish())).toEqual(o);
    expect(() => decodeWriteOp(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]))).toThrow(MalformedWriteError);
  });
});
