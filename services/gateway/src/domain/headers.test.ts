import { DomainError } from './errors';
import { actorPeerFrom, apiKeyFrom, headerValue, requestIdFrom, resolveIdentity, workspaceOf, type AuthConfig, type HeaderBag } from './headers';

const fixedId = () => '00000000-0000-4000-8000-000000000000';

function domainError(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('expected a DomainError');
}

const keys: AuthConfig = {
  mode: 'api_key',
  keys: { 'k-alice': { accountId: 'acme', userId: 'alice' }, 'k-root': { accountId: 'acme', userId: 'ops', role: 'root' } },
};

describe('headerValue', () => {
  it.each<[HeaderBag, string | null]>([
    [{ 'x-openviking-user': '  bob ' }, 'bob'],
    [{ 'X-OpenViking-User': 'bob' }, 'bob'],
    [{ 'x-openviking-user': '   ' }, null],
    [{ 'x-openviking-user': ['first', 'second'] }, 'first'],
    [{}, null],
  ])('%j → %p', (headers, expected) => {
    expect(headerValue(headers, 'x-openviking-user')).toBe(expected);
  });
});

describe('apiKeyFrom', () => {
  it.each<[HeaderBag, string | null]>([
    [{ 'x-api-key': 'k1' }, 'k1'],
    [{ authorization: 'Bearer k2' }, 'k2'],
    [{ authorization: 'bearer   k2  ' }, 'k2'],
    [{ 'x-api-key': 'k1', authorization: 'Bearer k2' }, 'k1'],
    [{ 'x-api-key': '  ', authorization: 'Bearer k2' }, 'k2'],
    [{ authorization: 'Basic abc' }, null],
    [{ authorization: 'Bearer ' }, null],
    [{}, null],
  ])('%j → %p', (headers, expected) => {
    expect(apiKeyFrom(headers)).toBe(expected);
  });
});

describe('resolveIdentity', () => {
  it.each<[string, AuthConfig, HeaderBag, object]>([
    ['dev defaults to default/default as root', { mode: 'dev' }, {}, { accountId: 'default', userId: 'default', role: 'root' }],
    ['dev honours identity headers', { mode: 'dev' }, { 'x-openviking-account': ' acme ', 'x-openviking-user': 'bob' }, { accountId: 'acme', userId: 'bob', role: 'root' }],
    ['dev treats blank headers as absent', { mode: 'dev' }, { 'x-openviking-user': '  ' }, { userId: 'default' }],
    ['dev ignores a role header', { mode: 'dev' }, { 'x-openviking-role': 'user' }, { role: 'root' }],
    ['api_key maps the key', keys, { 'x-api-key': 'k-alice' }, { accountId: 'acme', userId: 'alice', role: 'user' }],
    ['api_key takes a Bearer key', keys, { authorization: 'Bearer k-root' }, { accountId: 'acme', userId: 'ops', role: 'root' }],
    ['api_key: X-API-Key wins over Bearer', keys, { 'x-api-key': 'k-alice', authorization: 'Bearer k-root' }, { userId: 'alice' }],
    [
      'api_key ignores identity headers',
      keys,
      { 'x-api-key': 'k-alice', 'x-openviking-account': 'evil', 'x-openviking-user': 'mallory', 'x-openviking-role': 'root' },
      { accountId: 'acme', userId: 'alice', role: 'user' },
    ],
    [
      'api_key accepts a Map',
      { mode: 'api_key', keys: new Map([['m', { accountId: 'a', userId: 'u', role: 'admin' as const }]]) },
      { 'x-api-key': 'm' },
      { accountId: 'a', userId: 'u', role: 'admin' },
    ],
    ['trusted takes identity headers, role user by default', { mode: 'trusted' }, { 'x-openviking-account': 'acme', 'x-openviking-user': 'carol' }, { accountId: 'acme', userId: 'carol', role: 'user' }],
    ['trusted honours a role header', { mode: 'trusted' }, { 'x-openviking-account': 'acme', 'x-openviking-user': 'carol', 'x-openviking-role': 'ADMIN' }, { role: 'admin' }],
  ])('%s', (_t, auth, headers, expected) => {
    expect(resolveIdentity(headers, auth, fixedId)).toMatchObject({ actorPeerId: null, requestId: fixedId(), ...expected });
  });

  it.each<[string, AuthConfig, HeaderBag, string, number]>([
    ['api_key without a key', keys, { 'x-openviking-user': 'alice' }, 'UNAUTHENTICATED', 401],
    ['api_key with an unknown key', keys, { 'x-api-key': 'nope' }, 'UNAUTHENTICATED', 401],
    ['api_key with a prototype name as key', keys, { 'x-api-key': 'constructor' }, 'UNAUTHENTICATED', 401],
    ['api_key with a blank key', keys, { 'x-api-key': '   ' }, 'UNAUTHENTICATED', 401],
    ['trusted without a user', { mode: 'trusted' }, { 'x-openviking-account': 'acme' }, 'UNAUTHENTICATED', 401],
    ['trusted without an account', { mode: 'trusted' }, { 'x-openviking-user': 'u' }, 'UNAUTHENTICATED', 401],
    ['trusted with an unknown role', { mode: 'trusted' }, { 'x-openviking-account': 'a', 'x-openviking-user': 'u', 'x-openviking-role': 'god' }, 'INVALID_ARGUMENT', 400],
    ['a user id that would escape the user root', { mode: 'dev' }, { 'x-openviking-user': '../alice' }, 'INVALID_ARGUMENT', 400],
    ['a bad actor peer', { mode: 'dev' }, { 'x-openviking-actor-peer': 'a/b' }, 'INVALID_ARGUMENT', 400],
  ])('rejects %s', (_t, auth, headers, code, status) => {
    const e = domainError(() => resolveIdentity(headers, auth, fixedId));
    expect([e.code, e.status]).toEqual([code, status]);
  });

  it('checks authentication before the actor peer', () => {
    const e = domainError(() => resolveIdentity({ 'x-openviking-actor-peer': '..' }, keys, fixedId));
    expect(e.code).toBe('UNAUTHENTICATED');
  });

  it('carries the actor peer without changing the user', () => {
    expect(resolveIdentity({ 'x-openviking-actor-peer': ' -home-dev-proj ' }, { mode: 'dev' }, fixedId)).toEqual({
      accountId: 'default',
      userId: 'default',
      role: 'root',
      actorPeerId: '-home-dev-proj',
      requestId: fixedId(),
    });
  });
});

describe('actorPeerFrom', () => {
  it.each<[string | undefined, string | null]>([
    [undefined, null],
    ['', null],
    ['   ', null],
    ['current', 'current'],
    [' current ', 'current'],
    ['dev@laptop', 'dev@laptop'],
    ['a.b_c-d', 'a.b_c-d'],
    ['-home-dev-proj', '-home-dev-proj'],
    ['...', '...'],
  ])('accepts %p → %p', (value, expected) => {
    expect(actorPeerFrom(value === undefined ? {} : { 'x-openviking-actor-peer': value })).toBe(expected);
  });

  it.each(['a/b', 'a\\b', '.', '..', 'a@b@c', 'has space', 'naïve', 'a,b', 'peer:1'])('rejects %p with INVALID_ARGUMENT', (value) => {
    const e = domainError(() => actorPeerFrom({ 'x-openviking-actor-peer': value }));
    expect(e.code).toBe('INVALID_ARGUMENT');
    expect(e.status).toBe(400);
    expect(e.message).toContain(`'${value}'`);
    expect(e.message).toContain('X-OpenViking-Actor-Peer');
  });
});

describe('requestIdFrom', () => {
  it.each<[HeaderBag, string]>([
    [{ 'x-request-id': 'abc-123' }, 'abc-123'],
    [{ 'X-Request-ID': 'trace:1.2_3' }, 'trace:1.2_3'],
    [{ 'x-request-id': 'a'.repeat(128) }, 'a'.repeat(128)],
    [{ 'x-request-id': 'a'.repeat(129) }, 'fresh'],
    [{ 'x-request-id': 'has space' }, 'fresh'],
    [{ 'x-request-id': 'a, b' }, 'fresh'],
    [{ 'x-request-id': ['a', 'b'] }, 'fresh'],
    [{ 'x-request-id': ['only'] }, 'only'],
    [{ 'x-request-id': '' }, 'fresh'],
    [{}, 'fresh'],
  ])('%j → %p', (headers, expected) => {
    expect(requestIdFrom(headers, () => 'fresh')).toBe(expected);
  });

  it('generates a UUID4 by default', () => {
    expect(requestIdFrom({})).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('workspaceOf', () => {
  it('prefers the body, then X-Workspace, then the default', () => {
    expect(workspaceOf({ 'X-Workspace': 'team-a' }, 'proj')).toBe('proj');
    expect(workspaceOf({ 'x-workspace': ' team-a ' }, null)).toBe('team-a');
    expect(workspaceOf({})).toBe('');
  });

  it('rejects a value that is not a slug', () => {
    expect(domainError(() => workspaceOf({ 'x-workspace': '../x' })).code).toBe('INVALID_ARGUMENT');
  });
});
